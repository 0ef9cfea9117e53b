"""Kernels over many series laid end to end (a long frame sorted by symbol and time).

A long frame holds each symbol's bars contiguously; ``Segments`` records where each symbol
(segment) starts. Rather than regrouping the rows into a panel or looping over symbols,
each indicator runs the chunked 1-D fast path (``_fast``) once over the whole column and
then repairs what crossed a segment boundary:

* **windows** (SMA, Bollinger, KDJ with SMA smoothing): a window that lies inside one
  segment is exactly the window of that symbol alone; the ones that reach into the
  previous segment are the symbol's warm-up, set to NaN. Bollinger subtracts each
  segment's first close before the moments (as a separate series would).
* **recursions** (EMA, MACD, Wilder's RSI, recursive KDJ): run through a boundary, a
  recursion ``y[t] = a*y[t-1] + k*v[t]`` differs from the symbol's own series, from its
  seed bar on, by ``a**j`` times the difference at the seed bar. So the first bars of each
  segment, up to where ``a**j`` falls below ``1e-33`` (far under double precision of any
  price), are recomputed by the panel kernel on a panel of just those heads; past them the
  whole-column values are the symbol's own. RSI also restores its exact flat value where
  a symbol has had no change at all since its first bar. MACD first tries the exact
  per-symbol blocked pass of ``_segmacd`` (no repair); the repair here is its fallback for
  very ragged lengths.

Input must be NaN-free (the callers take the general path otherwise); results equal the
per-symbol kernels to rounding (tested against them).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from . import _fast as fast
from . import _segmacd as segmacd
from ._linrec import matmul_rows
from ._params import KdjParams, MacdParams
from ._registry import Outputs

Array = NDArray[np.float64]
_NEGLIGIBLE = 1e-33


def decay_rows(a: float, tol: float = _NEGLIGIBLE) -> int:
    """Bars after which ``a**j`` is below ``tol``."""
    if a <= 0.0:
        return 1
    return int(math.log(tol) / math.log(a)) + 1


def price_tol(x: Array) -> float:
    """How small ``a**j`` must get for an EMA-like state of ``x``: the state of the previous
    symbol and this symbol's both lie in [min x, max x], so their difference decayed by
    ``a**j <= 1e-17 * min/max`` is below 1e-17 of any value when ``x`` is positive (prices);
    otherwise the fixed 1e-33."""
    lo, hi = float(x.min()), float(x.max())
    return 1e-17 * lo / hi if lo > 0.0 else _NEGLIGIBLE


class Segments:
    """Segment ``g`` covers rows ``starts[g] : starts[g] + lengths[g]`` of a 1-D array."""

    def __init__(self, starts: NDArray[np.intp], size: int) -> None:
        self.starts = np.asarray(starts, dtype=np.intp)
        self.size = size
        self.lengths = np.diff(np.append(self.starts, size))
        self.longest = int(self.lengths.max()) if size else 0
        # all segments of one length: every repair is a slice of a 2-D view
        self.width = self.longest if bool(np.all(self.lengths == self.longest)) else 0
        # as a panel, the segments would waste at most a fifth of it on padding
        self.nearly_equal = self.longest * len(self.starts) <= 1.25 * size

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

    def first_values(self, x: Array) -> Callable[[int, int], Array]:
        """``f(lo, hi)``: each row's segment's first value, for rows ``lo .. hi-1``."""
        firsts, starts = x[self.starts], self.starts
        bounds = starts.tolist()  # bisect on a list: no numpy call per lookup

        def levels(lo: int, hi: int) -> Array:
            i0 = bisect.bisect_right(bounds, lo) - 1  # the segment holding lo
            i1 = bisect.bisect_left(bounds, hi)  # past the last one before hi
            edges = np.empty(i1 - i0 + 1, dtype=np.intp)  # lo, the starts inside, hi
            edges[1:-1] = starts[i0 + 1 : i1]
            edges[0], edges[-1] = lo, hi
            return np.repeat(firsts[i0:i1], edges[1:] - edges[:-1])

        return levels

    def head_panel(self, x: Array, rows: int) -> Array:
        """The first ``rows`` bars of every segment as a (rows, segments) panel; a segment
        with fewer bars is padded at the end with NaN."""
        if self.width:
            return np.ascontiguousarray(x.reshape(-1, self.width)[:, :rows].T)
        idx, ok = self._grid(0, rows)
        panel = np.full((len(self.starts), rows), np.nan)
        panel[ok] = x[idx[ok]]
        return np.ascontiguousarray(panel.T)

    def subtract_tails(self, y: Array, which: NDArray[np.intp], first: int, d: Array) -> None:
        """Subtract ``d[i, j]`` from offset ``first + j`` of segment ``which[i]`` (where the
        segment has it); with equal segments, ``which`` must be all of them."""
        if self.width:
            y.reshape(-1, self.width)[:, first : first + d.shape[1]] -= d
            return
        idx, ok = self._grid(first, d.shape[1])
        idx, ok = idx[which], ok[which]
        y[idx[ok]] -= d[ok]

    def put_heads(self, y: Array, panel: Array, rows: int) -> None:
        """Write a (rows, segments) panel back over the first ``rows`` bars of each segment."""
        if self.width:
            y.reshape(-1, self.width)[:, :rows] = panel.T
            return
        idx, ok = self._grid(0, rows)
        y[idx[ok]] = panel.T[ok]


def _outputs(res: Outputs) -> tuple[Array, ...]:
    return tuple(res) if isinstance(res, tuple) else (res,)


def repaired(
    seg: Segments,
    arrays: tuple[Array, ...],
    whole: Outputs,
    rows: int,
    kernel: Callable[..., Outputs],
) -> tuple[Array, ...]:
    """``whole`` (the 1-D fast path's outputs over the whole column) with the first
    ``rows`` bars of every segment recomputed by ``kernel`` on a panel of those heads."""
    outs = _outputs(whole)
    rows = min(rows, seg.longest)
    if rows > 0:
        heads = kernel(*(seg.head_panel(a, rows) for a in arrays))
        for o, h in zip(outs, _outputs(heads), strict=True):
            seg.put_heads(o, h, rows)
    return outs


def sma(x: Array, seg: Segments, n: int) -> Array:
    y = fast.sma(x, n)
    seg.heads(y, n - 1)
    return y


def bbands(x: Array, seg: Segments, n: int, mult: float, ddof: int) -> tuple[Array, ...]:
    # the three bands in one allocation (fewer, larger page runs to fault in; the accessor
    # attaches the three together: columns over one buffer)
    out = fast.bbands(x, n, mult, ddof, ref=seg.first_values(x), out=np.empty((3,) + x.shape))
    for o in out:
        seg.heads(o, n - 1)
    return out


def ema(
    x: Array, seg: Segments, n: int, seed: str, start: int, kernel: Callable[..., Outputs]
) -> Array:
    """EMA(n), valid from bar ``start`` of each symbol (see ``_fast.ema``).

    The first bars of each symbol, until the previous symbol's share of the whole-column
    value has decayed below 1e-3 of the smallest price, are recomputed by ``kernel``. Past
    them the whole-column value is the symbol's own plus ``delta * a**j`` (``delta``: the
    difference at the last recomputed bar, ``j`` bars after it), subtracted for as long as
    it exceeds 1e-17 of the smallest price (superposition; exact to rounding because
    ``delta`` is already small, unlike at the seed bar where it can be the whole gap
    between two symbols' prices).
    """
    a = 1.0 - 2.0 / (n + 1)
    y = fast.ema(x, n, seed, start)
    tol = price_tol(x)  # 1e-17 * min / max for prices
    head = min(start + decay_rows(a, 1e14 * tol), seg.longest)  # 1e-3 * min / max
    have = np.flatnonzero(seg.lengths > head)
    at = seg.starts[have] + head - 1  # each long symbol's last recomputed bar
    whole = y[at]
    repaired(seg, (x,), y, head, kernel)
    delta = whole - y[at]
    rows = min(decay_rows(a, tol) - decay_rows(a, 1e14 * tol) + 1, seg.longest - head)
    if not have.size or rows <= 0:
        return y
    with np.errstate(under="ignore"):
        decay = a ** np.arange(1, rows + 1, dtype=np.float64)
    seg.subtract_tails(y, have, head, delta[:, None] * decay[None, :])
    return y


def rsi(
    x: Array, seg: Segments, n: int, seed: str, flat: float, kernel: Callable[..., Outputs]
) -> Array:
    m = n if seed == "sma" else 1  # first bar with a value
    if seg.width:
        # equal lengths: the panel kernel on the transposed view of the column, writing
        # into the transposed view of the output, chunk by chunk (in cache: cheaper than
        # transposing the input and the output whole)
        out = np.empty_like(x)
        fast.rsi(x.reshape(-1, seg.width).T, n, seed, flat, out=out.reshape(-1, seg.width).T)
        return out
    if seg.nearly_equal:
        # the 1-D RSI costs more than the panel RSI per bar: the symbols as a panel
        # (the output allocated only once the input panel is released: less peak memory)
        (res,) = _outputs(kernel(seg.head_panel(x, seg.longest)))  # RSI's one output
        out = np.empty_like(x)
        seg.put_heads(out, res, seg.longest)
        return out
    rows = min(m + decay_rows((n - 1.0) / n), seg.longest)
    r = repaired(seg, (x,), fast.rsi(x, n, seed, flat), rows, kernel)[0]
    # a symbol with no change at all in its head: past the head the whole-column averages
    # are the previous symbol's decayed to ~1e-33, not 0, until the symbol's first change
    if rows < seg.longest:
        long = np.flatnonzero(seg.lengths > rows)
        heads = seg.head_panel(x, rows)[:, long]
        for g in long[np.all(heads == heads[:1], axis=0)]:
            s = seg.starts[g]
            moves = np.flatnonzero(np.diff(x[s + rows - 1 : s + seg.lengths[g]]))
            stop = moves[0] if moves.size else seg.lengths[g] - rows
            r[s + rows : s + rows + stop] = flat
    return r


def macd(
    x: Array, seg: Segments, params: MacdParams, kernel: Callable[..., Outputs]
) -> tuple[Array, ...]:
    """MACD line, signal and histogram; repaired like ``ema``, in two parts.

    The first bars of each symbol, until the previous symbol's share is below 1e-3 of the
    smallest price (the signal's share decays as ``j * a**j``: 1e-3 more), are recomputed
    by ``kernel``. Past them the differences of the three states (fast EMA F, slow EMA S,
    signal G) evolve without input: ``dF*af**j``, ``dS*as**j`` and G driven by them; dF and
    dS come from the line's differences at the last two recomputed bars.
    """
    exact = segmacd.macd(x, seg.starts, seg.lengths, params, kernel)
    if exact is not None:
        return exact
    fast_n, slow, signal = params.fast, params.slow, params.signal
    sig_start = fast.macd_starts(params)[2]
    amax = 1.0 - 2.0 / (max(slow, signal) + 1)
    tol = 1e-3 * price_tol(x)  # the signal's j * a**j: 1e-3 more for j up to 1,000 bars
    head = min(sig_start + max(2, decay_rows(amax, 1e14 * tol)), seg.longest)
    line, sig, hist = fast.macd(x, params)
    have = np.flatnonzero(seg.lengths > head)
    p = seg.starts[have] + head - 1  # each long symbol's last recomputed bar
    whole_l, whole_l1, whole_g = line[p].copy(), line[p - 1].copy(), sig[p].copy()
    repaired(seg, (x,), (line, sig, hist), head, kernel)
    rows = min(decay_rows(amax, tol) - decay_rows(amax, 1e14 * tol) + 2, seg.longest - head)
    if not have.size or rows <= 0:
        return line, sig, hist
    kf, ks, kg = 2.0 / (fast_n + 1), 2.0 / (slow + 1), 2.0 / (signal + 1)
    af, as_, ag = 1.0 - kf, 1.0 - ks, 1.0 - kg
    dl, dl1 = whole_l - line[p], whole_l1 - line[p - 1]
    d_f = af * (dl - as_ * dl1) / (af - as_)  # dF at bar p (line: dF - dS; one step back)
    d_s = d_f - dl
    d_g = whole_g - sig[p]
    j = np.arange(1, rows + 1, dtype=np.float64)
    with np.errstate(under="ignore"):
        pf, ps, pg = af**j, as_**j, ag**j
        cf, cs = np.empty(rows), np.empty(rows)  # sum over i <= j of ag**(j-i) * a**i
        cf[0], cs[0] = af, as_
        for i in range(1, rows):
            cf[i] = ag * cf[i - 1] + pf[i]
            cs[i] = ag * cs[i - 1] + ps[i]
    # each correction is (dF, dS, dG) per symbol times three sequences: one thin product
    d = np.stack([d_f, d_s, d_g], axis=1)
    for out, w in (
        (line, (pf, -ps, 0.0 * pg)),
        (sig, (kg * cf, -kg * cs, pg)),
        (hist, (pf - kg * cf, kg * cs - ps, -pg)),
    ):
        # slices of 64 symbols keep each product under OpenBLAS's threading threshold
        seg.subtract_tails(out, have, head, matmul_rows(d, np.stack(w), rows=64))
    return line, sig, hist


def kdj(
    h: Array, lo: Array, c: Array, seg: Segments, params: KdjParams, kernel: Callable[..., Outputs]
) -> tuple[Array, ...]:
    k, d, j = fast.kdj(h, lo, c, params)
    n, m1, m2 = params.n, params.m1, params.m2
    if params.smoothing == "sma":  # windows only
        for o, first in ((k, n + m1 - 2), (d, n + m1 + m2 - 3), (j, n + m1 + m2 - 3)):
            seg.heads(o, first)
        return k, d, j
    # K and D lie in [0, 100] (RSV does): 1e-20 of that, with the j * a**j of D
    rows = n - 1 + decay_rows(1.0 - 1.0 / max(m1, m2), 1e-20)
    return repaired(seg, (h, lo, c), (k, d, j), rows, kernel)
