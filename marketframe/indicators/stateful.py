"""Indicators that carry their state: ``apply(values, spec, state) -> (out, state)``.

The batch kernels (``marketframe.indicators.sma`` ...) compute a whole history at once. The
same indicators here continue from a ``State``: feed a history in chunks of any size, in
order, carrying the state, and the outputs equal one batch pass over the whole history
(to rounding, ~1e-15 of the scale), with the same conventions and the same missing-value
policy (a NaN bar is NaN in every output, and each NaN-free run is its own series).

The state is small and explicit: for each symbol the last ``n-1`` inputs a window needs,
the recursions' accumulators, the length of the current NaN-free run; plus the bar count,
the spec (indicator, periods, convention) and a format version. It serialises to bytes
(``State.to_bytes``: an ``.npz`` of plain arrays and a JSON header, never a pickle) or to a
JSON-able header and a dict of arrays (``State.to_parts``).

A panel ``(bars, symbols)`` advances all symbols together: one bar of 2,000 symbols is one
vectorized step. Cost: a Python step per bar (tens of microseconds), so a long 1-D history
is faster through the batch kernels; use ``apply`` for what comes after it, or warm a state
with ``apply`` over the history once.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marketframe.exceptions import InvalidParams

from ._kernels import BBandsResult, KdjResult, MacdResult
from .conventions import (
    INDICATORS,
    BBandsConvention,
    Convention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    SmaConvention,
)
from .options import resolve

__all__ = [
    "FORMAT_VERSION",
    "IndicatorSpec",
    "Output",
    "State",
    "apply",
    "spec",
    "step",
]

FORMAT_VERSION = 1
_FORMAT = "marketframe.indicators.state"

Array = NDArray[np.float64]
Output: TypeAlias = Array | MacdResult | BBandsResult | KdjResult

_DEFAULTS: dict[str, tuple[float, ...]] = {
    "sma": (20,),
    "ema": (20,),
    "rsi": (14,),
    "macd": (12, 26, 9),
    "bbands": (20, 2.0),
    "kdj": (9, 3, 3),
}
_TYPES: dict[str, type] = {
    "sma": SmaConvention,
    "ema": EmaConvention,
    "rsi": RsiConvention,
    "macd": MacdConvention,
    "bbands": BBandsConvention,
    "kdj": KdjConvention,
}
_PERIODS: dict[str, tuple[str, ...]] = {
    "sma": ("n",),
    "ema": ("n",),
    "rsi": ("n",),
    "macd": ("fast", "slow", "signal"),
    "bbands": ("n",),
    "kdj": ("n", "m1", "m2"),
}
_NOISE = 64.0 * np.finfo(np.float64).eps  # the batch Bollinger's flat-variance threshold


def _int(v: float, name: str) -> int:
    ok = isinstance(v, int | float | np.integer) and not isinstance(v, bool)
    if not ok or int(v) != v or v < 1:
        raise InvalidParams("indicators", name, f"must be an integer >= 1, got {v!r}")
    return int(v)


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
    convention: Convention

    def __post_init__(self) -> None:
        if self.indicator not in _DEFAULTS:
            raise InvalidParams(
                "indicators", "indicator", f"is unknown: {self.indicator!r}", ", ".join(INDICATORS)
            )
        want = len(_DEFAULTS[self.indicator])
        if len(self.params) != want:
            raise InvalidParams(
                self.indicator, "params", f"takes {want} values, got {len(self.params)}"
            )
        names = _PERIODS[self.indicator]
        ints: tuple[float, ...] = tuple(
            _int(v, name) for v, name in zip(self.params, names, strict=False)
        )
        if not isinstance(self.convention, _TYPES[self.indicator]):
            raise InvalidParams(
                self.indicator,
                "convention",
                f"must be a {_TYPES[self.indicator].__name__}, got {self.convention!r}",
            )
        if self.indicator == "macd" and ints[0] >= ints[1]:
            raise InvalidParams("macd", "fast", f"({ints[0]}) must be shorter than slow")
        if self.indicator == "bbands":
            mult = float(self.params[1])
            if not math.isfinite(mult):
                raise InvalidParams("bbands", "mult", f"must be a finite number, got {mult!r}")
            assert isinstance(self.convention, BBandsConvention)
            if ints[0] - self.convention.ddof <= 0:
                raise InvalidParams(
                    "bbands", "n", f"(window {ints[0]}) too short for ddof={self.convention.ddof}"
                )
            ints = ints + (mult,)
        object.__setattr__(self, "params", ints)

    @property
    def inputs(self) -> tuple[str, ...]:
        """The candle fields the indicator reads, in the order ``apply`` takes them."""
        return ("high", "low", "close") if self.indicator == "kdj" else ("close",)

    @property
    def names(self) -> tuple[str, ...]:
        """Output column names, as ``df.md`` names them (``rsi_14``, ``macd_signal_12_26_9``)."""
        p = self.params
        if self.indicator == "macd":
            tag = "_".join(str(int(v)) for v in p)
            return tuple(f"{o}_{tag}" for o in ("macd", "macd_signal", "macd_hist"))
        if self.indicator == "bbands":
            tag = f"{int(p[0])}_{p[1]:g}"
            return tuple(f"bb_{o}_{tag}" for o in ("upper", "middle", "lower"))
        if self.indicator == "kdj":
            tag = "_".join(str(int(v)) for v in p)
            return tuple(f"kdj_{o}_{tag}" for o in "kdj")
        return (f"{self.indicator}_{int(p[0])}",)

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
        if indicator not in _TYPES:
            raise InvalidParams("indicators", "indicator", f"is unknown: {indicator!r}")
        raw = data["convention"]
        assert isinstance(raw, Mapping)
        kind = _TYPES[indicator]
        if raw.get("type") != kind.__name__:
            raise InvalidParams(indicator, "convention", f"has the wrong type: {raw.get('type')!r}")
        known = {f.name for f in fields(kind)}
        conv = kind(**{k: v for k, v in raw.items() if k in known})
        params = data["params"]
        assert isinstance(params, list)
        return cls(indicator, tuple(params), conv)


def spec(
    indicator: str, *params: float, convention: Convention | str | None = None
) -> IndicatorSpec:
    """``spec("rsi")``, ``spec("macd", 12, 26, 9, convention="ema_seed=first")`` ...

    Periods default to the ``df.md`` defaults (SMA/EMA 20, RSI 14, MACD 12/26/9, Bollinger
    20/2, KDJ 9/3/3); ``convention`` as for the batch kernels (None: ``marketframe.options``
    now, else TA-Lib's).
    """
    if indicator not in _DEFAULTS:
        raise InvalidParams(
            "indicators", "indicator", f"is unknown: {indicator!r}", ", ".join(INDICATORS)
        )
    defaults = _DEFAULTS[indicator]
    full = tuple(params) + defaults[len(params) :]
    return IndicatorSpec(indicator, full, resolve(indicator, convention, _TYPES[indicator]))


# ---------------------------------------------------------------------------------------
# the per-indicator machines: arrays over symbols, one step per bar


class _Machine:
    """One indicator's state layout and its one-bar step (all symbols at once).

    ``rings``: name -> length of a ring of the last inputs (``(length, symbols)``; the row
    of bar ``b`` is ``b % length``); ``scalars``: name -> (dtype, initial value), one per
    symbol. ``step`` reads the bar's inputs (one value per symbol), writes one row per
    output, and updates the state arrays in place.
    """

    outputs = 1

    def __init__(self, spec: IndicatorSpec) -> None:
        self.spec = spec
        self.rings: dict[str, int] = {}
        self.scalars: dict[str, tuple[type, float]] = {}

    def step(self, s: dict[str, NDArray[np.generic]], bar: int, x: tuple[Array, ...],
             out: tuple[Array, ...]) -> None:  # fmt: skip
        raise NotImplementedError


def _push(ring: Array, bar: int, v: Array) -> None:
    if ring.shape[0]:
        ring[bar % ring.shape[0]] = v


def _window_sum(ring: Array, x: Array) -> Array:
    """Sum of the ring (the last inputs) and ``x``: NaN if any is NaN (window policy)."""
    return ring.sum(axis=0) + x if ring.shape[0] else x.copy()


def _last(ring: Array, bar: int, k: int) -> Array:
    """The ``k`` inputs before bar ``bar`` (k <= ring length), as rows."""
    w = ring.shape[0]
    return ring[[(bar - j) % w for j in range(1, k + 1)]]


def _ema(
    y: Array,
    x: Array,
    pos: NDArray[np.int64],
    n: int,
    start: int,
    seed: str,
    window: Callable[[], Array],
) -> Array:
    """One step of an EMA(n) restarted on every run: valid from run position ``start``,
    seeded there with the mean of the window ``window()`` (seed "sma") or with ``x`` (seed
    "first", start 0); ``y`` updated in place, returned (NaN before the seed)."""
    k = 2.0 / (n + 1)
    new = (1.0 - k) * y + k * x
    at = pos == start
    if at.any():
        seeded = x if seed == "first" else window() * (1.0 / n)
        np.copyto(new, seeded, where=at)
    new[pos < start] = np.nan
    y[...] = new
    return new


class _Sma(_Machine):
    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        self.n = int(spec.params[0])
        self.rings = {"x": self.n - 1}

    def step(self, s, bar, x, out):  # type: ignore[no-untyped-def]
        (v,) = x
        ring = s["x"]
        np.multiply(_window_sum(ring, v), 1.0 / self.n, out=out[0])
        _push(ring, bar, v)


def _run(
    s: dict[str, NDArray[np.generic]], valid: NDArray[np.bool_], key: str = "run"
) -> NDArray[np.int64]:
    """Length of the current NaN-free run including this bar (0 on a NaN bar), stored."""
    run: NDArray[np.int64] = s[key]  # type: ignore[assignment]
    run += 1
    run[~valid] = 0
    return run


class _Ema(_Machine):
    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, EmaConvention)
        self.n, self.seed = int(spec.params[0]), conv.seed
        self.start = self.n - 1 if self.seed == "sma" else 0
        self.rings = {"x": self.n - 1 if self.seed == "sma" else 0}
        self.scalars = {"run": (np.int64, 0), "y": (np.float64, np.nan)}

    def step(self, s, bar, x, out):  # type: ignore[no-untyped-def]
        (v,) = x
        ring = s["x"]
        pos = _run(s, ~np.isnan(v)) - 1
        out[0][...] = _ema(s["y"], v, pos, self.n, self.start, self.seed,
                           lambda: _window_sum(ring, v))  # fmt: skip
        _push(ring, bar, v)


class _Rsi(_Machine):
    """Wilder averages ``g``/``l`` of gains and losses; during the "sma" seed window they
    hold the running sums of the first changes of the run."""

    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, RsiConvention)
        self.n, self.seed, self.flat = int(spec.params[0]), conv.seed, conv.flat
        self.start = self.n - 1 if self.seed == "sma" else 0
        self.scalars = {
            "prev": (np.float64, np.nan),
            "run": (np.int64, 0),
            "g": (np.float64, np.nan),
            "l": (np.float64, np.nan),
        }

    def step(self, s, bar, x, out):  # type: ignore[no-untyped-def]
        (v,) = x
        d = v - s["prev"]
        s["prev"][...] = v
        cpos = _run(s, ~np.isnan(v)) - 2  # position of this change in its run of changes
        n, a, start = self.n, (self.n - 1.0) / self.n, self.start
        res = out[0]
        for key, move in (("g", np.maximum(d, 0.0)), ("l", np.maximum(-d, 0.0))):
            acc = s[key]
            new = a * acc + move / n
            if self.seed == "first":
                np.copyto(new, move, where=cpos == 0)
            else:
                np.copyto(new, acc + move, where=(cpos > 0) & (cpos <= start))
                np.copyto(new, move, where=cpos == 0)
                at = cpos == start
                new[at] /= n
            new[cpos < 0] = np.nan
            acc[...] = new
        g, lo = s["g"], s["l"]
        total = g + lo
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(100.0 * g, total, out=res)
        res[total == 0.0] = self.flat
        res[cpos < start] = np.nan


class _Macd(_Machine):
    """Fast and slow EMAs ``f``/``s`` and the signal ``g`` (the running sum of the line
    during the signal's "sma" seed window); ``run``: the price run."""

    outputs = 3

    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, MacdConvention)
        fast, slow, sig = (int(p) for p in spec.params)
        self.fast, self.slow, self.sig, self.seed = fast, slow, sig, conv.seed
        if conv.seed == "first":
            self.fast_start = self.slow_start = self.sig_start = 0
        else:
            self.fast_start = slow - 1 if conv.align == "slow" else fast - 1
            self.slow_start, self.sig_start = slow - 1, sig - 1
        self.line_start = max(self.fast_start, self.slow_start)
        self.rings = {"x": slow - 1 if conv.seed == "sma" else 0}
        self.scalars = {
            "run": (np.int64, 0),
            "f": (np.float64, np.nan),
            "s": (np.float64, np.nan),
            "g": (np.float64, np.nan),
        }

    def step(self, s, bar, x, out):  # type: ignore[no-untyped-def]
        (v,) = x
        ring = s["x"]
        pos = _run(s, ~np.isnan(v)) - 1

        def last(k: int) -> Callable[[], Array]:
            return lambda: _last(ring, bar, k - 1).sum(axis=0) + v if k > 1 else v.copy()

        f = _ema(s["f"], v, pos, self.fast, self.fast_start, self.seed, last(self.fast))
        sl = _ema(s["s"], v, pos, self.slow, self.slow_start, self.seed, last(self.slow))
        line = f - sl
        lpos = pos - self.line_start
        g = s["g"]
        sig = self.sig
        kg = 2.0 / (sig + 1)
        new = (1.0 - kg) * g + kg * line
        if self.seed == "first":
            np.copyto(new, line, where=lpos == 0)
        else:
            np.copyto(new, g + line, where=(lpos > 0) & (lpos <= self.sig_start))
            np.copyto(new, line, where=lpos == 0)
            at = lpos == self.sig_start
            new[at] *= 1.0 / sig
        new[lpos < 0] = np.nan
        g[...] = new
        line_out, sig_out, hist_out = out
        line_out[...] = line
        sig_out[...] = new
        sig_out[lpos < self.sig_start] = np.nan
        np.subtract(line_out, sig_out, out=hist_out)
        _push(ring, bar, v)


class _BBands(_Machine):
    """The last ``n-1`` closes and ``ref``, the first close ever seen (the batch kernel
    takes the moments of ``close - ref``: its flat-window threshold depends on it)."""

    outputs = 3

    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, BBandsConvention)
        self.n, self.mult, self.ddof = int(spec.params[0]), float(spec.params[1]), conv.ddof
        self.rings = {"x": self.n - 1}
        self.scalars = {"ref": (np.float64, np.nan)}

    def step(self, s, bar, x, out):  # type: ignore[no-untyped-def]
        (v,) = x
        ring, ref = s["x"], s["ref"]
        np.copyto(ref, v, where=np.isnan(ref) & ~np.isnan(v))
        n = self.n
        dx = v - ref
        if ring.shape[0]:
            dr = ring - ref
            m1 = (dr.sum(axis=0) + dx) * (1.0 / n)
            m2 = ((dr * dr).sum(axis=0) + dx * dx) * (1.0 / n)
        else:
            m1, m2 = dx * 1.0, dx * dx
        var = m2 - m1 * m1
        with np.errstate(invalid="ignore"):
            var[var <= (_NOISE * n) * m2] = 0.0
        if self.ddof:
            var *= n / (n - self.ddof)
        width = self.mult * np.sqrt(var)
        upper, middle, lower = out
        np.add(m1, ref, out=middle)
        np.add(middle, width, out=upper)
        np.subtract(middle, width, out=lower)
        _push(ring, bar, v)


