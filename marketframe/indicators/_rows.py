"""The built-in indicators, one row each (``_registry.Indicator``), registered on import.

Each row is preceded by the few functions that are its own: its warm-up, the checks its
periods need together, and the call of its fast path over many symbols (``_segmented``).
Adding an indicator is its kernel (``_kernels``, over ``_reference`` and any fast path), its
machine (``stateful._machines``) and a row here (docs/contributing.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import _segmented as seg
from . import conventions as cv
from ._kernels import (
    BBandsResult,
    KdjResult,
    MacdResult,
    bbands,
    check_bbands,
    check_macd,
    ema,
    kdj,
    macd,
    macd_fast_start,
    rsi,
    sma,
)
from ._params import KdjParams, MacdParams
from ._registry import Chart, Indicator, Outputs, Period, decay_bars, register
from .stateful import machines

P = tuple[float, ...]
Array = NDArray[np.float64]
#: a row's kernel, handed to its fast path for the bars it recomputes
Kernel = Callable[..., Outputs]
N = Period("n", 20)


def _window(p: P, conv: Any) -> int:
    return int(p[0]) - 1  # the window's earlier bars, exactly


def _sma_segmented(s: seg.Segments, p: P, conv: Any, kernel: Kernel, x: Array) -> Outputs:
    return seg.sma(x, s, int(p[0]))


SMA = Indicator(
    name="sma",
    kernel=sma,
    machine=machines.Sma,
    periods=(N,),
    convention=cv.SmaConvention,
    variants={"talib": cv.SmaConvention()},
    outputs=("sma",),
    warmup=_window,
    segmented=_sma_segmented,
)


def _ema_warmup(p: P, conv: Any) -> int:
    n = int(p[0])
    return 2 * n + decay_bars(1.0 - 2.0 / (n + 1))


def _ema_segmented(s: seg.Segments, p: P, conv: Any, kernel: Kernel, x: Array) -> Outputs:
    n = int(p[0])
    return seg.ema(x, s, n, conv.seed, n - 1 if conv.seed == "sma" else 0, kernel)


EMA = Indicator(
    name="ema",
    kernel=ema,
    machine=machines.Ema,
    periods=(N,),
    convention=cv.EmaConvention,
    variants={"talib": cv.EmaConvention(), "ema_seed=first": cv.EmaConvention(seed="first")},
    outputs=("ema",),
    warmup=_ema_warmup,
    segmented=_ema_segmented,
)


def _rsi_warmup(p: P, conv: Any) -> int:
    n = int(p[0])
    return 2 * n + 1 + decay_bars((n - 1.0) / n)


def _rsi_segmented(s: seg.Segments, p: P, conv: Any, kernel: Kernel, x: Array) -> Outputs:
    return seg.rsi(x, s, int(p[0]), conv.seed, conv.flat, kernel)


RSI = Indicator(
    name="rsi",
    kernel=rsi,
    machine=machines.Rsi,
    periods=(Period("n", 14),),
    convention=cv.RsiConvention,
    variants={
        "talib": cv.RsiConvention(),
        "rsi_seed=first": cv.RsiConvention(seed="first"),
        "rsi_flat=50": cv.RsiConvention(flat=50.0),
    },
    outputs=("rsi",),
    warmup=_rsi_warmup,
    segmented=_rsi_segmented,
    bounded=True,
    chart=Chart("rsi", levels=(30, 70), guides=True),
)


def _macd_warmup(p: P, conv: Any) -> int:
    slow, sig = int(p[1]), int(p[2])
    return 2 * (slow + sig) + decay_bars(1.0 - 2.0 / (slow + 1)) + decay_bars(1.0 - 2.0 / (sig + 1))


def _macd_check(p: P, conv: Any) -> None:
    check_macd(int(p[0]), int(p[1]))


def _macd_segmented(s: seg.Segments, p: P, conv: Any, kernel: Kernel, x: Array) -> Outputs:
    fast, slow, signal = (int(v) for v in p)
    start = macd_fast_start(fast, slow, conv)
    return seg.macd(x, s, MacdParams(fast, slow, signal, conv.seed, start), kernel)


MACD = Indicator(
    name="macd",
    kernel=macd,
    machine=machines.Macd,
    periods=(Period("fast", 12), Period("slow", 26), Period("signal", 9)),
    convention=cv.MacdConvention,
    variants={
        "talib": cv.MacdConvention(),
        "ema_seed=first": cv.MacdConvention(seed="first"),
        "macd_align=own": cv.MacdConvention(align="own"),
    },
    outputs=("macd", "macd_signal", "macd_hist"),
    result=MacdResult,
    warmup=_macd_warmup,
    check=_macd_check,
    segmented=_macd_segmented,
    chart=Chart("macd"),
)


def _bbands_check(p: P, conv: Any) -> None:
    check_bbands(int(p[0]), conv.ddof)


def _bbands_segmented(s: seg.Segments, p: P, conv: Any, kernel: Kernel, x: Array) -> Outputs:
    return seg.bbands(x, s, int(p[0]), float(p[1]), conv.ddof)


BBANDS = Indicator(
    name="bbands",
    kernel=bbands,
    machine=machines.BBands,
    periods=(N, Period("mult", 2.0, integer=False)),
    convention=cv.BBandsConvention,
    variants={"talib": cv.BBandsConvention(), "bb_ddof=1": cv.BBandsConvention(ddof=1)},
    outputs=("bb_upper", "bb_middle", "bb_lower"),
    result=BBandsResult,
    warmup=_window,
    check=_bbands_check,
    segmented=_bbands_segmented,
    chart=Chart(aliases=("bb_", "bbands")),
)


def _kdj_warmup(p: P, conv: Any) -> int:
    n, m1, m2 = (int(v) for v in p)
    if conv.smoothing == "sma":
        return n + m1 + m2
    return 2 * (n + m1 + m2) + decay_bars(1.0 - 1.0 / m1) + decay_bars(1.0 - 1.0 / m2)


def _kdj_segmented(
    s: seg.Segments, p: P, conv: Any, kernel: Kernel, h: Array, lo: Array, c: Array
) -> Outputs:
    n, m1, m2 = (int(v) for v in p)
    params = KdjParams(n, m1, m2, conv.smoothing, conv.seed, conv.flat_rsv)
    return seg.kdj(h, lo, c, s, params, kernel)


KDJ = Indicator(
    name="kdj",
    kernel=kdj,
    machine=machines.Kdj,
    inputs=("high", "low", "close"),
    periods=(Period("n", 9), Period("m1", 3), Period("m2", 3)),
    convention=cv.KdjConvention,
    variants={
        "talib": cv.KdjConvention(),
        "kdj=recursive50": cv.KdjConvention(smoothing="recursive", seed=50.0),
        "rsv_flat=50": cv.KdjConvention(flat_rsv=50.0),
        "kdj=recursive50,rsv_flat=50": cv.KdjConvention(
            smoothing="recursive", seed=50.0, flat_rsv=50.0
        ),
    },
    # as Taiwanese brokers (and the service) show it: K = 2/3 K' + RSV/3, seeded at 50
    default="kdj=recursive50",
    outputs=("kdj_k", "kdj_d", "kdj_j"),
    result=KdjResult,
    warmup=_kdj_warmup,
    segmented=_kdj_segmented,
    bounded=True,
    chart=Chart("kdj", levels=(20, 80), aliases=("k", "d", "j")),
)

for _row in (SMA, EMA, RSI, MACD, BBANDS, KDJ):
    register(_row)
