"""A day's prices of a stock, warrant or ETF, from its model, on Taiwan's rules.

:func:`make_daily` turns a model's moves into daily rows: references from the previous close
and the corporate events, the close day by day, the open, high and low on whole arrays, all on
the ticks and within the limits. The models: :class:`Walk`, a stock's (or warrant's)
factor-model return pulled towards its trend; :class:`Fund`, an ETF's net asset value from
its holdings (``_baskets``), times a premium. ``Market`` draws them (``_market``).
"""

from __future__ import annotations

import math
from datetime import date

import numpy as np

from . import _baskets as bk
from . import _calendar as cal
from ._daily import CAPITAL_CHANGES, CapitalChange, Daily, Dividend
from ._instrument import Instrument

#: a fund's yearly fee
FUND_FEE = 0.004


def make_daily(
    inst: Instrument,
    model: Walk | Fund,
    events: dict[date, tuple[float, float]],
    warrant: tuple[list[float], list[float]] | None,
) -> Daily:
    """The daily rows of a stock, ETF or warrant: references from the previous close and
    the corporate events, the day's prices from ``model``, on the ticks, within the limits.
    Only the close feeds the next day: it is found day by day, the rest on whole arrays.
    ``events``: the ex-dividend days (``Market._events``); ``warrant``: a warrant's limit
    moves (``Market._warrant_moves``), None for another instrument."""
    days, z = model.days, model.z
    n = len(days)
    limited = inst.has_limits
    etf = inst.etf
    cap = {c.effective: c for c in CAPITAL_CHANGES if c.symbol == inst.symbol}
    cols = np.zeros((5, n), dtype=np.int64)
    dividends: list[Dividend] = []
    capital: list[tuple[CapitalChange, int, int]] = []
    prev = cal.round_tick(inst.start_price * 100, etf)
    rnd = cal.round_tick
    day_list = days.astype(object)
    for i in range(n):
        d = day_list[i]
        ref = prev
        model.start(i)
        if d in cap:
            ch = cap[d]
            ref = rnd(prev * ch.factor, etf)
            capital.append((ch, prev, ref))
            model.adjust(prev, ref, 0, ch.factor)
        ev = events.get(d)
        if ev is not None:
            cash_rate, stock = ev
            cash = max(1, int(round(prev * cash_rate))) if cash_rate > 0 else 0
            ref = rnd((prev - cash) / (1 + stock / 1000.0), etf)
            dividends.append(Dividend(inst.symbol, d, cash, stock, prev, ref))
            model.adjust(prev, ref, cash, 1 / (1 + stock / 1000.0))
        if warrant is not None:
            up, down = warrant_limits(ref, warrant[0][i], warrant[1][i])
        else:
            up, down = cal.limits(ref, etf) if limited else (0, 0)
        close = rnd(model.close(i, ref), etf)
        if limited:
            close = min(max(close, down), up)
        cols[:, i] = (ref, prev, close, up, down)
        prev = close
    ref_, prev_, close_, up_, down_ = cols
    opn = cal.round_ticks(model.opens(ref_), etf)
    if limited:
        opn = np.clip(opn, down_, up_)
    top, bottom = model.extremes(opn, close_)
    high = np.maximum(cal.round_ticks(top, etf, "down"), np.maximum(opn, close_))
    low = np.minimum(cal.round_ticks(bottom, etf, "up"), np.minimum(opn, close_))
    if limited:
        high, low = np.minimum(high, up_), np.maximum(low, down_)
    move = np.abs(close_ - ref_) / ref_
    volume = (inst.volume * np.exp(0.4 * z[:, 4]) * (1 + 6 * move)).astype(np.int64)
    ntr = np.maximum(20, (inst.trades * np.exp(0.25 * z[:, 5])).astype(np.int64))
    if limited:
        # opens at its limit and never leaves it (一字): few sellers (buyers) trade
        locked = (opn == close_) & ((close_ == up_) | (close_ == down_))
        high, low = np.where(locked, close_, high), np.where(locked, close_, low)
        volume = np.where(locked, volume // 4, volume)
        ntr = np.where(locked, np.maximum(20, ntr // 3), ntr)
    volume = np.maximum(volume, 4 * ntr)
    return Daily(
        inst,
        days,
        ref_,
        prev_,
        opn,
        high,
        low,
        close_,
        volume,
        ntr,
        up_,
        down_,
        dividends=dividends,
        capital_changes=capital,
    )


def warrant_limits(ref: int, up_move: float, down_move: float) -> tuple[int, int]:
    up = cal.round_tick(ref + up_move, False, "down")
    down = cal.round_tick(max(ref - down_move, 1), False, "up")
    return up, down


class Walk:
    """A stock's (or warrant's) day: its factor-model log return from the reference price,
    pulled towards its long-run trend, and its opening move and wicks."""

    def __init__(
        self,
        inst: Instrument,
        days: np.ndarray,
        z: np.ndarray,
        move: np.ndarray,
        opening: np.ndarray,
        wick: np.ndarray,
    ) -> None:
        self.days, self.z = days, z
        self._move, self._opening, self._wick = move.tolist(), opening, np.exp(wick)
        self._drift = math.log1p(inst.growth) / 250.0
        self._target = math.log(cal.round_tick(inst.start_price * 100, inst.etf))

    def start(self, i: int) -> None:
        self._target += self._drift

    def adjust(self, prev: int, ref: int, cash: int, factor: float) -> None:
        self._target += math.log(ref / prev)

    def close(self, i: int, ref: int) -> float:
        pull = bk.PULL * (self._target - math.log(ref))
        return ref * math.exp(self._move[i] + pull)

    def opens(self, ref: np.ndarray) -> np.ndarray:
        out: np.ndarray = ref * np.exp(self._opening)
        return out

    def extremes(self, opn: np.ndarray, close: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.maximum(opn, close) * self._wick[:, 0], np.minimum(opn, close) / self._wick[:, 1]


class Fund:
    """An ETF's day: its net asset value per unit moves with its holdings' returns (from
    their reference prices, less the fund's fee) on every trading day, its own suspensions
    included; its price is that value times a slowly changing premium; the day's open, high
    and low follow the holdings' weighted ones."""

    def __init__(
        self,
        inst: Instrument,
        days: np.ndarray,
        z: np.ndarray,
        at: np.ndarray,
        growth: np.ndarray,
        moves: tuple[np.ndarray, ...],
        premium: np.ndarray,
    ) -> None:
        self.days, self.z = days, z
        self._at = at
        self._positions = at.tolist()
        self._growth = growth.tolist()  # log growth of the holdings before each position
        self._moves = moves  # open, high, low, close returns of the holdings per position
        self._close = moves[3].tolist()
        self._premium = premium
        self._fee = math.log(1 - FUND_FEE / 250)
        self._value = float(cal.round_tick(inst.start_price * 100, inst.etf))
        self._last = self._positions[0] - 1  # the position of the last close
        #: each day's value before its move (after its events), times its premium
        self._before = np.zeros(len(days))

    def start(self, i: int) -> None:
        """Bring the value over the days the fund's own units did not trade."""
        q = self._positions[i]
        missed = q - 1 - self._last
        self._value *= math.exp(self._growth[q] - self._growth[self._last + 1] + self._fee * missed)
        self._last = q - 1

    def adjust(self, prev: int, ref: int, cash: int, factor: float) -> None:
        self._value = (self._value - cash) * factor

    def close(self, i: int, ref: int) -> float:
        q = self._last = self._positions[i]
        premium = float(self._premium[i])
        self._before[i] = self._value * premium
        self._value *= (1 + self._close[q]) * math.exp(self._fee)
        return self._value * premium

    def opens(self, ref: np.ndarray) -> np.ndarray:
        out: np.ndarray = self._before * (1 + self._moves[0][self._at])
        return out

    def extremes(self, opn: np.ndarray, close: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        top, bottom = np.maximum(opn, close), np.minimum(opn, close)
        high = self._before * (1 + self._moves[1][self._at])
        low = self._before * (1 + self._moves[2][self._at])
        return (
            top + bk.HIGH_SHARE * np.maximum(high - top, 0.0),
            bottom - bk.HIGH_SHARE * np.maximum(bottom - low, 0.0),
        )
