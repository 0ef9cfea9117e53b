"""The indicator table: one row per indicator, read by everything that computes or shows one.

A row (``Indicator``) names the indicator, the candle fields it reads, its periods and their
defaults, its conventions (a frozen dataclass, the known variants by short name, the
default), its outputs, its warm-up, its batch kernel (the reference: ``marketframe.
indicators.sma`` ...) and its state-carrying machine (``stateful``). From the row:

* ``df.md`` (``frames``): ``df.md.<name>(...)``, the output columns, the fast path over many
  symbols (``segmented``, optional);
* ``marketframe.options.conventions`` and every ``convention=``;
* ``stateful.spec`` / ``apply``: the periods, the checks, the outputs, the machine;
* ``Store.compute``: the fields a task reads, the kernel, the context kept per symbol
  (``warmup``);
* the live engine (``stream.indicators``): the fields of a bar each machine is fed;
* ``crosscheck``: the kernel, its inputs and the scale (``bounded``) behind a technical
  endpoint's row;
* the charts: where the output columns are drawn (``chart``).

The built-in rows are in ``_rows``; a row registered at run time (``register``) is known to
this process only (a ``Store.compute`` worker process imports the package's own rows).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marketframe.exceptions import ConventionTypeError, DefinitionError, InvalidParams

#: a recursion run from a fresh seed this many bars back differs from the carried one by
#: ``a**bars`` of a price difference: the warm-ups take it below this share of the price
WARMUP_TOL = 1e-18

#: what a kernel returns: its one output, or a tuple of them (its NamedTuple ``result``)
Outputs = NDArray[np.float64] | tuple[NDArray[np.float64], ...]

#: the candle fields an indicator may read, in the order of a candles frame
FIELDS = ("open", "high", "low", "close", "volume")


def field_of(name: Any, fields: tuple[str, ...] = FIELDS) -> str | None:
    """The candle field of ``fields`` a column's name holds, as ``download(...,
    layout="wide")`` spells it: ``close``, ``('close', '2330')`` or ``('2330', 'close')``
    (pandas, either ``group_by``), ``close_2330`` or ``2330_close`` (polars); None for a name
    of no field."""
    parts = name if isinstance(name, tuple) else str(name).split("_")
    return next((str(p).lower() for p in parts if str(p).lower() in fields), None)


def decay_bars(a: float, tol: float = WARMUP_TOL) -> int:
    """Bars after which ``a**bars`` is below ``tol`` (a recursion's start forgotten)."""
    return 1 if a <= 0.0 else int(math.log(tol) / math.log(a)) + 1


@dataclass(frozen=True)
class Period:
    """A parameter of the indicator, in the order the kernel takes them: ``integer`` ones
    (windows, smoothings) are whole numbers >= 1; the others any number (Bollinger's
    ``mult``)."""

    name: str
    default: float
    integer: bool = True

    def text(self, value: float) -> str:
        """The value as it appears in an output column's name (``20``, ``2.5``)."""
        return str(int(value)) if self.integer else f"{value:g}"


@dataclass(frozen=True)
class Chart:
    """Where a chart draws the indicator's columns: over the price (``panel`` None) or in a
    panel of its own below it, with y ticks at ``levels`` (dashed across the panel when
    ``guides``). ``aliases``: other column-name prefixes drawn there too (the service's
    ``k``, ``d``, ``j``)."""

    panel: str | None = None
    levels: tuple[float, ...] = ()
    guides: bool = False
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Indicator:
    """One indicator: every consumer reads what it needs from here (module docstring).

    ``kernel(*inputs, *periods, convention=...)``: the batch kernel, public, the reference
    the others must equal. ``machine(spec)``: a ``stateful.Machine`` (``spec`` an
    ``IndicatorSpec``), its one-bar step. ``outputs``: the stems of the output columns
    (``sma`` -> ``sma_20``; ``bb_upper`` -> ``bb_upper_20_2``), in the kernel's result
    order; ``result``: the kernel's NamedTuple when there are several. ``warmup(params,
    convention)``: bars of history in front of new bars that make the kernel's outputs on
    them equal one pass over the whole history (windows exactly; recursions to
    ``WARMUP_TOL`` of the price). ``check(params, convention)``: raises ``InvalidParams``
    for periods that do not go together (MACD's fast >= slow). ``segmented(segments,
    params, convention, kernel, *inputs)``: an optional fast path over many symbols laid
    end to end (``_segmented``), equal to ``kernel`` on each. ``bounded``: a 0..100
    oscillator (else in price units).
    """

    name: str
    kernel: Callable[..., Outputs]
    machine: Callable[[Any], Any]
    periods: tuple[Period, ...]
    convention: type
    variants: Mapping[str, Any]
    default: str = "talib"
    inputs: tuple[str, ...] = ("close",)
    outputs: tuple[str, ...]
    result: Callable[..., tuple[Any, ...]] | None = None
    warmup: Callable[[tuple[float, ...], Any], int]
    check: Callable[[tuple[float, ...], Any], None] | None = None
    segmented: Callable[..., Outputs] | None = None
    bounded: bool = False
    chart: Chart = field(default_factory=Chart)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variants", MappingProxyType(dict(self.variants)))
        problems = self._problems()
        if problems:
            raise DefinitionError(f"indicator row {self.name!r}: {'; '.join(problems)}")

    def _problems(self) -> list[str]:
        """What contradicts itself in the row (it fails when it is made, naming the field)."""
        out = []
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            out.append("name must be lower case letters, digits and _")
        if not self.inputs or not set(self.inputs) <= set(FIELDS):
            out.append(f"inputs must be some of {FIELDS}")
        if not self.outputs:
            out.append("outputs is empty")
        fields = getattr(self.result, "_fields", ("",) if self.result is None else ())
        if len(fields) != len(self.outputs):
            out.append(f"result {fields} does not match the outputs {self.outputs}")
        if self.default not in self.variants:
            out.append(f"default {self.default!r} is not one of the variants")
        if not dataclasses.is_dataclass(self.convention):
            out.append("convention must be a dataclass")
        elif any(not isinstance(v, self.convention) for v in self.variants.values()):
            out.append(f"every variant must be a {self.convention.__name__}")
        out += self._kernel_problems()
        return out

    def _kernel_problems(self) -> list[str]:
        """The kernel takes the inputs, then the periods by name (with the row's defaults,
        if it has defaults), then ``convention=``."""
        try:
            params = list(inspect.signature(self.kernel).parameters.values())
        except (TypeError, ValueError):
            return []  # a builtin or a C function: nothing to read
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        named = positional[len(self.inputs) :]
        out = []
        if [p.name for p in named] != [p.name for p in self.periods]:
            out.append(f"the kernel's periods {[p.name for p in named]} are not the row's")
        for p, want in zip(named, self.periods, strict=False):
            if p.default is not p.empty and p.default != want.default:
                out.append(f"the kernel's default {p.name}={p.default} is not {want.default}")
        if not any(p.name == "convention" for p in params):
            out.append("the kernel takes no convention=")
        return out

    @property
    def defaults(self) -> tuple[float, ...]:
        """The periods' defaults, in order."""
        return tuple(p.default for p in self.periods)

    def checked(self, params: tuple[float, ...], convention: Any) -> tuple[float, ...]:
        """``params`` with the integer periods as ``int`` (``InvalidParams`` naming the
        first that is not a whole number >= 1), then the row's own ``check``."""
        out = tuple(
            period(v, p.name) if p.integer else v for v, p in zip(params, self.periods, strict=True)
        )
        if self.check is not None:
            self.check(out, convention)
        return out

    def names(self, params: tuple[float, ...]) -> tuple[str, ...]:
        """The output columns for these periods: ``rsi_14``, ``macd_signal_12_26_9``."""
        tag = "_".join(p.text(v) for v, p in zip(params, self.periods, strict=True))
        return tuple(f"{stem}_{tag}" for stem in self.outputs)

    def convention_of(self, convention: object) -> Any:
        """The convention dataclass of ``convention``: None (the row's default), a variant
        name or an instance (``marketframe.indicators.options.resolve`` puts the process-wide
        default in front of this)."""
        if convention is None:
            return self.variants[self.default]
        if isinstance(convention, str):
            if convention not in self.variants:
                raise InvalidParams(
                    self.name,
                    "convention",
                    f"is unknown: {convention!r}",
                    ", ".join(self.variants),
                )
            return self.variants[convention]
        if not isinstance(convention, self.convention):
            raise ConventionTypeError(
                self.name,
                "convention",
                f"must be a {self.convention.__name__}, a variant name or None,"
                f" not {type(convention).__name__}",
            )
        return convention

    def wrap(self, outputs: tuple[Any, ...]) -> Any:
        """The kernel's form of ``outputs``: its NamedTuple, or the one array."""
        return self.result(*outputs) if self.result is not None else outputs[0]


def period(n: Any, name: str = "n", minimum: int = 1) -> int:
    """``n`` as an ``int``, or ``InvalidParams``: a whole number >= ``minimum``."""
    ok = isinstance(n, int | np.integer | float) and not isinstance(n, bool)
    if not ok or int(n) != n or n < minimum:
        raise InvalidParams("indicators", name, f"must be an integer >= {minimum}, got {n!r}")
    return int(n)


_ROWS: dict[str, Indicator] = {}


def register(row: Indicator) -> Indicator:
    """Add ``row`` to the table (``DefinitionError`` if its name is taken); returns it."""
    if row.name in _ROWS:
        raise DefinitionError(f"an indicator named {row.name!r} is already registered")
    _ROWS[row.name] = row
    return row


def names() -> tuple[str, ...]:
    """The registered indicators' names, sorted."""
    return tuple(sorted(_ROWS))


def rows() -> Iterator[Indicator]:
    """The rows, in the order they were registered."""
    return iter(tuple(_ROWS.values()))


def get(name: object) -> Indicator:
    """The row of ``name``, or ``InvalidParams`` naming the known ones."""
    row = _ROWS.get(name) if isinstance(name, str) else None
    if row is None:
        raise InvalidParams("indicators", "indicator", f"is unknown: {name!r}", ", ".join(names()))
    return row


def variants(indicator: str) -> dict[str, Any]:
    """Known convention sets of ``indicator`` by short name; ``"talib"`` is always first."""
    return dict(get(indicator).variants)
