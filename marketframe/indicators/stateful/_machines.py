"""The per-indicator machines: each one's state layout and its one-bar step over symbols.

A machine is built from an ``IndicatorSpec`` by its indicator's row (``machine``); ``State``
allocates the arrays it lays out and the drivers (``apply``) call its ``step`` once per bar,
all symbols at once. Each machine gives its batch kernel's answer, one bar at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..conventions import (
    BBandsConvention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
)
from ._spec import IndicatorSpec

Array = NDArray[np.float64]
#: a machine's state arrays by name (its rings and scalars), and a bar's inputs or outputs
States = dict[str, NDArray[Any]]  # each of the dtype its machine declares
Arrays = tuple[Array, ...]

_NOISE = 64.0 * np.finfo(np.float64).eps  # the batch Bollinger's flat-variance threshold


class Machine:
    """One indicator's state layout and its one-bar step (all symbols at once).

    ``rings``: name -> length of a ring of the last inputs (``(length, symbols)``; the row
    of bar ``b`` is ``b % length``); ``scalars``: name -> (dtype, initial value), one per
    symbol. ``step`` reads the bar's inputs (one value per symbol, in the order of the row's
    ``inputs``), writes one row per output (``outputs``: the row's), and updates the state
    arrays in place: the scalars, and in each ring only the row of its bar (``_push``;
    ``State.advance`` relies on it to peek without a copy). A subclass sets ``rings`` and
    ``scalars`` in its ``__init__`` and defines ``step``.
    """

    def __init__(self, spec: IndicatorSpec) -> None:
        self.spec = spec
        self.outputs = len(spec.row.outputs)
        self.rings: dict[str, int] = {}
        self.scalars: dict[str, tuple[type, float]] = {}

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
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
    settled: bool = False,
) -> Array:
    """One step of an EMA(n) restarted on every run: valid from run position ``start``,
    seeded there with the mean of the window ``window()`` (seed "sma") or with ``x`` (seed
    "first", start 0); ``y`` updated in place, returned (NaN before the seed). ``settled``:
    every position is past ``start`` (no seed, no NaN to place: the recursion alone)."""
    k = 2.0 / (n + 1)
    new = (1.0 - k) * y + k * x
    if settled:
        y[...] = new
        return new
    at = pos == start
    if at.any():
        seeded = x if seed == "first" else window() * (1.0 / n)
        np.copyto(new, seeded, where=at)
    new[pos < start] = np.nan
    y[...] = new
    return new


class Sma(Machine):
    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        self.n = int(spec.params[0])
        self.rings = {"x": self.n - 1}

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
        (v,) = x
        ring = s["x"]
        np.multiply(_window_sum(ring, v), 1.0 / self.n, out=out[0])
        _push(ring, bar, v)


def _run(s: States, valid: NDArray[np.bool_], key: str = "run") -> NDArray[np.int64]:
    """Length of the current NaN-free run including this bar (0 on a NaN bar), stored."""
    run: NDArray[np.int64] = s[key]
    run += 1
    if not valid.all():
        run[~valid] = 0
    return run


def _past(pos: NDArray[np.int64], start: int) -> bool:
    """Every symbol's position is past ``start`` (the steady state: no seed, no warm-up)."""
    return not pos.size or bool(pos.min() > start)


class Ema(Machine):
    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, EmaConvention)
        self.n, self.seed = int(spec.params[0]), conv.seed
        self.start = self.n - 1 if self.seed == "sma" else 0
        self.rings = {"x": self.n - 1 if self.seed == "sma" else 0}
        self.scalars = {"run": (np.int64, 0), "y": (np.float64, np.nan)}

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
        (v,) = x
        ring = s["x"]
        pos = _run(s, ~np.isnan(v)) - 1
        out[0][...] = _ema(s["y"], v, pos, self.n, self.start, self.seed,
                           lambda: _window_sum(ring, v), _past(pos, self.start))  # fmt: skip
        _push(ring, bar, v)


