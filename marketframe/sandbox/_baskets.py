"""Indices and ETFs as baskets of the synthetic market's stocks.

- An **index** (TAIEX ``IX0001``, TPEx index ``IX0043``) is its board's components weighted
  by capitalisation: each day's return is the components' returns weighted by their
  capitalisation at the previous close (shares outstanding x close), measured from the
  previous close, or from the reference price on a capital change or a stock dividend (the
  divisor adjustment of a price index; cash dividends lower a price index). Its components are
  the universe's stocks with a ``weight`` and the **rest of the board**: a few dozen stocks
  that the sandbox does not serve, drawn like the others (the same market and industry
  factors, +/-10 % limits), standing for the hundreds of real companies it does not list.
  Shares outstanding are set so that each component's capitalisation is its ``weight`` of
  its board's :data:`BOARD_CAP` on :data:`WEIGHT_DAY`; before and after that day the weights
  move with the prices (2330's grows from about a sixth in 2015 to over 40 %).
- An **ETF** holds a basket of the served stocks (``Instrument.basket``): "cap" holds the
  board's index components at their capitalisation (0050), "equal" the same companies but the
  excluded ones at equal weights, rebalanced each June and December (0056). Share counts move
  every day with creations and redemptions and a small drift of each holding; the fund's net
  asset value moves with the holdings' returns from their reference prices (a fund keeps the
  dividends its holdings pay until it pays its own), less its fee; its price is the net asset
  value per unit times a premium or discount of about 0.15 % that changes slowly (``_market``).
  The ownership dataset ``etf-holdings`` serves these share counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from . import _calendar as cal
from ._daily import Daily
from ._factors import MarketPath, loadings
from ._universe import INDUSTRY_SHARE

#: stocks standing for the rest of each board in its index, and the industries they are of
REST_SIZE = 60
REST_INDUSTRIES = {
    "TSE": ("24", "28", "25", "26", "31", "17", "03", "15", "01", "10", "20", "27"),
    "OTC": ("24", "26", "22", "32", "25", "28", "20", "31"),
}
#: an index's high (low) is this share of the way from its open/close to the components'
#: weighted highs (lows): the components do not all peak at the same moment
HIGH_SHARE = 0.6
#: ETFs: the fund's value on its first day (TWD), its units' daily drift and deviation,
#: and each holding's drift away from the basket's weights (AR(1) of the log)
FUND_VALUE = 30e9
UNITS_DRIFT, UNITS_DEV = 0.0003, 0.004
HOLDING_PERSISTENCE, HOLDING_DEV = 0.98, 0.001
#: months in which an equal-weight ETF resets its weights
REBALANCE_MONTHS = (6, 12)
#: the daily log-return limits (+/-10 %) and the pull of a price towards its trend (as the
#: served stocks', ``_market``)
LIMIT = math.log(1.1), math.log(0.9)
PULL = 0.004


@dataclass
class Prices:
    """The prices of a basket's members on calendar positions ``p0..p0+len-1`` (rows:
    positions, columns: members; cents, NaN where a member has no row that day) and the
    price each day's return is measured from."""

    p0: int
    close: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    base: np.ndarray

    @property
    def has(self) -> np.ndarray:
        out: np.ndarray = ~np.isnan(self.close)
        return out

    def last_close(self) -> np.ndarray:
        """Each member's close on each day, or its last close before (NaN before its first)."""
        has = self.has
        rows = np.arange(len(self.close))[:, None]
        idx = np.maximum.accumulate(np.where(has, rows, -1), axis=0)
        out: np.ndarray = np.take_along_axis(self.close, np.maximum(idx, 0), axis=0)
        out[idx < 0] = np.nan
        return out

    def join(self, other: Prices) -> Prices:
        return Prices(
            self.p0,
            *(
                np.hstack((getattr(self, k), getattr(other, k)))
                for k in ("close", "open", "high", "low", "base")
            ),
        )


def positions(dates: np.ndarray) -> np.ndarray:
    """Calendar positions (in ``_calendar.all_trading_days()``) of trading days."""
    return np.searchsorted(cal.all_trading_days(), dates)


def member_prices(dailies: Sequence[Daily], p0: int, p1: int, total: bool) -> Prices:
    """The members' prices on positions ``p0..p1-1``. ``total``: returns from the reference
    price (a fund's: dividends kept); else from the previous close but on capital changes
    and stock dividends (a price index's)."""
    shape = (p1 - p0, len(dailies))
    cols = {k: np.full(shape, np.nan) for k in ("close", "open", "high", "low", "base")}
    for j, d in enumerate(dailies):
        at = positions(d.dates) - p0
        keep = (at >= 0) & (at < shape[0])
        rows = at[keep]
        for k in ("close", "open", "high", "low"):
            cols[k][rows, j] = getattr(d, k)[keep]
        base = d.ref.astype(float) if total else d.prev_close.astype(float)
        if not total:
            adjusted = [ch.effective for ch, _, _ in d.capital_changes]
            adjusted += [dv.ex_date for dv in d.dividends if dv.stock]
            for day in adjusted:
                i = d.index_of(day)
                if i is not None:
                    base[i] = d.ref[i]
        cols["base"][rows, j] = base[keep]
    return Prices(p0, cols["close"], cols["open"], cols["high"], cols["low"], cols["base"])