class _Kdj(_Machine):
    """The last ``n-1`` highs and lows; "sma" smoothing: the last RSVs and Ks its windows
    need; "recursive": K, D and the length of the current run of RSVs."""

    outputs = 3

    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, KdjConvention)
        self.n, self.m1, self.m2 = (int(p) for p in spec.params)
        self.conv = conv
        self.rings = {"high": self.n - 1, "low": self.n - 1}
        if conv.smoothing == "sma":
            self.rings.update(rsv=self.m1 - 1, k=self.m2 - 1)
        else:
            self.scalars = {
                "run": (np.int64, 0),
                "k": (np.float64, np.nan),
                "d": (np.float64, np.nan),
            }

    def step(self, s, bar, x, out):  # type: ignore[no-untyped-def]
        h, lo, c = x
        miss = np.isnan(h) | np.isnan(lo) | np.isnan(c)
        if miss.any():
            h, lo, c = (np.where(miss, np.nan, a) for a in (h, lo, c))
        rh, rl = s["high"], s["low"]
        hh = np.maximum(rh.max(axis=0), h) if rh.shape[0] else h
        ll = np.minimum(rl.min(axis=0), lo) if rl.shape[0] else lo
        den = hh - ll
        den /= 100.0  # the batch kernel's (and TA-Lib's) arithmetic
        num = c - ll
        rsv = np.full(c.shape, float(self.conv.flat_rsv))
        with np.errstate(invalid="ignore"):
            np.divide(num, den, out=rsv, where=den != 0.0)
        rsv[np.isnan(num) | np.isnan(den)] = np.nan
        _push(rh, bar, h)
        _push(rl, bar, lo)
        k_out, d_out, j_out = out
        if self.conv.smoothing == "sma":
            rr, rk = s["rsv"], s["k"]
            np.multiply(_window_sum(rr, rsv), 1.0 / self.m1, out=k_out)
            np.multiply(_window_sum(rk, k_out), 1.0 / self.m2, out=d_out)
            _push(rr, bar, rsv)
            _push(rk, bar, k_out)
        else:
            first = _run(s, ~np.isnan(rsv)) == 1
            seed = self.conv.seed
            for key, m, src, dst in (("k", self.m1, rsv, k_out), ("d", self.m2, k_out, d_out)):
                a = 1.0 - 1.0 / m
                val = src / m
                y = s[key]
                new = a * y + val
                np.copyto(new, a * seed + val, where=first)
                y[...] = new
                dst[...] = new
        np.subtract(3.0 * k_out, 2.0 * d_out, out=j_out)


