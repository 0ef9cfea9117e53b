"""Vectorized numpy indicator kernels with explicit conventions (TA-Lib's by default).

Every kernel takes a 1-D series or a 2-D panel shaped ``(n_bars, n_symbols)`` and returns
arrays of the same shape, warm-up bars NaN. See ``docs/indicators.md`` for the conventions,
the missing-value policy and performance figures.

Each indicator is a row of ``registry`` (its inputs, periods, conventions, outputs, warm-up,
kernel and state-carrying machine): the ``md`` accessor, ``marketframe.options``, the
stateful specs, the store's derived datasets, the live engine, the cross-check and the
charts read it (docs/contributing.md, "Adding an indicator").
"""

from __future__ import annotations

from . import _registry as registry  # the indicator table
from . import _rows  # noqa: F401  (importing the rows registers them)
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
from ._registry import Chart, Indicator, Period, register, variants
from ._registry import period as check_period
from .conventions import (
    BBandsConvention,
    Convention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    SmaConvention,
)

#: the built-in indicators' names, sorted (``registry.names()`` also has any registered since)
INDICATORS: tuple[str, ...] = registry.names()

__all__ = [
    "BBandsConvention",
    "BBandsResult",
    "Chart",
    "Convention",
    "EmaConvention",
    "INDICATORS",
    "Indicator",
    "KdjConvention",
    "KdjResult",
    "MacdConvention",
    "MacdResult",
    "Period",
    "RsiConvention",
    "SmaConvention",
    "bbands",
    "check_period",
    "ema",
    "kdj",
    "macd",
    "register",
    "registry",
    "rsi",
    "rsv",
    "segmented",
    "sma",
    "variants",
]
