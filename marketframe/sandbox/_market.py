"""A deterministic synthetic market.

Two levels, generated on demand and cached in memory (no stored files):

* the **daily** history of an instrument (reference, open, high, low, close, volume, number of
  trades) from its first day to a fixed horizon, a cheap sequential walk with Taiwan's rules
  (ticks, +/-10% limits around the reference price, ex-dividend and split references);
* the **intraday** day of an instrument: its trades, generated from the day's daily row as a
  bridge that starts at the open, touches the high and the low and ends at the close, with sizes
  that sum to the day's volume. Everything else (quotes, candles, volumes, books, snapshots,
  historical candles of the day) is aggregated from these trades, so all of it agrees
  (generated in ``_intraday``).

The same ``seed``, symbol and date always give the same data.
"""

from __future__ import annotations

import math
import zlib
from collections import OrderedDict
from datetime import date
from threading import Lock

import numpy as np

from . import _calendar as cal
from ._daily import CAPITAL_CHANGES, CapitalChange, Daily, Dividend
from ._intraday import Day, make_day, make_oddlot
from ._universe import INDUSTRY_SHARE, Instrument, Universe

HORIZON = date(2030, 12, 31)


def _crc(text: str) -> int:
    return zlib.crc32(text.encode())


class Market:
    """The synthetic market of one seed."""

    def __init__(self, seed: int = 0, extra_equities: int = 0) -> None:
        self.seed = int(seed)
        self.universe = Universe(extra_equities)
        self._daily: dict[str, Daily] = {}
        self._factors: dict[str, np.ndarray] = {}
        self._days: OrderedDict[tuple[str, date, bool], Day] = OrderedDict()
        self._turnover: dict[tuple[str, date], int] = {}
        self._lock = Lock()

    def rng(self, *parts: int | str) -> np.random.Generator:
        words = [self.seed]
        for p in parts:
            words.append(_crc(p) if isinstance(p, str) else int(p))
        return np.random.default_rng(words)

    # --- daily --------------------------------------------------------------------------------

    def daily(self, symbol: str) -> Daily:
        got = self._daily.get(symbol)
        if got is None:
            got = self._make_daily(self.universe[symbol])
            self._daily[symbol] = got
        return got

    def _make_daily(self, inst: Instrument) -> Daily:
        days = cal.trading_days(inst.first_day, HORIZON)
        if inst.suspensions:
            keep = np.ones(len(days), dtype=bool)
            for a, b in inst.suspensions:
                keep &= ~((days >= np.datetime64(a)) & (days <= np.datetime64(b)))
            days = days[keep]
        n = len(days)
        rng = self.rng("daily", inst.symbol)
        z = rng.standard_normal((n, 6))
        index = inst.type == "INDEX"
        step = 1 if index else None
        limited = inst.has_limits
        etf = inst.etf
        vol = inst.vol
        drift = math.log1p(inst.growth) / 250.0
        events = self._events(inst, days)
        shock = self._shocks(inst, days, z[:, 0]).tolist()
        jumps = self._jumps(inst, n).tolist() if inst.has_limits and inst.type == "EQUITY" else None
        warrant = self._warrant_moves(inst, days) if inst.type == "WARRANT" else None
        cap = {c.effective: c for c in CAPITAL_CHANGES if c.symbol == inst.symbol}
        cols = np.zeros((11, n), dtype=np.int64)
        dividends: list[Dividend] = []
        capital: list[tuple[CapitalChange, int, int]] = []
        prev = self._round(inst.start_price * 100, etf, step)
        log_target = math.log(prev)
        day_list = days.astype(object)
        for i in range(n):
            d = day_list[i]
            ref = prev
            if d in cap:
                ch = cap[d]
                ref = self._round(prev * ch.factor, etf, step)
                capital.append((ch, prev, ref))
                log_target += math.log(ch.factor)
            ev = events.get(d)
            if ev is not None:
                cash_rate, stock = ev
                cash = max(1, int(round(prev * cash_rate))) if cash_rate > 0 else 0
                ref = self._round((prev - cash) / (1 + stock / 1000.0), etf, step)
                dividends.append(Dividend(inst.symbol, d, cash, stock, prev, ref))
                log_target += math.log(ref / prev)
            log_target += drift
            pull = 0.004 * (log_target - math.log(ref))
            if warrant is not None:
                up, down = self._warrant_limits(ref, warrant[0][i], warrant[1][i])
            else:
                up, down = cal.limits(ref, etf) if limited else (0, 0)
            jump = 0.0 if jumps is None else jumps[i]
            close = self._round(ref * math.exp(vol * shock[i] + pull + jump), etf, step)
            opn = self._round(ref * math.exp(vol * 0.35 * z[i, 1]), etf, step)
            if limited:
                close = min(max(close, down), up)
                opn = min(max(opn, down), up)
            hi = self._round(
                max(opn, close) * math.exp(abs(z[i, 2]) * vol * 0.45), etf, step, "down"
            )
            lo = self._round(
                min(opn, close) * math.exp(-abs(z[i, 3]) * vol * 0.45), etf, step, "up"
            )
            hi = max(hi, opn, close)
            lo = min(lo, opn, close)
            if limited:
                hi = min(hi, up)
                lo = max(lo, down)
            move = abs(close - ref) / ref
            if index:
                ntr = inst.trades
                volume = int(inst.volume * math.exp(0.25 * z[i, 4]) * (1 + 4 * move))
            else:
                ntr = max(20, int(inst.trades * math.exp(0.25 * z[i, 5])))
                volume = int(inst.volume * math.exp(0.4 * z[i, 4]) * (1 + 6 * move))
                volume = max(volume, 4 * ntr)
            cols[:, i] = (ref, prev, opn, hi, lo, close, volume, ntr, up, down, 0)
            prev = close
        ref_, prev_, open_, high_, low_, close_, vol_, ntr_, up_, down_ = cols[:10]
        return Daily(
            inst,
            days,
            ref_,
            prev_,
            open_,
            high_,
            low_,
            close_,
            vol_,
            ntr_,
            up_,
            down_,
            dividends=dividends,
            capital_changes=capital,
        )

    def _factor(self, name: str) -> np.ndarray:
        """A standard normal draw per trading day of the calendar (cached)."""
        got = self._factors.get(name)
        if got is None:
            got = self.rng("factor", name).standard_normal(len(cal.all_trading_days()))
            self._factors[name] = got
        return got

    def _shocks(self, inst: Instrument, days: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Daily standard normal shocks: a market factor (share ``inst.beta`` of the
        variance), the industry's factor (:data:`INDUSTRY_SHARE`, equities of an industry)
        and the instrument's own draw, so that returns are correlated as on a real market."""
        at = np.searchsorted(cal.all_trading_days(), days)
        beta = inst.beta
        industry = INDUSTRY_SHARE if inst.industry != "00" and inst.type == "EQUITY" else 0.0
        out = math.sqrt(beta) * self._factor("market")[at]
        if industry:
            out = out + math.sqrt(industry) * self._factor(f"industry:{inst.industry}")[at]
        return out + math.sqrt(max(0.0, 1.0 - beta - industry)) * own

    def _jumps(self, inst: Instrument, n: int) -> np.ndarray:
        """News days: about one day in 70 a log-return jump of 8.5-15% either way, which the
        +/-10% limit clamps, so such a day closes at (or near) the limit."""
        rng = self.rng("jumps", inst.symbol)
        hit = rng.random(n) < 1 / 70
        size = rng.uniform(0.085, 0.15, n) * np.where(rng.random(n) < 0.5, 1.0, -1.0)
        return np.where(hit, size, 0.0)

    def _warrant_moves(self, inst: Instrument, days: np.ndarray) -> tuple[list[float], list[float]]:
        """(up, down) limit moves of the warrant per day, in cents of the warrant: its
        underlying's limit moves that day times the exercise ratio (TWSE: a warrant's price
        limits follow its underlying's, scaled by the exercise ratio)."""
        under = self.daily(inst.underlying or "")
        ratio = float(inst.extra.get("exerciseRatio", 1.0))
        at = np.clip(np.searchsorted(under.dates, days), 0, len(under.dates) - 1)
        up = ((under.limit_up[at] - under.ref[at]) * ratio).tolist()
        down = ((under.ref[at] - under.limit_down[at]) * ratio).tolist()
        return up, down

    @staticmethod
    def _warrant_limits(ref: int, up_move: float, down_move: float) -> tuple[int, int]:
        up = cal.round_tick(ref + up_move, False, "down")
        down = cal.round_tick(max(ref - down_move, 1), False, "up")
        return up, down

    @staticmethod
    def _round(price: float, etf: bool, step: int | None, mode: str = "nearest") -> int:
        if step is not None:
            return max(
                1,
                int(math.floor(price + 0.5))
                if mode == "nearest"
                else int(math.floor(price))
                if mode == "down"
                else int(math.ceil(price)),
            )
        return cal.round_tick(price, etf, mode)

    def _events(self, inst: Instrument, days: np.ndarray) -> dict[date, tuple[float, float]]:
        """Ex-dividend days: {date: (cash as a fraction of the previous close, stock per 1000)}."""
        if inst.type != "EQUITY" or not inst.dividend_months or len(days) == 0:
            return {}
        out: dict[date, tuple[float, float]] = {}
        first = days[0].astype(object)
        rng = self.rng("dividends", inst.symbol)
        per_year = 0.028 / len(inst.dividend_months)
        offset = _crc(inst.symbol) % 9
        for year in range(first.year, HORIZON.year + 1):
            for month in inst.dividend_months:
                target = date(year, month, 12 + offset)
                i = int(np.searchsorted(days, np.datetime64(target)))
                draw = rng.random(2)
                if i >= len(days):
                    continue
                d = days[i].astype(object)
                if d <= first or d.month != month:
                    continue
                stock = 0.0
                if inst.symbol == "2603" and year == 2012:
                    stock = 100.0
                if inst.symbol == "5483" and year == 2014:
                    stock, draw[0] = 50.0, -1.0
                cash = 0.0 if draw[0] < 0 else per_year * (0.7 + 0.6 * draw[1])
                out[d] = (cash, stock)
        return out

    # --- intraday -----------------------------------------------------------------------------

    def day(self, symbol: str, d: date, oddlot: bool = False) -> Day | None:
        """The trades of ``symbol`` on ``d`` (None when it did not trade that day)."""
        key = (symbol, d, oddlot)
        with self._lock:
            got = self._days.get(key)
            if got is not None:
                self._days.move_to_end(key)
                return got
        daily = self.daily(symbol)
        i = daily.index_of(d)
        if i is None:
            return None
        sym, day_no = daily.inst.symbol, daily.dates[i].astype(object).toordinal()
        made = make_day(self.rng("day", sym, day_no), daily, i)
        if oddlot:
            made = make_oddlot(self.rng("oddlot", sym, day_no), made)
        with self._lock:
            self._days[key] = made
            while len(self._days) > 512:
                self._days.popitem(last=False)
        return made

    def turnover(self, symbol: str, d: date) -> int:
        """TWD traded on a whole day (computed from its trades, then remembered)."""
        key = (symbol, d)
        got = self._turnover.get(key)
        if got is None:
            day = self.day(symbol, d)
            got = 0 if day is None else day.value(len(day.time))
            self._turnover[key] = got
        return got
