"""The indicator kernels: numpy arrays in, numpy arrays out.

Input is a 1-D series or a 2-D panel shaped ``(n_bars, n_symbols)`` (time on axis 0, one
column per symbol; every column is computed independently, all at once). Output has the
input's shape; warm-up bars are NaN.

Missing values (the "restart" policy): a NaN bar is NaN in every output, and each NaN-free
run of the input is computed as if it were a separate series: windows never span a gap,
and recursive averages start a fresh warm-up and seed after it. Nothing is ever filled
with 0.0 (TA-Lib's RSI outputs 0.0 for ever after one NaN). An infinite input (a price of
``inf`` or ``-inf`` is no price) is missing too: every path (batch, state-carrying, derived
datasets, live) sees the same NaN, where an ``inf`` in a blocked recursion turned whole
blocks, earlier bars included, into NaN.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marketframe.exceptions import InvalidParams

from . import _fast as fast_path
from . import _reference as reference
from ._params import KdjParams, MacdParams
from ._registry import period as _period
from .conventions import (
    BBandsConvention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    SmaConvention,
)
from .options import resolve

Array = NDArray[np.float64]
#: a kernel's result: one array, or a tuple of them
R = TypeVar("R", Array, tuple[Array, ...])


class MacdResult(NamedTuple):
    line: Array
    signal: Array
    hist: Array


class BBandsResult(NamedTuple):
    upper: Array
    middle: Array
    lower: Array


class KdjResult(NamedTuple):
    k: Array
    d: Array
    j: Array


def _series(x: ArrayLike, name: str = "x") -> Array:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidParams("indicators", name, f"must be numbers (float64): {e}") from None
    if a.ndim not in (1, 2):
        raise InvalidParams(
            "indicators", name, f"must be 1-D (bars) or 2-D (bars, symbols), got shape {a.shape}"
        )
    return missing_inf(a)


def missing_inf(a: Array) -> Array:
    """``a`` with its infinite values as NaN (a copy only when there are some): missing,
    under the restart policy of the module docstring."""
    inf = np.isinf(a)
    return np.where(inf, np.nan, a) if inf.any() else a


_MIN_RUN = 256  # mean NaN-free run length from which runs are computed one by one
_MAX_GAP_SHARE = 0.25  # share of a panel's columns with inner gaps done one by one


def _outputs(res: Array | tuple[Array, ...]) -> tuple[Array, ...]:
    return res if isinstance(res, tuple) else (res,)


def _fast(
    fn: Callable[..., R],
    arrays: tuple[Array, ...],
    *args: Any,
    column: Callable[..., R] | None = None,
) -> R | None:
    """Run the chunked fast path wherever it gives the policy's answer; None if it cannot.

    * No NaN: directly.
    * In every column the NaN bars form a suffix (a ragged panel: symbols with fewer bars,
      padded at the end, as the ``md`` accessors build them): the suffix is computed as 0.0
      and set back to NaN in every output (nothing before it depends on it).
    * A series with gaps: each NaN-free run is its own series under the policy, so runs are
      computed one by one (if they are long enough for that to pay).
    * A panel where a few columns have gaps: those columns go one by one through
      ``column`` (the public 1-D kernel), the rest together.
    Otherwise the whole-array path, which implements the policy for any NaN pattern.
    """
    # min() propagates NaN and, unlike isnan(a).any(), allocates nothing
    if all(a.size and not np.isnan(a.min()) for a in arrays):
        return fn(*arrays, *args)
    if not arrays[0].size:
        return None
    nan = np.isnan(arrays[0])
    for a in arrays[1:]:
        nan |= np.isnan(a)
    restart = nan[:-1] & ~nan[1:]  # a NaN followed by a bar: a run starts after a gap
    if not restart.any():
        length = nan.shape[0] - np.count_nonzero(nan, axis=0)
        res = fn(*(np.where(nan, 0.0, a) for a in arrays), *args)
        rows = np.arange(nan.shape[0]).reshape((-1,) + (1,) * (nan.ndim - 1))
        tail = rows >= length
        for o in _outputs(res):
            o[tail] = np.nan
        return res
    if nan.ndim == 1:
        edges = np.diff(np.concatenate(([0], (~nan).astype(np.int8), [0])))
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        if not starts.size or (stops - starts).mean() < _MIN_RUN:
            return None
        outs: tuple[Array, ...] | None = None
        for s, e in zip(starts, stops, strict=True):
            res = fn(*(a[s:e] for a in arrays), *args)
            if outs is None:
                outs = tuple(np.full(nan.shape, np.nan) for _ in _outputs(res))
            for o, r in zip(outs, _outputs(res), strict=True):
                o[s:e] = r
        assert outs is not None
        return outs if isinstance(res, tuple) else outs[0]
    gappy = restart.any(axis=0)
    if column is None or np.count_nonzero(gappy) > _MAX_GAP_SHARE * nan.shape[1]:
        return None
    good = np.flatnonzero(~gappy)
    part = _fast(fn, tuple(np.ascontiguousarray(a[:, good]) for a in arrays), *args)
    assert part is not None  # columns without gaps always have the fast path's answer
    outs = tuple(np.full(nan.shape, np.nan) for _ in _outputs(part))
    for o, r in zip(outs, _outputs(part), strict=True):
        o[:, good] = r
    for j in np.flatnonzero(gappy):
        for o, r in zip(outs, _outputs(column(*(a[:, j].copy() for a in arrays))), strict=True):
            o[:, j] = r
    return outs if isinstance(part, tuple) else outs[0]


def _path(
    fast: Callable[..., R],
    reference: Callable[..., R],
    arrays: tuple[Array, ...],
    *args: Any,
    column: Callable[..., R],
) -> R:
    """The fast path's answer where it gives one (``_fast`` above), else the reference's:
    ``fast`` and ``reference`` take the same arguments (``_fast.sma`` and ``_reference.sma``)."""
    res = _fast(fast, arrays, *args, column=column)
    return res if res is not None else reference(*arrays, *args)


def sma(x: ArrayLike, n: int = 20, *, convention: SmaConvention | str | None = None) -> Array:
    """Simple moving average of the trailing ``n`` bars; first valid bar ``n-1``."""
    resolve("sma", convention)
    xa, n = _series(x), _period(n)
    return _path(fast_path.sma, reference.sma, (xa,), n, column=lambda c: sma(c, n))


def ema(x: ArrayLike, n: int = 20, *, convention: EmaConvention | str | None = None) -> Array:
    """Exponential moving average with ``k = 2/(n+1)`` (seed: see ``EmaConvention``)."""
    conv = resolve("ema", convention)
    assert isinstance(conv, EmaConvention)
    n = _period(n)
    xa = _series(x)
    start = n - 1 if conv.seed == "sma" else 0
    return _path(
        fast_path.ema,
        reference.ema,
        (xa,),
        n,
        conv.seed,
        start,
        column=lambda c: ema(c, n, convention=conv),
    )


def rsi(x: ArrayLike, n: int = 14, *, convention: RsiConvention | str | None = None) -> Array:
    """Wilder's relative strength index, 0..100 (see ``RsiConvention``)."""
    conv = resolve("rsi", convention)
    assert isinstance(conv, RsiConvention)
    n = _period(n)
    xa = _series(x)
    return _path(
        fast_path.rsi,
        reference.rsi,
        (xa,),
        n,
        conv.seed,
        conv.flat,
        column=lambda c: rsi(c, n, convention=conv),
    )


