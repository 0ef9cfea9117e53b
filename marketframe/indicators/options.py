"""Process-wide defaults of the indicators: ``marketframe.options``.

A user who wants the service's numbers (or any convention other than the built-in ones) sets it
once rather than passing ``convention=`` to every call::

    import marketframe
    marketframe.options.conventions = {"rsi": "rsi_seed=first"}
    marketframe.options.conventions.update(report.conventions)   # from a cross-check
    with marketframe.options.context(conventions={"kdj": "kdj=recursive50"}):
        ...                                                      # restored on exit

Every kernel and every ``md`` method with ``convention=None`` then uses these; an explicit
``convention=`` always wins. Names and dataclasses are checked when they are set.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any

from marketframe.exceptions import InvalidParams, did_you_mean

from . import _registry as registry


class Conventions(MutableMapping[str, Any]):
    """indicator name -> its default convention (a dataclass; set a name or a dataclass)."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        self.update(values or {})

    def __setitem__(self, indicator: str, value: Any) -> None:
        known = [row.name for row in registry.rows()]
        if indicator not in known:
            raise InvalidParams(
                "options.conventions",
                "indicator",
                f"is unknown: {indicator!r}{did_you_mean(str(indicator), known)}",
                ", ".join(known),
            )
        if value is None:
            self._values.pop(indicator, None)
            return
        self._values[indicator] = registry.get(indicator).convention_of(value)

    def __getitem__(self, indicator: str) -> Any:
        return self._values[indicator]

    def __delitem__(self, indicator: str) -> None:
        del self._values[indicator]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Conventions({self._values!r})"


class Options:
    """``marketframe.options``: process-wide defaults (see the module docstring)."""

    def __init__(self) -> None:
        self._conventions = Conventions()

    @property
    def conventions(self) -> Conventions:
        """Default convention per indicator (missing: the built-in one, TA-Lib's but for KDJ)."""
        return self._conventions

    @conventions.setter
    def conventions(self, values: Mapping[str, Any] | None) -> None:
        self._conventions = Conventions(values)  # validated before it replaces anything

    @contextmanager
    def context(self, *, conventions: Mapping[str, Any] | None = None) -> Iterator[Options]:
        """Within the block, ``conventions`` override the current defaults; restored after."""
        saved = self._conventions
        merged = dict(saved)
        merged.update(conventions or {})
        self.conventions = merged
        try:
            yield self
        finally:
            self._conventions = saved

    def __repr__(self) -> str:
        return f"marketframe.options(conventions={dict(self._conventions)!r})"


options = Options()


def resolve(indicator: str, convention: object) -> Any:
    """A convention dataclass from None (``marketframe.options.conventions``, else the
    indicator's default in its row), a variant name, or an instance."""
    if convention is None:
        default = options.conventions.get(indicator)
        if default is not None:
            return default
    return registry.get(indicator).convention_of(convention)
