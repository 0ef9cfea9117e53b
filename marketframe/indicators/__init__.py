"""Vectorized numpy indicator kernels with explicit conventions (TA-Lib's by default).

Every kernel takes a 1-D series or a 2-D panel shaped ``(n_bars, n_symbols)`` and returns
arrays of the same shape, warm-up bars NaN. See ``docs/indicators.md`` for the conventions,
the missing-value policy and performance figures.
"""

from __future__ import annotations

from . import _segmented as segmented  # the kernels over many series laid end to end
from ._kernels import (
    BBandsResult,
    KdjResult,
    MacdResult,
    bbands,
    ema,
    kdj,
    macd,
    rsi,
    rsv,
    sma,
)
from ._kernels import _period as check_period
from .conventions import (
    INDICATORS,
    BBandsConvention,
    Convention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    SmaConvention,
    variants,
)

__all__ = [
    "BBandsConvention",
    "BBandsResult",
    "Convention",
    "EmaConvention",
    "INDICATORS",
    "KdjConvention",
    "KdjResult",
    "MacdConvention",
    "MacdResult",
    "RsiConvention",
    "SmaConvention",
    "bbands",
    "check_period",
    "ema",
    "kdj",
    "macd",
    "rsi",
    "rsv",
    "segmented",
    "sma",
    "variants",
]
