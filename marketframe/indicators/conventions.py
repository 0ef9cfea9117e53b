"""Indicator conventions as small frozen dataclasses, their field defaults TA-Lib's.

The service publishes no conventions for its beta technical endpoints, so a cross-check
must try several. Each indicator's row (``_rows``) lists its known convention sets under
short names (``"talib"``, ``"ema_seed=first"``, ``"kdj=recursive50"``, ``"bb_ddof=1"`` ...)
and its default: TA-Lib's, but for KDJ, the recursion Taiwanese brokers (and the service)
show, seeded at 50 (``"kdj=recursive50"``). ``variants(indicator)`` lists them; every kernel
also accepts such a name in place of a dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

Seed = Literal["sma", "first"]


@dataclass(frozen=True)
class SmaConvention:
    """SMA has no free convention: a plain trailing mean, first valid bar ``n-1``."""


@dataclass(frozen=True)
class EmaConvention:
    """EMA with ``k = 2/(n+1)``.

    seed: ``"sma"`` (TA-Lib) starts at bar ``n-1`` with the mean of the first ``n`` values;
    ``"first"`` starts at bar 0 with the first value (pandas ``ewm(adjust=False)``).
    """

    seed: Seed = "sma"


@dataclass(frozen=True)
class RsiConvention:
    """Wilder RSI: ``avg = (avg*(n-1) + x)/n`` on gains and losses, ``RSI = 100*G/(G+L)``.

    seed: ``"sma"`` (TA-Lib) seeds the averages with the mean of the first ``n`` changes
    (first valid bar ``n``); ``"first"`` seeds them with the first change (bar 1).
    flat: the value reported while ``G + L == 0``, i.e. no change at all since the run began
    (TA-Lib reports 0.0).
    """

    seed: Seed = "sma"
    flat: float = 0.0


@dataclass(frozen=True)
class MacdConvention:
    """MACD = EMA(fast) - EMA(slow); signal = EMA(signal) of the MACD line.

    seed: the seed of all three EMAs (see ``EmaConvention``).
    align: ``"slow"`` (TA-Lib ``MACD``): the fast EMA's seed window ends on the slow EMA's
    seed bar (``slow-1``), so both EMAs start together; ``"own"``: the fast EMA starts at its
    own bar ``fast-1`` (as a standalone EMA would).
    """

    seed: Seed = "sma"
    align: Literal["slow", "own"] = "slow"


@dataclass(frozen=True)
class BBandsConvention:
    """Bollinger bands: SMA middle, ``mult`` deviations; ``ddof`` 0 = population (TA-Lib)."""

    ddof: int = 0


@dataclass(frozen=True)
class KdjConvention:
    """KDJ from ``RSV = 100*(C - LLV(L,n)) / (HHV(H,n) - LLV(L,n))``; ``J = 3K - 2D``.

    smoothing: ``"sma"`` (TA-Lib ``STOCH`` slow K/D): ``K = SMA(RSV, m1)``, ``D = SMA(K, m2)``;
    ``"recursive"`` (common in Taiwan): ``K = (1-1/m1) K' + RSV/m1`` and
    ``D = (1-1/m2) D' + K/m2``, with ``K' = D' = seed`` before the first bar of a run.
    flat_rsv: the RSV when ``HHV == LLV`` (a flat window). TA-Lib's STOCH gives 0.0.
    """

    smoothing: Literal["sma", "recursive"] = "sma"
    seed: float = 50.0
    flat_rsv: float = 0.0


Convention: TypeAlias = (
    SmaConvention
    | EmaConvention
    | RsiConvention
    | MacdConvention
    | BBandsConvention
    | KdjConvention
)