def returns(prices: Prices, quantity: np.ndarray) -> tuple[np.ndarray, ...]:
    """The basket's (open, high, low, close) returns of each day from its base, its members'
    weighted by their value at the previous close (``quantity``: one per member, or one per
    day and member; a member without a row that day is unchanged, one not yet listed out)."""
    value = np.nan_to_num(prices.last_close() * quantity)
    weight = np.zeros_like(value)
    weight[1:] = value[:-1]
    total = weight.sum(axis=1)
    total[total == 0] = 1.0
    has = prices.has
    out = []
    for k in ("open", "high", "low", "close"):
        move = np.where(has, getattr(prices, k) / np.where(has, prices.base, 1.0) - 1, 0.0)
        out.append((weight * move).sum(axis=1) / total)
    return tuple(out)


def ohlc(base: float, r: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """An index's levels from its first base and its basket's returns: (previous close,
    open, high, low, close), unrounded."""
    r_open, r_high, r_low, r_close = r
    close = base * np.cumprod(1 + r_close)
    prev = np.concatenate(([base], close[:-1]))
    opn = prev * (1 + r_open)
    top, bottom = np.maximum(opn, close), np.minimum(opn, close)
    high = top + HIGH_SHARE * np.maximum(prev * (1 + r_high) - top, 0)
    low = bottom - HIGH_SHARE * np.maximum(bottom - prev * (1 + r_low), 0)
    return prev, opn, high, low, close


def rest_of_board(
    rng: np.random.Generator,
    board: str,
    market: MarketPath,
    industry: Callable[[str], np.ndarray],
    p0: int,
    p1: int,
) -> tuple[Prices, np.ndarray]:
    """The stocks standing for the rest of ``board`` on positions ``p0..p1-1``: their prices
    and relative sizes (summing to 1). Each loads on the market and an industry factor, is
    pulled towards its own trend like the served stocks, and stays within +/-10 % a day."""
    k, n = REST_SIZE, p1 - p0
    vol = rng.uniform(0.010, 0.020, k)
    beta = rng.uniform(0.3, 0.55, k)
    codes = REST_INDUSTRIES[board]
    ind = rng.integers(0, len(codes), k)
    growth = np.log1p(rng.uniform(0.0, 0.08, k)) / 250
    size = rng.lognormal(0.0, 1.0, k)
    a, c, e = loadings(vol, beta, INDUSTRY_SHARE)
    sectors = np.stack([industry(code)[p0:p1] for code in codes], axis=1)[:, ind]
    scale = market.scale[p0:p1, None]
    common = scale * (a * market.factor[p0:p1, None] + c * sectors)
    move = common + scale * e * rng.standard_normal((n, k))
    opening = market.gap[p0:p1, None] * common + 0.3 * vol * scale * rng.standard_normal((n, k))
    gap = np.clip(opening, LIMIT[1], LIMIT[0])
    wick = np.abs(rng.standard_normal((2, n, k))) * vol * 0.45 * scale
    up, down = LIMIT
    trend = np.log(rng.uniform(20.0, 300.0, k) * 100) + growth * np.arange(1, n + 1)[:, None]
    close = np.empty((n, k))
    x = first = trend[0] - growth
    for t in range(n):  # sequential: the pull towards the trend reads the last close
        x = x + np.clip(move[t] + PULL * (trend[t] - x), down, up)
        close[t] = x
    base = np.vstack((first, close[:-1]))
    r = close - base
    top = np.minimum(np.maximum(gap, r) + wick[0], up)
    bottom = np.maximum(np.minimum(gap, r) - wick[1], down)
    close, opn, high, low, base = np.exp((close, base + gap, base + top, base + bottom, base))
    return Prices(p0, close, opn, high, low, base), size / size.sum()


def fund_quantities(
    prices: Prices,
    shares: np.ndarray,
    equal: bool,
    dates: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """An ETF's share counts of its members (whole lots, NaN where not held) on each
    position: at their capitalisation (``shares`` outstanding) or at equal weights reset each
    :data:`REBALANCE_MONTHS` and when a member lists, scaled every day by the fund's units
    (creations and redemptions) and each holding's small drift."""
    n, m = prices.close.shape
    held = prices.last_close()
    units = np.exp(np.cumsum(rng.normal(UNITS_DRIFT, UNITS_DEV, n)))
    noise = rng.normal(0.0, HOLDING_DEV, (n, m))
    drift = np.zeros((n, m))
    for t in range(1, n):
        drift[t] = HOLDING_PERSISTENCE * drift[t - 1] + noise[t]
    scale = units[:, None] * np.exp(drift)
    price = held / 100  # TWD a share
    if not equal:
        k = FUND_VALUE / np.nansum(shares * price[0])
        qty = k * shares * scale
    else:
        qty = np.full((n, m), np.nan)
        months = dates.astype("datetime64[M]").astype(int) % 12 + 1
        new_month = np.r_[True, months[1:] != months[:-1]]
        listed = np.isnan(held[:-1]) & ~np.isnan(held[1:])
        resets = new_month & np.isin(months, REBALANCE_MONTHS)
        resets[0] = True
        resets[1:] |= listed.any(axis=1)
        bounds = np.r_[np.flatnonzero(resets), n]
        value = FUND_VALUE
        for s, e in zip(bounds[:-1], bounds[1:], strict=True):
            if s > 0:  # the holdings' value at this day's prices
                value = float(np.nansum(qty[s - 1] / scale[s - 1] * scale[s] * price[s]))
            active = ~np.isnan(held[s])
            base = np.where(active, value / active.sum() / price[s], np.nan)
            qty[s:e] = base * scale[s:e] / scale[s]
    qty = np.where(np.isnan(held), np.nan, np.maximum(1000.0, np.rint(qty / 1000) * 1000))
    return qty


def weight_day_close(daily: Daily, day: date) -> float:
    """The close (TWD) on ``day`` or the last one before."""
    i = int(np.searchsorted(daily.dates, np.datetime64(day, "D"), side="right")) - 1
    return float(daily.close[max(i, 0)]) / 100
