"""What a stateful indicator is: ``IndicatorSpec`` (indicator, periods, resolved convention).

The bottom of ``marketframe.indicators.stateful``: the spec checks its periods and
convention, names its outputs and describes itself as JSON; the machines and the state are
built from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from marketframe.exceptions import InvalidParams

from .. import _registry as registry
from ..options import resolve


@dataclass(frozen=True)
class IndicatorSpec:
    """One indicator with its periods and a resolved convention (build it with ``spec``).

    ``params``: ``sma``/``ema``/``rsi`` ``(n,)``; ``macd`` ``(fast, slow, signal)``;
    ``bbands`` ``(n, mult)``; ``kdj`` ``(n, m1, m2)``. ``convention`` is the dataclass (a
    variant name or None is resolved by ``spec``, None to ``marketframe.options`` at the
    time the spec is made, so a state never changes meaning later).
    """

    indicator: str
    params: tuple[float, ...]
    convention: Any

    def __post_init__(self) -> None:
        row = registry.get(self.indicator)
        if len(self.params) != len(row.periods):
            raise InvalidParams(
                self.indicator, "params", f"takes {len(row.periods)} values, got {len(self.params)}"
            )
        for v, p in zip(self.params, row.periods, strict=True):
            if not p.integer and not math.isfinite(float(v)):
                raise InvalidParams(self.indicator, p.name, f"must be a finite number, got {v!r}")
        if not isinstance(self.convention, row.convention):
            raise InvalidParams(
                self.indicator,
                "convention",
                f"must be a {row.convention.__name__}, got {self.convention!r}",
            )
        params = row.checked(self.params, self.convention)
        params = tuple(
            v if p.integer else float(v) for v, p in zip(params, row.periods, strict=True)
        )
        object.__setattr__(self, "params", params)

    @property
    def row(self) -> registry.Indicator:
        """The indicator's row of the table (``marketframe.indicators.registry``)."""
        return registry.get(self.indicator)

    @property
    def inputs(self) -> tuple[str, ...]:
        """The candle fields the indicator reads, in the order ``apply`` takes them."""
        return self.row.inputs

    @property
    def names(self) -> tuple[str, ...]:
        """Output column names, as ``df.md`` names them (``rsi_14``, ``macd_signal_12_26_9``)."""
        return self.row.names(self.params)

    def to_json(self) -> dict[str, object]:
        """A JSON-able description (indicator, params, convention type and fields)."""
        return {
            "indicator": self.indicator,
            "params": list(self.params),
            "convention": {"type": type(self.convention).__name__, **asdict(self.convention)},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> IndicatorSpec:
        """The spec ``to_json`` described."""
        indicator = str(data["indicator"])
        kind = registry.get(indicator).convention
        raw = data["convention"]
        assert isinstance(raw, Mapping)
        if raw.get("type") != kind.__name__:
            raise InvalidParams(indicator, "convention", f"has the wrong type: {raw.get('type')!r}")
        known = {f.name for f in fields(kind)}
        conv = kind(**{k: v for k, v in raw.items() if k in known})
        params = data["params"]
        assert isinstance(params, list)
        return cls(indicator, tuple(params), conv)


def spec(indicator: str, *params: float, convention: Any = None) -> IndicatorSpec:
    """``spec("rsi")``, ``spec("macd", 12, 26, 9, convention="ema_seed=first")`` ...

    Periods default to the indicator's row (the ``df.md`` defaults: SMA/EMA 20, RSI 14, MACD
    12/26/9, Bollinger 20/2, KDJ 9/3/3); ``convention`` as for the batch kernels (None:
    ``marketframe.options`` now, else the row's default).
    """
    defaults = registry.get(indicator).defaults
    full = tuple(params) + defaults[len(params) :]
    return IndicatorSpec(indicator, full, resolve(indicator, convention))
