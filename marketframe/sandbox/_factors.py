"""The market-wide draws of the synthetic market: one value per trading day of the calendar.

A stock's daily log return is ``scale * (a * market + c * industry + e * own)`` (``_market``),
so that returns are correlated as on a real market; ``scale`` is a slowly moving volatility
common to all stocks (calm and turbulent months, as real markets have). The **market factor**
is a standard normal draw, with two kinds of market-wide days on top:

- **scripted days**, on the dates of the real TAIEX's largest moves (:data:`MARKET_DAYS`): the
  factor is set so that the sandbox's TAIEX, computed from its components, moves about as the
  real one did, with most stocks at their limit on the largest;
- **synthetic days**, about one in 750 trading days elsewhere: a move of 3.5 to 7 daily
  deviations, down more often than up.

``gap`` is the share of the day's common move already in the opening price (overnight news):
0.4 on an ordinary day, the real opening's share on a scripted day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from . import _calendar as cal

#: volatility regimes: the log of the market's volatility is an AR(1) with this persistence
#: and innovation (stationary deviation 0.25: a turbulent month is about twice as
#: volatile as a calm one)
VOL_PERSISTENCE = 0.98
VOL_SHOCK = 0.05
#: share of the day's common move in the opening price on an ordinary day
GAP = 0.4
#: one trading day in this many is a synthetic market-wide day (away from the scripted ones)
SHOCK_EVERY = 750


@dataclass(frozen=True)
class MarketDay:
    """A scripted market-wide day: the market factor (in daily deviations), the share of the
    move at the open, and what the real market did (with its source)."""

    factor: float
    gap: float
    real: str


#: The real TAIEX's largest moves of 2024-2025 (CNA, Focus Taiwan, and Taipei Times reports).
MARKET_DAYS: dict[date, MarketDay] = {
    date(2024, 8, 2): MarketDay(
        -4.1, 0.5, "-4.43 % to 21,638.09 (focustaiwan.tw/business/202408020017)"
    ),
    date(2024, 8, 5): MarketDay(
        -8.1,
        0.36,
        "-8.35 % to 19,830.88, opened -3.02 %, TSMC -9.75 %; the largest fall on record "
        "until 2025 (focustaiwan.tw/business/202408050015)",
    ),
    date(2025, 4, 7): MarketDay(
        -13.0,
        0.55,
        "-9.70 % to 19,232.35 after the US tariff announcement; 1,702 listed and OTC stocks "
        "limit-down (945 of about 1,034 on the TWSE), TSMC locked limit-down from the open "
        "(taipeitimes.com 2025/04/08 2003834802; news.az, Xinhua)",
    ),
    date(2025, 4, 8): MarketDay(
        -3.9,
        0.5,
        "-4.02 % to 18,459.95 (from the next day's report: close 17,391.76 after -1,068.19)",
    ),
    date(2025, 4, 9): MarketDay(
        -5.2, 0.5, "-5.79 % to 17,391.76 (focustaiwan.tw/business/202504090016)"
    ),
    date(2025, 4, 10): MarketDay(
        10.0,
        1.0,
        "+9.25 % after the tariff pause, opened +9.3 %; 1,389 of about 1,870 listed and OTC "
        "stocks limit-up (taipeitimes.com 2025/04/11 2003834987)",
    ),
}


@dataclass(frozen=True)
class MarketPath:
    """Per trading day of the calendar (positions of ``_calendar.all_trading_days()``): the
    market factor, the volatility of the day's regime (scaling every stock's ordinary
    return: calm and turbulent months), and the share of the common move at the open."""

    factor: np.ndarray
    scale: np.ndarray
    gap: np.ndarray


def market_path(rng: np.random.Generator, draws: np.ndarray) -> MarketPath:
    """The market factor from the standard normal ``draws`` (one per calendar day), with the
    volatility regimes, synthetic days and scripted days drawn from ``rng``."""
    days = cal.all_trading_days()
    n = len(days)
    noise = rng.standard_normal(n).tolist()
    level = [0.0] * n
    h = 0.0
    for i in range(n):
        h = VOL_PERSISTENCE * h + VOL_SHOCK * noise[i]
        level[i] = h
    var = VOL_SHOCK**2 / (1 - VOL_PERSISTENCE**2)
    scale = np.exp(np.array(level) - var)  # E[scale^2] = 1
    factor = draws.copy()
    gap = np.full(n, GAP)
    shock = rng.random(n) < 1 / SHOCK_EVERY
    size = rng.uniform(3.5, 7.0, n) * np.where(rng.random(n) < 0.7, -1.0, 1.0)
    scripted = np.searchsorted(days, np.array(sorted(MARKET_DAYS), dtype="datetime64[D]"))
    for at in scripted:  # keep synthetic days a month away from the real ones
        shock[max(0, at - 20) : at + 21] = False
    factor = np.where(shock, size, factor)
    scale[shock] = 1.0  # a market-wide day's size is its own
    for (d, day), at in zip(sorted(MARKET_DAYS.items()), scripted, strict=True):
        if at < n and days[at] == np.datetime64(d):
            factor[at], scale[at], gap[at] = day.factor, 1.0, day.gap
    return MarketPath(factor, scale, gap)


def loadings(vol: Any, beta: Any, industry: float) -> tuple[Any, Any, Any]:
    """(market, industry, own) loadings of daily log returns of deviation ``vol`` whose
    variance is the market factor's for a share ``beta`` and the industry's for ``industry``
    (numbers, or arrays of them)."""
    own = np.maximum(0.0, 1.0 - beta - industry)
    return vol * np.sqrt(beta), vol * np.sqrt(industry), vol * np.sqrt(own)