def check_macd(fast: int, slow: int) -> None:
    """The MACD's fast period is the shorter."""
    if fast >= slow:
        raise InvalidParams("macd", "fast", f"({fast}) must be shorter than slow ({slow})")


def macd_fast_start(fast: int, slow: int, conv: MacdConvention) -> int:
    """The bar the fast EMA starts at: the slow EMA's seed bar (TA-Lib's alignment) or its
    own ``fast-1``; 0 when the EMAs are seeded with the first value."""
    if conv.seed == "first":
        return 0
    return slow - 1 if conv.align == "slow" else fast - 1


def macd(
    x: ArrayLike,
    fast: int = 12,
    slow: int = 26,
    signal: int = 9,
    *,
    convention: MacdConvention | str | None = None,
) -> MacdResult:
    """MACD line ``EMA(fast) - EMA(slow)``, its ``signal`` EMA, and ``hist = line - signal``.

    Under TA-Lib's convention the line is valid from bar ``slow-1`` and the signal from
    ``slow+signal-2``; ``talib.MACD`` shows the line only from the latter bar.
    """
    conv = resolve("macd", convention)
    assert isinstance(conv, MacdConvention)
    fast, slow, signal = _period(fast, "fast"), _period(slow, "slow"), _period(signal, "signal")
    check_macd(fast, slow)
    xa = _series(x)
    fast_start = macd_fast_start(fast, slow, conv)
    res = _path(
        fast_path.macd,
        reference.macd,
        (xa,),
        MacdParams(fast, slow, signal, conv.seed, fast_start),
        column=lambda c: tuple(macd(c, fast, slow, signal, convention=conv)),
    )
    return MacdResult(*res)


