"""The reference implementations: one whole-array function per indicator.

Each one is the answer for every input: a 1-D series or a ``(bars, symbols)`` panel, NaN
anywhere (the "restart" policy of ``_kernels``: a NaN bar is NaN in every output, and each
NaN-free run is computed as a series of its own). The fast paths take the same arguments
under the same names and must give the same answer on the inputs they cover: ``_fast`` on
NaN-free input (chunked), ``_segmented`` on many series laid end to end; the state-carrying
machines (``stateful``) give it one bar at a time. The public kernels (``_kernels``) check
their arguments and pick a path; nothing here checks anything.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import _rolling as rolling
from ._linrec import restart, run_position
from ._params import KdjParams, MacdParams

Array = NDArray[np.float64]


def _leading_nan_rows(x: Array) -> int:
    """Number of leading rows that are NaN in every column (computed on the rest)."""
    if x.shape[0] == 0 or not np.isnan(x[0]).all():
        return 0
    valid: NDArray[np.bool_] = ~np.isnan(x)
    if x.ndim == 2:
        valid = np.any(valid, axis=1)
    return int(np.argmax(valid)) if valid.any() else x.shape[0]


def sma(x: Array, n: int) -> Array:
    """Mean of the trailing ``n`` bars."""
    return rolling.mean(x, n)


def ema(x: Array, n: int, seed: str, start: int) -> Array:
    """EMA(n) restarted on each NaN-free run, starting at run position ``start``."""
    f = _leading_nan_rows(x)
    out = np.full(x.shape, np.nan)
    xs = x[f:]
    if xs.shape[0] <= start:
        return out
    k = 2.0 / (n + 1)
    pos = run_position(xs)
    if seed == "first":
        seeds = xs
    elif pos is None:
        seeds = np.empty_like(xs)
        seeds[start] = xs[start - n + 1 : start + 1].mean(axis=0)
    else:
        seeds = rolling.mean(xs, n)
    out[f:] = restart(k * xs, seeds, pos, start, 1.0 - k)
    return out


def rsi(x: Array, n: int, seed: str, flat: float) -> Array:
    """Wilder's RSI: averages of gains and losses seeded per ``seed``, ``flat`` while there
    has been no change since the run began."""
    out = np.full(x.shape, np.nan)
    if x.shape[0] < 2:
        return out
    d = x[1:] - x[:-1]  # change on bar t+1
    f = _leading_nan_rows(d)
    d = d[f:]
    start = n - 1 if seed == "sma" else 0
    if d.shape[0] <= start:
        return out
    pos = run_position(d)
    gains = np.maximum(d, 0.0)
    losses = np.maximum(-d, 0.0)
    a = (n - 1.0) / n
    if seed == "first":
        g_seed, l_seed = gains, losses
    elif pos is None:
        g_seed, l_seed = np.empty_like(d), np.empty_like(d)
        g_seed[start] = gains[:n].mean(axis=0)
        l_seed[start] = losses[:n].mean(axis=0)
    else:
        g_seed, l_seed = rolling.mean(gains, n), rolling.mean(losses, n)
    g = restart(gains / n, g_seed, pos, start, a)
    lo = restart(losses / n, l_seed, pos, start, a)
    if pos is not None:
        # superposition leaves ~1e-17 of earlier runs: clamp, and find "no change yet" exactly
        np.maximum(g, 0.0, out=g, where=~np.isnan(g))
        np.maximum(lo, 0.0, out=lo, where=~np.isnan(lo))
        moving = (d != 0.0) & (pos >= 0)
        count = np.cumsum(moving, axis=0)
        before = np.maximum.accumulate(np.where(pos == 0, count - moving, -1), axis=0)
        still = (count - before == 0) & (pos >= start)  # no change since the run began
    total = g + lo
    with np.errstate(invalid="ignore", divide="ignore"):
        r = 100.0 * g / total
    still = total == 0.0 if pos is None else still | (total == 0.0)
    r[still] = flat
    out[1 + f :] = r
    return out


def macd(x: Array, params: MacdParams) -> tuple[Array, Array, Array]:
    """The MACD line ``EMA(fast) - EMA(slow)``, its signal EMA and their difference; the
    fast EMA starts at ``fast_start`` (the slow one's seed bar under TA-Lib's alignment)."""
    fast, slow, signal, seed, fast_start = params
    slow_start, sig_start = (slow - 1, signal - 1) if seed == "sma" else (0, 0)
    line = ema(x, fast, seed, fast_start) - ema(x, slow, seed, slow_start)
    sig = ema(line, signal, seed, sig_start)
    return line, sig, line - sig


def bbands(x: Array, n: int, mult: float, ddof: int) -> tuple[Array, Array, Array]:
    """Upper, middle and lower bands: the mean of ``n`` bars plus and minus ``mult``
    deviations (``ddof`` 0: the population's)."""
    mid, std = rolling.mean_and_std(x, n, ddof)
    width = mult * std
    return mid + width, mid, mid - width


def rsv(h: Array, lo: Array, c: Array, n: int, flat: float) -> Array:
    """Raw stochastic value ``100*(C - LLV(L,n))/(HHV(H,n) - LLV(L,n))``; ``flat`` if the
    window is flat."""
    ll = rolling.rolling_min(lo, n)
    den = rolling.rolling_max(h, n) - ll
    den /= 100.0  # TA-Lib's arithmetic: (C - L) / ((H - L) / 100)
    num = c - ll
    out = np.full(c.shape, float(flat))
    with np.errstate(invalid="ignore"):
        np.divide(num, den, out=out, where=den != 0.0)
    out[np.isnan(num) | np.isnan(den)] = np.nan
    return out


def _smooth_recursive(x: Array, m: int, seed: float) -> Array:
    f = _leading_nan_rows(x)
    out = np.full(x.shape, np.nan)
    xs = x[f:]
    if xs.shape[0] == 0:
        return out
    a = 1.0 - 1.0 / m
    v = xs / m
    out[f:] = restart(v, a * seed + v, run_position(xs), 0, a)
    return out


def kdj(h: Array, lo: Array, c: Array, params: KdjParams) -> tuple[Array, Array, Array]:
    """K and D smoothings of the RSV (``smoothing``: ``"sma"`` windows, or ``"recursive"``
    seeded at ``seed``) and ``J = 3K - 2D``; a bar lacking any of the three is missing."""
    n, m1, m2, smoothing, seed, flat = params
    missing = np.isnan(h) | np.isnan(lo) | np.isnan(c)
    h, lo, c = (np.where(missing, np.nan, a) for a in (h, lo, c))
    r = rsv(h, lo, c, n, flat)
    if smoothing == "sma":
        k = rolling.mean(r, m1)
        d = rolling.mean(k, m2)
    else:
        k = _smooth_recursive(r, m1, seed)
        d = _smooth_recursive(k, m2, seed)
    return k, d, 3.0 * k - 2.0 * d
