"""Chunked fast paths for NaN-free input (the common case: a clean series or panel).

The series (or panel) is walked along time in chunks of about ``CHUNK`` values: windows
read their ``n-1`` previous bars from the input, recursions carry their state from chunk
to chunk (``Recursion``). All intermediates live in a few chunk-sized scratch buffers
reused for every chunk: they stay in cache, and nothing large is allocated per chunk
(glibc returns large freed blocks to the OS, and faulting them back in dominated the
timings). Each function is a fast path of the function of its name in ``_reference``, with
the same arguments, and equals it; tests run with tiny chunks to cross many boundaries.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ._fused import FusedMacd
from ._linrec import BLOCK, Recursion
from ._params import KdjParams, MacdParams

Array = NDArray[np.float64]

CHUNK = 1 << 16  # values per chunk of a series; tests lower it
PANEL_CHUNK = 1 << 17  # values per chunk of a panel (wider rows, fewer Python steps)
_NOISE = 64.0 * np.finfo(np.float64).eps


class _Plan:
    """The [start, stop) bar ranges of the chunks, and scratch buffers sized for them."""

    def __init__(self, x: Array, first_min: int = 0, halo: int = 0) -> None:
        per_bar = 1 if x.ndim == 1 else max(1, x.shape[1])
        size = CHUNK if x.ndim == 1 else PANEL_CHUNK
        rows = max(BLOCK, size // per_bar // BLOCK * BLOCK)
        total = x.shape[0]
        first = max(BLOCK, -(-first_min // BLOCK) * BLOCK)  # seeds; then full chunks
        self.spans: list[tuple[int, int]] = []
        s, e = 0, min(first, total)
        while s < total:
            self.spans.append((s, e))
            s, e = e, min(e + rows, total)
        self.capacity = min(total, max(first, rows) + halo)
        self.rest = x.shape[1:]
        self._bufs: list[Array] = []
        self._mask: NDArray[np.bool_] | None = None

    def buf(self, i: int, rows: int) -> Array:
        while len(self._bufs) <= i:
            self._bufs.append(np.empty((self.capacity,) + self.rest))
        return self._bufs[i][:rows]

    def mask(self, rows: int) -> NDArray[np.bool_]:
        """A boolean scratch buffer of ``rows`` rows."""
        if self._mask is None:
            self._mask = np.empty((self.capacity,) + self.rest, dtype=bool)
        return self._mask[:rows]


def _sums(x: Array, n: int, out: Array, t1: Array, t2: Array, t3: Array | None = None) -> Array:
    """out = sums of every n consecutive rows of x (doubling; see ``_rolling.sums``).

    With a third scratch buffer ``t3`` the first two partial sums are added straight into
    ``out`` (rather than the first copied there and the second added): the same additions
    in the same order, one pass less."""
    count = x.shape[0] - n + 1
    spare = (t1, t2) if t3 is None else (t1, t2, t3)
    offset, width, remaining = 0, 1, n
    piece, at = x, -1  # the current doubled sums, and which spare holds them (-1: x)
    held, held_at = None, -1  # a first partial sum not yet in out (with t3 only)
    written = False
    while True:
        if remaining & 1:
            part = piece[offset : offset + count]
            if held is not None:
                np.add(held, part, out=out)
                held, held_at, written = None, -1, True
            elif written:
                np.add(out, part, out=out)
            elif t3 is not None:
                held, held_at = part, at
            else:
                np.copyto(out, part)
                written = True
            offset += width
        remaining >>= 1
        if not remaining:
            if held is not None:
                np.copyto(out, held)
            return out
        k = next(i for i in range(len(spare)) if i not in (at, held_at))
        dst = spare[k][: piece.shape[0] - width]
        np.add(piece[:-width], piece[width:], out=dst)
        piece, at = dst, k
        width *= 2


def _extreme(x: Array, n: int, op: np.ufunc, out: Array, t1: Array, t2: Array) -> Array:
    """out = op over every n consecutive rows of x (T-n+1 rows), by doubling."""
    count = x.shape[0] - n + 1
    cur, width, flip, spare = x, 1, 0, (t1, t2)
    while width * 2 <= n:
        dst = spare[flip][: cur.shape[0] - width]
        flip ^= 1
        op(cur[:-width], cur[width:], out=dst)
        cur = dst
        width *= 2
    op(cur[:count], cur[n - width : n - width + count], out=out)
    return out


def sma(x: Array, n: int) -> Array:
    out = np.empty_like(x)
    out[: n - 1] = np.nan
    plan = _Plan(x, halo=n - 1)
    for s, e in plan.spans:
        lo = max(0, s - n + 1)
        if e - lo >= n:
            rows = e - lo
            t1, t2, t3 = plan.buf(0, rows), plan.buf(1, rows), plan.buf(2, rows)
            res = _sums(x[lo:e], n, out[lo + n - 1 : e], t1, t2, t3)
            res *= 1.0 / n
    return out


def bbands(
    x: Array,
    n: int,
    mult: float,
    ddof: int,
    ref: Callable[[int, int], Array] | None = None,
    out: Array | None = None,
) -> tuple[Array, Array, Array]:
    """``ref``: the level subtracted before the moments (default: the first bar); when ``x``
    holds several series end to end (each window within one series), ``ref(lo, hi)`` gives
    the per-bar levels of bars ``lo .. hi-1``, chunk by chunk (no whole-column array).
    ``out``: a ``(3,) + x.shape`` array for upper, middle and lower (default: three new
    arrays, so that keeping one does not keep the others' memory)."""
    if out is None:
        upper, middle, lower = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    else:
        upper, middle, lower = out
    for a in (upper, middle, lower):
        a[: n - 1] = np.nan
    level = x[0].copy()  # used when ref is None
    scale = mult * np.sqrt(n / (n - ddof))
    plan = _Plan(x, halo=n - 1)
    for s, e in plan.spans:
        lo = max(0, s - n + 1)
        rows = e - lo
        if rows < n:
            continue
        g = lo + n - 1
        t1, t2 = plan.buf(0, rows), plan.buf(1, rows)
        levels = level if ref is None else ref(lo, e)
        d = np.subtract(x[lo:e], levels, out=plan.buf(2, rows))
        t3 = plan.buf(6, rows)
        m1 = _sums(d, n, plan.buf(3, rows - n + 1), t1, t2, t3)
        m1 *= 1.0 / n
        np.multiply(d, d, out=d)
        m2 = _sums(d, n, plan.buf(4, rows - n + 1), t1, t2, t3)
        m2 *= 1.0 / n
        var = np.multiply(m1, m1, out=plan.buf(5, rows - n + 1))
        np.subtract(m2, var, out=var)
        m2 *= _NOISE * n
        # rounding noise of a flat window: exactly 0 (see moments); a masked copy rather
        # than boolean indexing (which gathers the mask's positions first)
        flat = np.less_equal(var, m2, out=plan.mask(rows - n + 1))
        if flat.any():
            np.copyto(var, 0.0, where=flat)
        std = np.sqrt(var, out=var)
        std *= scale
        mid = np.add(m1, level if ref is None else levels[g - lo :], out=middle[g:e])
        np.add(mid, std, out=upper[g:e])
        np.subtract(mid, std, out=lower[g:e])
    return upper, middle, lower


def ema(x: Array, n: int, seed: str, start: int) -> Array:
    out = np.empty_like(x)
    if x.shape[0] <= start:
        out[:] = np.nan
        return out
    k = 2.0 / (n + 1)
    rec = Recursion(1.0 - k, x.shape[1:])
    for s, e in _Plan(x, start + 1).spans:
        if s == 0:
            v = x[s:e] * k
            v[:start] = 0.0
            v[start] = x[start - n + 1 : start + 1].mean(axis=0) if seed == "sma" else x[start]
            rec(v, out[s:e])
        else:
            rec(x[s:e], out[s:e], k)
    out[:start] = np.nan
    return out


def rsi(x: Array, n: int, seed: str, flat: float, out: Array | None = None) -> Array:
    """Wilder averages of 100*gains (G) and of |changes| (S = gains + losses): RSI = G/S.

    ``x`` and ``out`` (default: a new C-ordered array) may be transposed views: chunk by
    chunk, reading and writing them costs less than transposing them whole."""
    out = np.empty(x.shape) if out is None else out
    start = n if seed == "sma" else 1  # first bar with a value
    if x.shape[0] <= start:
        out[:] = np.nan
        return out
    a = (n - 1.0) / n
    rec_g, rec_s = Recursion(a, x.shape[1:]), Recursion(a, x.shape[1:])
    plan = _Plan(x, start + 1)
    for s, e in plan.spans:
        b0 = max(s, 1)
        rows = e - b0
        gbuf, sbuf = rec_g.input_buffer(rows), rec_s.input_buffer(rows)
        if s > 0 and gbuf is not None and sbuf is not None:
            # gains and |changes| straight into the recursions' input buffers, G straight
            # into the output (divided there)
            g = out[b0:e] if out.flags.c_contiguous else plan.buf(1, rows)
            ad = plan.buf(0, rows)
            d = np.subtract(x[b0:e], x[b0 - 1 : e - 1], out=ad).reshape(gbuf.shape)
            np.abs(d, out=sbuf)
            np.add(d, sbuf, out=gbuf)  # 2 * gains, exactly; faster than maximum(d, 0)
            rec_g.solve(rows, g, 50.0 / n)
            rec_s.solve(rows, ad, 1.0 / n)
        else:
            d = np.subtract(x[b0:e], x[b0 - 1 : e - 1], out=plan.buf(0, rows))  # changes
            g = np.maximum(d, 0.0, out=plan.buf(1, rows))
            ad = np.abs(d, out=d)
            if s == 0:
                m = n if seed == "sma" else 1
                first_g, first_s = g[:m].mean(axis=0) * 100.0, ad[:m].mean(axis=0)
                g *= 100.0 / n
                ad *= 1.0 / n
                g[: start - 1] = 0.0
                ad[: start - 1] = 0.0
                g[start - 1], ad[start - 1] = first_g, first_s
                rec_g(g, g)
                rec_s(ad, ad)
            else:
                rec_g(g, g, 100.0 / n)
                rec_s(ad, ad, 1.0 / n)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.divide(g, ad, out=out[b0:e])
        if not ad.min() > 0.0:
            r[ad == 0.0] = flat
    out[:start] = np.nan
    return out


def macd_starts(params: MacdParams) -> tuple[int, int, int]:
    """The first bars of the slow EMA, the MACD line and its signal: an SMA seed
    (``seed="sma"``) waits for its window, a first-value seed for nothing."""
    _, slow, signal, seed, fast_start = params
    slow_start = slow - 1 if seed == "sma" else 0
    line_start = max(fast_start, slow_start)
    return slow_start, line_start, line_start + (signal - 1 if seed == "sma" else 0)


def macd(x: Array, params: MacdParams) -> tuple[Array, Array, Array]:
    fast, slow, signal, seed, fast_start = params
    line, sig, hist = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    slow_start, line_start, sig_start = macd_starts(params)
    rest = x.shape[1:]
    kf, ks, kg = 2.0 / (fast + 1), 2.0 / (slow + 1), 2.0 / (signal + 1)
    rec_f, rec_s, rec_g = Recursion(1 - kf, rest), Recursion(1 - ks, rest), Recursion(1 - kg, rest)

    def seeded(v: Array, n: int, at: int, src: Array) -> Array:
        if at < v.shape[0]:
            v[:at] = 0.0
            v[at] = src[at - n + 1 : at + 1].mean(axis=0) if seed == "sma" else src[at]
        else:
            v[:] = 0.0
        return v

    plan = _Plan(x, sig_start + 1)
    fused = FusedMacd(kf, ks, kg, rec_f, rec_s, rec_g) if x.ndim == 1 else None
    for s, e in plan.spans:
        xs = x[s:e]
        ln = line[s:e]
        if fused is not None and s > 0 and (e - s) % BLOCK == 0:
            fused(xs, ln, sig[s:e])
            np.subtract(ln, sig[s:e], out=hist[s:e])
            continue
        f = plan.buf(0, e - s)
        if s == 0:
            rec_f(seeded(xs * kf, fast, fast_start, x), f)
            rec_s(seeded(xs * ks, slow, slow_start, x), ln)
            np.subtract(f, ln, out=ln)
            rec_g(seeded(ln * kg, signal, sig_start, line), sig[s:e])
        else:
            rec_f(xs, f, kf)
            rec_s(xs, ln, ks)
            np.subtract(f, ln, out=ln)
            rec_g(ln, sig[s:e], kg)
        np.subtract(ln, sig[s:e], out=hist[s:e])
    line[:line_start] = np.nan
    sig[:sig_start] = np.nan
    hist[:sig_start] = np.nan
    return line, sig, hist


def kdj(h: Array, lo: Array, c: Array, params: KdjParams) -> tuple[Array, Array, Array]:
    n, m1, m2, smoothing, seed, flat = params
    k_out, d_out, j_out = np.empty_like(c), np.empty_like(c), np.empty_like(c)
    rest = c.shape[1:]
    sma_smoothing = smoothing == "sma"
    halo = n + m1 + m2 - 3 if sma_smoothing else n - 1
    k_first = n - 1 + (m1 - 1 if sma_smoothing else 0)  # first bars with K and D
    d_first = k_first + (m2 - 1 if sma_smoothing else 0)
    k_out[:k_first] = np.nan
    d_out[:d_first] = np.nan
    if not sma_smoothing:
        rec_k = Recursion(1.0 - 1.0 / m1, rest, carry=seed)
        rec_d = Recursion(1.0 - 1.0 / m2, rest, carry=seed)
    plan = _Plan(c, halo=halo)
    for s, e in plan.spans:
        g0 = max(0, s - halo)
        rows = e - g0
        if rows < n:
            continue
        count = rows - n + 1  # RSV for bars g0+n-1 .. e-1
        t1, t2 = plan.buf(0, rows), plan.buf(1, rows)
        ll = _extreme(lo[g0:e], n, np.minimum, plan.buf(2, count), t1, t2)
        den = _extreme(h[g0:e], n, np.maximum, plan.buf(3, count), t1, t2)
        den -= ll
        den /= 100.0  # TA-Lib's arithmetic: (C - L) / ((H - L) / 100)
        num = np.subtract(c[g0 + n - 1 : e], ll, out=ll)
        r = np.divide(num, den, out=plan.buf(4, count), where=den != 0.0)
        r[den == 0.0] = flat
        rg = g0 + n - 1  # bar of r[0]
        if sma_smoothing:
            if count >= m1:
                t3 = plan.buf(7, count)
                k = _sums(r, m1, plan.buf(5, count - m1 + 1), t1, t2, t3)
                k *= 1.0 / m1
                kg = rg + m1 - 1
                k_out[max(s, kg) : e] = k[max(s, kg) - kg :]
                if k.shape[0] >= m2:
                    d = _sums(k, m2, plan.buf(6, k.shape[0] - m2 + 1), t1, t2, t3)
                    d *= 1.0 / m2
                    dg = kg + m2 - 1
                    d_out[max(s, dg) : e] = d[max(s, dg) - dg :]
        else:
            b0 = max(s, rg)  # first bar of this chunk with an RSV
            seg = r[b0 - rg :]
            rec_k(seg, k_out[b0:e], 1.0 / m1)
            rec_d(k_out[b0:e], d_out[b0:e], 1.0 / m2)
    np.multiply(k_out, 3.0, out=j_out)
    j_out -= 2.0 * d_out
    return k_out, d_out, j_out