def check_bbands(n: int, ddof: int) -> None:
    """A window longer than the deviation's ``ddof``."""
    if n - ddof <= 0:
        raise InvalidParams("bbands", "n", f"(window {n}) too short for ddof={ddof}")


def bbands(
    x: ArrayLike,
    n: int = 20,
    mult: float = 2.0,
    *,
    convention: BBandsConvention | str | None = None,
) -> BBandsResult:
    """Bollinger bands: SMA(n) middle, ``middle +- mult * std`` (``ddof`` per convention)."""
    conv = resolve("bbands", convention)
    assert isinstance(conv, BBandsConvention)
    xa, n = _series(x), _period(n)
    check_bbands(n, conv.ddof)
    res = _path(
        fast_path.bbands,
        reference.bbands,
        (xa,),
        n,
        mult,
        conv.ddof,
        column=lambda c: tuple(bbands(c, n, mult, convention=conv)),
    )
    return BBandsResult(*res)


def _hlc(high: ArrayLike, low: ArrayLike, close: ArrayLike) -> tuple[Array, Array, Array]:
    h, lo, c = _series(high, "high"), _series(low, "low"), _series(close, "close")
    if not h.shape == lo.shape == c.shape:
        raise InvalidParams(
            "indicators", "high/low/close", f"shapes differ: {h.shape}, {lo.shape}, {c.shape}"
        )
    return h, lo, c


def rsv(high: ArrayLike, low: ArrayLike, close: ArrayLike, n: int = 9, flat: float = 0.0) -> Array:
    """Raw stochastic value ``100*(C - LLV(L,n))/(HHV(H,n) - LLV(L,n))``; ``flat`` if HHV == LLV."""
    h, lo, c = _hlc(high, low, close)
    return reference.rsv(h, lo, c, _period(n), flat)


def kdj(
    high: ArrayLike,
    low: ArrayLike,
    close: ArrayLike,
    n: int = 9,
    m1: int = 3,
    m2: int = 3,
    *,
    convention: KdjConvention | str | None = None,
) -> KdjResult:
    """KDJ stochastic: K and D smoothings of the RSV, ``J = 3K - 2D`` (see ``KdjConvention``).

    Under TA-Lib's convention K is valid from bar ``n+m1-2`` and D from ``n+m1+m2-3``;
    ``talib.STOCH`` shows both only from the latter bar.
    """
    conv = resolve("kdj", convention)
    assert isinstance(conv, KdjConvention)
    m1, m2, n = _period(m1, "m1"), _period(m2, "m2"), _period(n)
    h, lo, c = _hlc(high, low, close)
    res = _path(
        fast_path.kdj,
        reference.kdj,
        (h, lo, c),
        KdjParams(n, m1, m2, conv.smoothing, conv.seed, conv.flat_rsv),
        column=lambda hc, lc, cc: tuple(kdj(hc, lc, cc, n, m1, m2, convention=conv)),
    )
    return KdjResult(*res)
