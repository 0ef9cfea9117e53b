"""Kernels over many series laid end to end (a long frame sorted by symbol and time).

A long frame holds each symbol's bars contiguously; ``Segments`` records where each symbol
(segment) starts. Rather than regrouping the rows into a panel or looping over symbols,
each indicator runs the chunked 1-D fast path (``_fast``) once over the whole column and
then repairs what crossed a segment boundary:

* **windows** (SMA, Bollinger, KDJ with SMA smoothing): a window that lies inside one
  segment is exactly the window of that symbol alone; the ones that reach into the
  previous segment are the symbol's warm-up, set to NaN. Bollinger subtracts each
  segment's first close before the moments (as a separate series would).
* **recursions** (EMA, Wilder's averages, recursive KDJ): ``y[t] = a*y[t-1] + k*v[t]``
  run through the boundary differs from the symbol's own series, from its seed bar on, by
  ``a**j * delta`` (the difference at the seed bar, decaying): the seed is set and the
  decaying difference added on the first bars of each segment, until ``a**j`` falls below
  ``1e-30`` (beyond that it is far under double precision of any price).

Input must be NaN-free (the callers take the general path otherwise); results equal the
per-symbol kernels to rounding (tested against them).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from . import _fast as fast

Array = NDArray[np.float64]
_NEGLIGIBLE = 1e-30


class Segments:
    """Segment ``g`` covers rows ``starts[g] : starts[g] + lengths[g]`` of a 1-D array."""

    def __init__(self, starts: NDArray[np.intp], size: int) -> None:
        self.starts = np.asarray(starts, dtype=np.intp)
        self.size = size
        self.lengths = np.diff(np.append(self.starts, size))
        self.longest = int(self.lengths.max()) if size else 0
        # all segments of one length: every repair is a slice of a 2-D view
        self.width = self.longest if bool(np.all(self.lengths == self.longest)) else 0

    def _grid(self, first: int, count: int) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
        """Row indices of offsets ``first .. first+count-1`` of every segment, and which exist."""
        offs = first + np.arange(count)
        return self.starts[:, None] + offs[None, :], offs[None, :] < self.lengths[:, None]

    def heads(self, y: Array, count: int, value: float = np.nan) -> None:
        """Set the first ``count`` rows of every segment to ``value``."""
        count = min(count, self.longest)
        if count <= 0:
            return
        if self.width:
            y.reshape(-1, self.width)[:, :count] = value
            return
        rows, ok = self._grid(0, count)
        y[rows[ok]] = value

    def at(self, x: Array, offset: int) -> Array:
        """``x`` at row ``offset`` of each segment (NaN where the segment is shorter)."""
        out = np.full(len(self.starts), np.nan)
        ok = self.lengths > offset
        out[ok] = x[self.starts[ok] + offset]
        return out

    def set_at(self, y: Array, offset: int, values: Array) -> None:
        ok = self.lengths > offset
        y[self.starts[ok] + offset] = values[ok]

    def window_mean(self, x: Array, m: int, end: int) -> Array:
        """Mean of rows ``end-m+1 .. end`` of each segment (NaN where it is shorter)."""
        out = np.full(len(self.starts), np.nan)
        ok = self.lengths > end
        rows = self.starts[ok][:, None] + (end - m + 1 + np.arange(m))[None, :]
        out[ok] = x[rows].mean(axis=1)
        return out

    def first_values(self, x: Array) -> Array:
        """Each row's segment's first value (a per-row array)."""
        return np.repeat(x[self.starts], self.lengths)

    def decay(self, y: Array, offset: int, a: float, delta: Array) -> None:
        """``y[start + offset + j] += a**j * delta[segment]`` for each segment, while that
        is not negligible (``a**j >= 1e-30``)."""
        span = self.longest - offset
        if span <= 0:
            return
        if 0.0 < a < 1.0:
            span = min(span, int(math.log(_NEGLIGIBLE) / math.log(a)) + 1)
        elif a == 0.0:
            span = 1
        weights = a ** np.arange(span)
        delta = np.where(np.isnan(delta), 0.0, delta)
        if self.width:
            view = y.reshape(-1, self.width)[:, offset : offset + span]
            view += delta[:, None] * weights[None, :]
            return
        rows, ok = self._grid(offset, span)
        y[rows[ok]] += (delta[:, None] * weights[None, :])[ok]


def recursion(
    v: Array, seg: Segments, a: float, k: float, offset: int, seeds: Array, out: Array | None = None
) -> Array:
    """Per segment: ``y[offset] = seeds[g]``, then ``y[t] = a*y[t-1] + k*v[t]``; rows
    before ``offset`` are left as computed (callers set them)."""
    y = fast.smooth(v, a, k, out)
    delta = seeds - seg.at(y, offset)
    seg.decay(y, offset, a, delta)
    seg.set_at(y, offset, seeds)
    return y


def sma(x: Array, seg: Segments, n: int) -> Array:
    y = fast.sma(x, n)
    seg.heads(y, n - 1)
    return y


def bbands(x: Array, seg: Segments, n: int, mult: float, ddof: int) -> tuple[Array, ...]:
    out = fast.bbands(x, n, mult, ddof, ref=seg.first_values(x))
    for o in out:
        seg.heads(o, n - 1)
    return out


def ema(x: Array, seg: Segments, n: int, seed: str, start: int) -> Array:
    """EMA(n) valid from row ``start`` of each segment, seeded there with the mean of the
    ``n`` rows ending at ``start`` (``seed="sma"``) or with the value at ``start``."""
    k = 2.0 / (n + 1)
    seeds = seg.window_mean(x, n, start) if seed == "sma" else seg.at(x, start)
    y = recursion(x, seg, 1.0 - k, k, start, seeds)
    seg.heads(y, start)
    return y


def rsi(x: Array, seg: Segments, n: int, seed: str, flat: float) -> Array:
    d = np.empty_like(x)
    d[:1] = 0.0
    np.subtract(x[1:], x[:-1], out=d[1:])  # d[s] crosses into segment s: never used below
    gains = np.maximum(d, 0.0)
    m = n if seed == "sma" else 1  # Wilder's averages start at row m, seeded from m changes
    a = (n - 1.0) / n
    g = recursion(gains, seg, a, 1.0 / n, m, seg.window_mean(gains, m, m), out=gains)
    changed = d != 0.0
    ad = np.abs(d, out=d)
    s = recursion(ad, seg, a, 1.0 / n, m, seg.window_mean(ad, m, m), out=ad)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.divide(g, s, out=g)
    r *= 100.0
    # no change at all since the segment began: exactly ``flat`` (the repaired averages are
    # then ~1e-30 rather than 0); only bars whose average change is tiny need the check
    tiny = np.flatnonzero(~(s > 1e-12 * np.abs(x)))
    if tiny.size:
        counts = np.cumsum(changed)
        owner = np.searchsorted(seg.starts, tiny, side="right") - 1
        none = counts[tiny] == counts[seg.starts[owner]]
        r[tiny[none]] = flat
    np.clip(r, 0.0, 100.0, out=r)
    seg.heads(r, m)
    return r


def macd(
    x: Array, seg: Segments, fast_n: int, slow: int, signal: int, seed: str, fast_start: int
) -> tuple[Array, Array, Array]:
    slow_start = slow - 1 if seed == "sma" else 0
    line_start = max(fast_start, slow_start)
    sig_start = line_start + (signal - 1 if seed == "sma" else 0)
    line = ema(x, seg, fast_n, seed, fast_start)
    line -= ema(x, seg, slow, seed, slow_start)
    seg.heads(line, line_start)
    k = 2.0 / (signal + 1)
    if seed == "sma":
        seeds = seg.window_mean(line, signal, sig_start)
    else:
        seeds = seg.at(line, sig_start)
    filled = line.copy()
    seg.heads(filled, line_start, 0.0)
    sig = recursion(filled, seg, 1.0 - k, k, sig_start, seeds, out=filled)
    seg.heads(sig, sig_start)
    return line, sig, line - sig


def kdj(
    h: Array,
    lo: Array,
    c: Array,
    seg: Segments,
    n: int,
    m1: int,
    m2: int,
    smoothing: str,
    seed: float,
    flat: float,
) -> tuple[Array, Array, Array]:
    if smoothing == "sma":
        k, d, j = fast.kdj(h, lo, c, n, m1, m2, smoothing, seed, flat)
        seg.heads(k, n + m1 - 2)
        seg.heads(d, n + m1 + m2 - 3)
        seg.heads(j, n + m1 + m2 - 3)
        return k, d, j
    rsv = fast.kdj(h, lo, c, n, 1, 1, "sma", seed, flat)[0]  # K = SMA(RSV, 1) = RSV
    rsv[: n - 1] = 0.0
    a1, a2 = 1.0 - 1.0 / m1, 1.0 - 1.0 / m2
    k_seed = a1 * seed + seg.at(rsv, n - 1) / m1  # the carry before the first RSV is ``seed``
    k = recursion(rsv, seg, a1, 1.0 / m1, n - 1, k_seed, out=rsv)
    d_seed = a2 * seed + seg.at(k, n - 1) / m2
    d = recursion(k, seg, a2, 1.0 / m2, n - 1, d_seed)
    seg.heads(k, n - 1)
    seg.heads(d, n - 1)
    return k, d, 3.0 * k - 2.0 * d