_MACHINES: dict[str, Callable[[IndicatorSpec], _Machine]] = {
    "sma": _Sma,
    "ema": _Ema,
    "rsi": _Rsi,
    "macd": _Macd,
    "bbands": _BBands,
    "kdj": _Kdj,
}
_RESULTS: dict[str, Callable[..., Output]] = {
    "macd": MacdResult,
    "bbands": BBandsResult,
    "kdj": KdjResult,
}


# ---------------------------------------------------------------------------------------
# the state


class State:
    """Where an indicator left off, for every symbol (see the module docstring).

    ``spec``: the indicator; ``symbols``: the panel width, or None for a 1-D series;
    ``bars``: bars consumed so far; ``arrays``: name -> array, the last axis over symbols
    (rings of the last inputs are ``(length, symbols)``, oldest first in the serialised
    form). States are values: ``apply`` returns a new one unless ``inplace=True``.
    """

    __slots__ = ("_machine", "arrays", "bars", "spec", "symbols")

    def __init__(
        self,
        spec: IndicatorSpec,
        symbols: int | None,
        bars: int = 0,
        arrays: Mapping[str, NDArray[np.generic]] | None = None,
    ) -> None:
        self.spec = spec
        self.symbols = symbols
        self.bars = int(bars)
        self._machine = _MACHINES[spec.indicator](spec)
        width = 1 if symbols is None else int(symbols)
        fresh = self._fresh(width)
        if arrays is None:
            self.arrays = fresh
            return
        got = {k: np.asarray(v) for k, v in arrays.items()}
        if set(got) != set(fresh):
            raise InvalidParams(
                spec.indicator, "state", f"holds {sorted(got)}, expected {sorted(fresh)}"
            )
        for k, v in got.items():
            if v.shape != fresh[k].shape or v.dtype != fresh[k].dtype:
                raise InvalidParams(
                    spec.indicator,
                    "state",
                    f"array {k!r} is {v.dtype}{v.shape}, expected {fresh[k].dtype}{fresh[k].shape}",
                )
        self.arrays = {k: v.copy() for k, v in got.items()}

    def _fresh(self, width: int) -> dict[str, NDArray[np.generic]]:
        m = self._machine
        out: dict[str, NDArray[np.generic]] = {}
        for name, length in m.rings.items():
            out[name] = np.full((length, width), np.nan)
        for name, (dtype, value) in m.scalars.items():
            out[name] = np.full(width, value, dtype=dtype)
        return out

    @classmethod
    def new(cls, spec: IndicatorSpec, symbols: int | None = None) -> State:
        """The state before the first bar (``symbols``: panel width; None: a 1-D series)."""
        if symbols is not None and (isinstance(symbols, bool) or int(symbols) < 0):
            raise InvalidParams(spec.indicator, "symbols", f"must be >= 0, got {symbols!r}")
        return cls(spec, symbols)

    def copy(self) -> State:
        return State(self.spec, self.symbols, self.bars, self.arrays)

    @property
    def nbytes(self) -> int:
        """Bytes of state arrays (all symbols)."""
        return sum(a.nbytes for a in self.arrays.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (
            self.spec == other.spec
            and self.symbols == other.symbols
            and self.bars == other.bars
            and all(
                np.array_equal(self._ordered(k), other._ordered(k), equal_nan=True)
                for k in self.arrays
            )
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shape = "series" if self.symbols is None else f"{self.symbols} symbols"
        return f"State({self.spec.indicator} {self.spec.params}, {shape}, bars={self.bars})"

    # -- serialisation: rings oldest first, a JSON header, no pickle

    def _ordered(self, name: str) -> NDArray[np.generic]:
        a = self.arrays[name]
        if name in self._machine.rings and a.shape[0]:
            return np.roll(a, -(self.bars % a.shape[0]), axis=0)  # oldest first
        return a

    def to_parts(self) -> tuple[dict[str, object], dict[str, NDArray[np.generic]]]:
        """A JSON-able header and the arrays (rings oldest first): ``State.from_parts``."""
        meta: dict[str, object] = {
            "format": _FORMAT,
            "version": FORMAT_VERSION,
            "spec": self.spec.to_json(),
            "symbols": self.symbols,
            "bars": self.bars,
            "rings": sorted(self._machine.rings),
        }
        return meta, {k: self._ordered(k).copy() for k in self.arrays}

    @classmethod
    def from_parts(
        cls, meta: Mapping[str, object], arrays: Mapping[str, NDArray[np.generic]]
    ) -> State:
        """The state ``to_parts`` described (checks the format, version and array shapes)."""
        if meta.get("format") != _FORMAT or meta.get("version") != FORMAT_VERSION:
            raise InvalidParams(
                "indicators",
                "state",
                f"is not a version-{FORMAT_VERSION} indicator state:"
                f" format {meta.get('format')!r}, version {meta.get('version')!r}",
            )
        raw_spec = meta["spec"]
        assert isinstance(raw_spec, Mapping)
        sp = IndicatorSpec.from_json(raw_spec)
        symbols = meta["symbols"]
        bars = meta["bars"]
        assert symbols is None or isinstance(symbols, int)
        assert isinstance(bars, int)
        state = cls(sp, symbols, bars, arrays)
        for name, a in state.arrays.items():  # back to ring order (row of bar b: b % length)
            if name in state._machine.rings and a.shape[0]:
                state.arrays[name] = np.roll(a, bars % a.shape[0], axis=0)
        return state

    def to_bytes(self) -> bytes:
        """An ``.npz`` of the arrays plus the JSON header (``np.load(allow_pickle=False)``
        reads it; no Python object is pickled)."""
        meta, arrays = self.to_parts()
        header = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez(buf, __meta__=header, **arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> State:
        """The state ``to_bytes`` wrote."""
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            meta = json.loads(npz["__meta__"].tobytes().decode())
            arrays = {k: npz[k] for k in npz.files if k != "__meta__"}
        return cls.from_parts(meta, arrays)


# ---------------------------------------------------------------------------------------
# apply / step


def _inputs(values: object, sp: IndicatorSpec) -> tuple[Array, ...]:
    if sp.indicator == "kdj":
        if isinstance(values, Mapping):
            try:
                raw: Sequence[object] = [values[k] for k in ("high", "low", "close")]
            except KeyError as e:
                raise InvalidParams("kdj", "values", f"lacks {e.args[0]!r}") from None
        elif isinstance(values, tuple | list) and len(values) == 3:
            raw = values
        else:
            raise InvalidParams("kdj", "values", "must be (high, low, close) or a mapping of them")
    else:
        raw = [values]
    out = []
    for v in raw:
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InvalidParams("indicators", "values", f"must be numbers: {e}") from None
        out.append(a)
    if len({a.shape for a in out}) != 1:
        raise InvalidParams(
            sp.indicator, "values", f"shapes differ: {', '.join(str(a.shape) for a in out)}"
        )
    return tuple(out)


def apply(
    values: ArrayLike | Sequence[ArrayLike] | Mapping[str, ArrayLike],
    spec: IndicatorSpec,
    state: State | None = None,
    *,
    inplace: bool = False,
) -> tuple[Output, State]:
    """Continue ``spec`` over ``values`` from ``state``: ``(outputs, new state)``.

    ``values``: a 1-D series of bars, or a ``(bars, symbols)`` panel (KDJ: a tuple or
    mapping of high, low and close, each so shaped); zero bars are fine. ``state``: None
    to start (a fresh state of the input's width), else the state a previous call returned
    (same spec and width). Outputs are shaped like the input and typed like the batch
    kernel's (an array, ``MacdResult``, ``BBandsResult``, ``KdjResult``). The given state is
    left unchanged unless ``inplace=True`` (then it is advanced and returned: no copy).
    """
    arrays = _inputs(values, spec)
    shape = arrays[0].shape
    if len(shape) not in (1, 2):
        raise InvalidParams(
            spec.indicator, "values", f"must be 1-D (bars) or 2-D (bars, symbols), got {shape}"
        )
    symbols = None if len(shape) == 1 else shape[1]
    if state is None:
        state = State.new(spec, symbols)
    else:
        if state.spec != spec:
            raise InvalidParams(
                spec.indicator, "state", f"was made for {state.spec}, not for {spec}"
            )
        if state.symbols != symbols:
            raise InvalidParams(
                spec.indicator,
                "values",
                f"have {symbols or 'no'} symbol columns, the state has {state.symbols or 'none'}"
                " (a 1-D series state takes 1-D values)",
            )
        if not inplace:
            state = state.copy()
    m = state._machine
    bars = shape[0]
    width = 1 if symbols is None else symbols
    xs = tuple(a.reshape(bars, width) for a in arrays)
    outs = tuple(np.empty((bars, width)) for _ in range(m.outputs))
    s = state.arrays
    b0 = state.bars
    for t in range(bars):
        m.step(s, b0 + t, tuple(x[t] for x in xs), tuple(o[t] for o in outs))
    state.bars = b0 + bars
    res = tuple(o.reshape(shape) for o in outs)
    wrap = _RESULTS.get(spec.indicator)
    return (wrap(*res) if wrap else res[0]), state


def step(
    bar: ArrayLike | Sequence[ArrayLike] | Mapping[str, ArrayLike],
    spec: IndicatorSpec,
    state: State | None = None,
    *,
    inplace: bool = False,
) -> tuple[Output, State]:
    """One bar: one value per symbol (a scalar for a 1-D series state); outputs likewise."""
    arrays = _inputs(bar, spec)
    if arrays[0].ndim > 1:
        raise InvalidParams(
            spec.indicator, "bar", f"must be one value per symbol, got {arrays[0].shape}"
        )
    one = tuple(a[None] for a in arrays)
    arg: object = one if spec.indicator == "kdj" else one[0]
    out, new = apply(arg, spec, state, inplace=inplace)  # type: ignore[arg-type]
    if isinstance(out, tuple):
        return type(out)(*(o[0] for o in out)), new
    return out[0], new
