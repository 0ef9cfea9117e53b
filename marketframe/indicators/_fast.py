"""Chunked fast paths for NaN-free input (the common case: a clean series or panel).

The series (or panel) is walked along time in chunks of about ``CHUNK`` values, so every
intermediate array stays in cache and no full-size temporaries are allocated; windows
read their ``n-1`` previous bars from the input, recursions carry their state from chunk
to chunk (``Recursion``). The results are the same as the whole-array paths in
``_kernels`` (tests run both, with tiny chunks to cross many boundaries).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from ._linrec import BLOCK, Recursion
from ._rolling import rolling_max, rolling_min, sums, window_sum

Array = NDArray[np.float64]

CHUNK = 1 << 16  # values per chunk of a series; tests lower it
PANEL_CHUNK = 1 << 18  # values per chunk of a panel (wider rows, fewer Python steps)


def spans(x: Array, first_min: int = 0) -> Iterator[tuple[int, int]]:
    """Consecutive [start, stop) bar ranges; the first holds at least ``first_min`` bars."""
    per_bar = 1 if x.ndim == 1 else max(1, x.shape[1])
    size = CHUNK if x.ndim == 1 else PANEL_CHUNK
    rows = max(BLOCK, size // per_bar // BLOCK * BLOCK)
    total = x.shape[0]
    first = max(rows, -(-first_min // BLOCK) * BLOCK)
    s, e = 0, min(first, total)
    while s < total:
        yield s, e
        s, e = e, min(e + rows, total)


def _put(out: Array, s: int, e: int, arr: Array, g0: int) -> None:
    """out[s:e] = values of ``arr`` whose element i is bar g0+i (NaN before g0)."""
    if g0 > s:
        out[s : min(g0, e)] = np.nan
        s = min(g0, e)
    out[s:e] = arr[s - g0 : e - g0]


def sma(x: Array, n: int) -> Array:
    out = np.empty_like(x)
    out[: n - 1] = np.nan
    for s, e in spans(x):
        lo = max(0, s - n + 1)
        if e - lo >= n:
            np.multiply(sums(x[lo:e], n), 1.0 / n, out=out[lo + n - 1 : e])
    return out


_NOISE = 64.0 * np.finfo(np.float64).eps


def bbands(x: Array, n: int, mult: float, ddof: int) -> tuple[Array, Array, Array]:
    upper, middle, lower = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    for a in (upper, middle, lower):
        a[: n - 1] = np.nan
    ref = x[0].copy()
    scale = mult * np.sqrt(n / (n - ddof))
    for s, e in spans(x):
        lo = max(0, s - n + 1)
        if e - lo < n:
            continue
        g = lo + n - 1
        d = x[lo:e] - ref
        m1 = sums(d, n)
        m1 *= 1.0 / n
        np.multiply(d, d, out=d)
        m2 = sums(d, n)
        m2 *= 1.0 / n
        var = np.multiply(m1, m1)
        np.subtract(m2, var, out=var)
        m2 *= _NOISE * n
        var[var <= m2] = 0.0  # rounding noise of a flat window: exactly 0 (see moments)
        std = np.sqrt(var, out=var)
        std *= scale
        mid = np.add(m1, ref, out=middle[g:e])
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
    for s, e in spans(x, start + 1):
        if s == 0:
            v = x[s:e] * k
            v[:start] = 0.0
            v[start] = x[start - n + 1 : start + 1].mean(axis=0) if seed == "sma" else x[start]
            rec(v, out[s:e])
        else:
            rec(x[s:e], out[s:e], k)
    out[:start] = np.nan
    return out


def rsi(x: Array, n: int, seed: str, flat: float) -> Array:
    """Wilder averages of 100*gains (G) and of |changes| (S = gains + losses): RSI = G/S."""
    out = np.empty_like(x)
    start = n if seed == "sma" else 1  # first bar with a value
    if x.shape[0] <= start:
        out[:] = np.nan
        return out
    a = (n - 1.0) / n
    rec_g, rec_s = Recursion(a, x.shape[1:]), Recursion(a, x.shape[1:])
    for s, e in spans(x, start + 1):
        b0 = max(s, 1)
        d = x[b0:e] - x[b0 - 1 : e - 1]  # changes on bars b0..e-1
        g = np.maximum(d, 0.0)
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
        zero = ad == 0.0
        if zero.any():
            r[zero] = flat
    out[:start] = np.nan
    return out


def macd(
    x: Array, fast: int, slow: int, signal: int, seed: str, fast_start: int
) -> tuple[Array, Array, Array]:
    line, sig, hist = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    slow_start = slow - 1 if seed == "sma" else 0
    line_start = max(fast_start, slow_start)
    sig_start = line_start + (signal - 1 if seed == "sma" else 0)
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

    for s, e in spans(x, sig_start + 1):
        xs = x[s:e]
        f = np.empty_like(xs)
        ln = line[s:e]
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


def _rsv(h: Array, lo: Array, c: Array, n: int, flat: float) -> Array:
    ll = rolling_min(lo, n)
    den = rolling_max(h, n)
    den -= ll
    den /= 100.0
    num = c - ll
    out = np.full(c.shape, float(flat))
    with np.errstate(invalid="ignore"):
        np.divide(num, den, out=out, where=den != 0.0)
    out[: n - 1] = np.nan
    return out


def kdj(
    h: Array, lo: Array, c: Array, n: int, m1: int, m2: int,
    smoothing: str, seed: float, flat: float,
) -> tuple[Array, Array, Array]:
    k_out, d_out, j_out = np.empty_like(c), np.empty_like(c), np.empty_like(c)
    rest = c.shape[1:]
    if smoothing == "sma":
        halo = n + m1 + m2 - 3
    else:
        halo = n - 1
        rec_k = Recursion(1.0 - 1.0 / m1, rest, carry=seed)
        rec_d = Recursion(1.0 - 1.0 / m2, rest, carry=seed)
    for s, e in spans(c):
        g0 = max(0, s - halo)
        r = _rsv(h[g0:e], lo[g0:e], c[g0:e], n, flat)[n - 1 :]  # bar g0+n-1 onwards
        rg = g0 + n - 1
        if smoothing == "sma":
            k = window_sum(r, m1, 1.0 / m1)
            d = window_sum(k[m1 - 1 :], m2, 1.0 / m2)
            _put(k_out, s, e, k, rg)
            _put(d_out, s, e, d, rg + m1 - 1)
        else:
            b0 = max(s, rg)  # first bar of this chunk with an RSV
            if b0 < e:
                seg = r[b0 - rg :] / m1
                rec_k(seg, seg)
                _put(k_out, s, e, seg, b0)
                v = seg / m2
                rec_d(v, v)
                _put(d_out, s, e, v, b0)
            else:
                k_out[s:e] = np.nan
                d_out[s:e] = np.nan
    np.multiply(k_out, 3.0, out=j_out)
    j_out -= 2.0 * d_out
    return k_out, d_out, j_out
