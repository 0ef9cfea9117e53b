"""Trailing-window sums, means, deviations and extremes along axis 0, in numpy.

Window sums add power-of-two partial sums (doubling), so every sum adds exactly the ``n``
terms of its window: no running-sum drift over long series, unlike a difference of
cumulative sums. Extremes use doubling
(the max of two overlapping power-of-two windows covers any length).

Policy: the first ``n-1`` bars are NaN, and so is every window that contains a NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def sums(x: Array, n: int) -> Array:
    """Sums of every ``n`` consecutive rows of NaN-free ``x`` (``T-n+1`` rows; ``T >= n``).

    Doubling: sums of 1, 2, 4, ... rows are built by adding shifted copies, and the window
    is the sum of the power-of-two pieces of ``n`` (binary digits). About ``log2(n)``
    vector additions, no running sum, so no drift however long the series.
    """
    count = x.shape[0] - n + 1
    result: Array | None = None
    offset = 0
    piece, width = x, 1
    remaining = n
    while True:
        if remaining & 1:
            part = piece[offset : offset + count]
            result = part.copy() if result is None else np.add(result, part, out=result)
            offset += width
        remaining >>= 1
        if not remaining:
            break
        piece = piece[:-width] + piece[width:]  # sums of 2*width rows
        width *= 2
    assert result is not None
    return result


def window_sum(x: Array, n: int, scale: float = 1.0) -> Array:
    """``scale * sum(x[t-n+1 : t+1])`` for NaN-free ``x``; the first ``n-1`` rows are NaN."""
    out = np.empty(x.shape)
    h = min(n - 1, x.shape[0])
    out[:h] = np.nan
    if x.shape[0] >= n:
        np.multiply(sums(x, n), scale, out=out[n - 1 :])
    return out


def _nan_windows(nan: NDArray[np.bool_], n: int) -> NDArray[np.bool_]:
    """True where the window of ``n`` bars ending at ``t`` holds a NaN (or is incomplete)."""
    count = window_sum(nan.astype(np.float64), n)
    with np.errstate(invalid="ignore"):
        bad = ~(count < 0.5)
    return bad


def mean(x: Array, n: int) -> Array:
    """Trailing mean of ``n`` bars; NaN during warm-up and on windows holding a NaN."""
    nan = np.isnan(x)
    if not nan.any():
        return window_sum(x, n, 1.0 / n)
    out = window_sum(np.where(nan, 0.0, x), n, 1.0 / n)
    out[_nan_windows(nan, n)] = np.nan
    return out


def moments(d: Array, n: int, ddof: int) -> tuple[Array, Array]:
    """Trailing mean and standard deviation of NaN-free ``d`` (first ``n-1`` rows NaN).

    ``d`` should be the data minus a reference value (see ``mean_and_std``). A variance at
    or below the rounding noise of ``E[d**2] - E[d]**2`` (``64*n*eps*E[d**2]``) is exactly 0,
    so a flat window has deviation 0.
    """
    m1 = window_sum(d, n, 1.0 / n)
    m2 = window_sum(d * d, n, 1.0 / n)
    var = m2 - m1 * m1
    with np.errstate(invalid="ignore"):
        var[var <= (64.0 * n * np.finfo(np.float64).eps) * m2] = 0.0
    if ddof:
        var *= n / (n - ddof)
    return m1, np.sqrt(var, out=var)


def mean_and_std(x: Array, n: int, ddof: int) -> tuple[Array, Array]:
    """Trailing mean and standard deviation (``ddof`` 0: population, 1: sample).

    Computed from the window means of ``d`` and ``d**2`` where ``d = x - ref`` and ``ref``
    is the first finite value of each column, which removes most of the cancellation of
    ``E[x**2] - E[x]**2``. Windows holding a NaN are NaN.
    """
    if x.shape[0] == 0:
        return x.copy(), x.copy()
    nan = np.isnan(x)
    has_nan = bool(nan.any())
    first = np.argmax(~nan, axis=0)
    ref = x[first] if x.ndim == 1 else np.take_along_axis(x, first[None, :], axis=0)[0]
    ref = np.where(np.isfinite(ref), ref, 0.0)
    d = x - ref
    if has_nan:
        d[nan] = 0.0
    m1, std = moments(d, n, ddof)
    mid = m1 + ref
    if has_nan:
        bad = _nan_windows(nan, n)
        mid[bad] = np.nan
        std[bad] = np.nan
    return mid, std


def _extreme(x: Array, n: int, op: np.ufunc) -> Array:
    T = x.shape[0]
    out = np.full(x.shape, np.nan)
    if T < n:
        return out
    cur = x
    width = 1
    while width * 2 <= n:
        cur = op(cur[:-width], cur[width:])  # cur[t] covers x[t : t+2*width]
        width *= 2
    # two windows of `width` starting at t and at t+n-width cover x[t : t+n]
    out[n - 1 :] = op(cur[: T - n + 1], cur[n - width : n - width + T - n + 1])
    return out


def rolling_max(x: Array, n: int) -> Array:
    """Highest value of the trailing ``n`` bars (NaN if the window holds a NaN)."""
    return _extreme(x, n, np.maximum)


def rolling_min(x: Array, n: int) -> Array:
    """Lowest value of the trailing ``n`` bars (NaN if the window holds a NaN)."""
    return _extreme(x, n, np.minimum)