class Rsi(Machine):
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

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
        (v,) = x
        d = v - s["prev"]
        s["prev"][...] = v
        cpos = _run(s, ~np.isnan(v)) - 2  # position of this change in its run of changes
        n, a, start = self.n, (self.n - 1.0) / self.n, self.start
        res = out[0]
        settled = _past(cpos, start)
        for key, move in (("g", np.maximum(d, 0.0)), ("l", np.maximum(-d, 0.0))):
            acc = s[key]
            new = a * acc + move / n
            if settled:
                acc[...] = new
                continue
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
        if not settled:
            res[cpos < start] = np.nan


class Macd(Machine):
    """Fast and slow EMAs ``f``/``s`` and the signal ``g`` (the running sum of the line
    during the signal's "sma" seed window); ``run``: the price run."""

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

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
        (v,) = x
        ring = s["x"]
        pos = _run(s, ~np.isnan(v)) - 1

        def last(k: int) -> Callable[[], Array]:
            return lambda: _last(ring, bar, k - 1).sum(axis=0) + v if k > 1 else v.copy()

        # past the signal's seed: the three recursions alone (no seed, no NaN to place)
        settled = _past(pos, self.line_start + self.sig_start)
        f = _ema(s["f"], v, pos, self.fast, self.fast_start, self.seed, last(self.fast), settled)
        sl = _ema(s["s"], v, pos, self.slow, self.slow_start, self.seed, last(self.slow), settled)
        line_out, sig_out, hist_out = out
        line = np.subtract(f, sl, out=line_out)
        lpos = pos - self.line_start
        g = s["g"]
        sig = self.sig
        kg = 2.0 / (sig + 1)
        new = (1.0 - kg) * g + kg * line
        if settled:
            g[...] = new
            sig_out[...] = new
            np.subtract(line_out, sig_out, out=hist_out)
            _push(ring, bar, v)
            return
        if self.seed == "first":
            np.copyto(new, line, where=lpos == 0)
        else:
            np.copyto(new, g + line, where=(lpos > 0) & (lpos <= self.sig_start))
            np.copyto(new, line, where=lpos == 0)
            at = lpos == self.sig_start
            new[at] *= 1.0 / sig
        new[lpos < 0] = np.nan
        g[...] = new
        sig_out[...] = new
        sig_out[lpos < self.sig_start] = np.nan
        np.subtract(line_out, sig_out, out=hist_out)
        _push(ring, bar, v)


class BBands(Machine):
    """The last ``n-1`` closes and ``ref``, the first close ever seen (the batch kernel
    takes the moments of ``close - ref``: its flat-window threshold depends on it)."""

    def __init__(self, spec: IndicatorSpec) -> None:
        super().__init__(spec)
        conv = spec.convention
        assert isinstance(conv, BBandsConvention)
        self.n, self.mult, self.ddof = int(spec.params[0]), float(spec.params[1]), conv.ddof
        self.rings = {"x": self.n - 1}
        self.scalars = {"ref": (np.float64, np.nan)}
        self._dr: Array = np.empty((0, 0))  # scratch for the window less ``ref`` (reused)

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
        (v,) = x
        ring, ref = s["x"], s["ref"]
        unset = np.isnan(ref)
        if unset.any():
            np.copyto(ref, v, where=unset & ~np.isnan(v))
        n = self.n
        dx = v - ref
        if ring.shape[0]:
            if self._dr.shape != ring.shape:
                self._dr = np.empty_like(ring)
            dr = np.subtract(ring, ref, out=self._dr)
            m1 = (dr.sum(axis=0) + dx) * (1.0 / n)
            m2 = (np.multiply(dr, dr, out=dr).sum(axis=0) + dx * dx) * (1.0 / n)
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


class Kdj(Machine):
    """The last ``n-1`` highs and lows; "sma" smoothing: the last RSVs and Ks its windows
    need; "recursive": K, D and the length of the current run of RSVs."""

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

    def step(self, s: States, bar: int, x: Arrays, out: Arrays) -> None:
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
        gap = np.isnan(num)  # where den is NaN the division above already gave NaN
        if gap.any():
            rsv[gap] = np.nan
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
