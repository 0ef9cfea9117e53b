"""A deterministic synthetic market.

Two levels, generated on demand and cached in memory (no stored files):

* the **daily** history of an instrument (reference, open, high, low, close, volume, number of
  trades) from its first day to a fixed horizon, with Taiwan's rules (ticks, +/-10% limits
  around the reference price, ex-dividend and split references):

  - a stock's daily log return is a factor model: the market factor (``_factors``: calm and
    turbulent months, scripted days on the dates of the real TAIEX's largest moves, occasional
    synthetic ones), its industry's factor and its own draw, plus news jumps and speculative
    runs, pulled slowly towards the stock's long-run trend;
  - an index is computed from its components' capitalisation weights, an ETF from its
    holdings (``_baskets``);
  - attention and disposition follow from the prices (``_disposition``);
  - the rows themselves, on the ticks and within the limits, are made in ``_walks``;
* the **intraday** day of an instrument: its trades, generated from the day's daily row as a
  bridge that starts at the open, touches the high and the low and ends at the close, with sizes
  that sum to the day's volume. Everything else (quotes, candles, volumes, books, snapshots,
  historical candles of the day) is aggregated from these trades, so all of it agrees
  (generated in ``_intraday``).

The same ``seed``, symbol and date always give the same data.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from dataclasses import dataclass
from datetime import date, timedelta
from threading import Lock

import numpy as np

from . import _baskets as bk
from . import _calendar as cal
from . import _disposition as dispo
from ._daily import Daily
from ._factors import MarketPath, loadings, market_path
from ._instrument import Instrument
from ._intraday import Day, make_day, make_oddlot
from ._universe import BOARD_CAP, INDUSTRY_SHARE, WEIGHT_DAY, Universe
from ._walks import Fund, Walk, make_daily

HORIZON = date(2030, 12, 31)
#: share of a stock's days with news that moves it to its limit (``Market._jumps``)
JUMP_RATE = 1 / 120
#: shares outstanding of a stock that is not an index component: this many days of its mean
#: volume (an ETF's units, the emerging board, the extra equities)
SHARE_DAYS = 400
#: a fund's premium or discount to its net asset value (an AR(1) of the log: persistence,
#: daily innovation; stationary deviation about 0.15 %)
PREMIUM_PERSISTENCE, PREMIUM_DEV = 0.9, 0.0006


def _crc(text: str) -> int:
    return zlib.crc32(text.encode())


@dataclass(frozen=True)
class Holdings:
    """An ETF's members and its share count of each on every calendar position from its
    first day (whole lots; NaN where not held)."""

    members: list[Instrument]
    p0: int
    quantity: np.ndarray


class Market:
    """The synthetic market of one seed."""

    def __init__(self, seed: int = 0, extra_equities: int = 0) -> None:
        self.seed = int(seed)
        self.universe = Universe(extra_equities)
        self._daily: dict[str, Daily] = {}
        self._factors: dict[str, np.ndarray] = {}
        self._path: MarketPath | None = None
        self._holdings: dict[str, Holdings] = {}
        self._status: dict[str, dispo.Status] = {}
        self._days: OrderedDict[tuple[str, date, bool], Day] = OrderedDict()
        self._turnover: dict[tuple[str, date], int] = {}
        self._lock = Lock()

    def rng(self, *parts: int | str) -> np.random.Generator:
        words = [self.seed]
        for p in parts:
            words.append(_crc(p) if isinstance(p, str) else int(p))
        return np.random.default_rng(words)

    # --- factors ------------------------------------------------------------------------------

    def _factor(self, name: str) -> np.ndarray:
        """A standard normal draw per trading day of the calendar (cached)."""
        got = self._factors.get(name)
        if got is None:
            got = self.rng("factor", name).standard_normal(len(cal.all_trading_days()))
            self._factors[name] = got
        return got

    def market_path(self) -> MarketPath:
        """The market factor and opening shares of every trading day (``_factors``)."""
        if self._path is None:
            self._path = market_path(self.rng("market-days"), self._factor("market"))
        return self._path

    def _industry(self, code: str) -> np.ndarray:
        return self._factor(f"industry:{code}")

    # --- daily --------------------------------------------------------------------------------

    def daily(self, symbol: str) -> Daily:
        got = self._daily.get(symbol)
        if got is None:
            inst = self.universe[symbol]
            if inst.type == "INDEX":
                got = self._make_index(inst)
            else:
                model = self._fund(inst) if inst.basket else self._walk(inst)
                days = model.days
                warrant = self._warrant_moves(inst, days) if inst.type == "WARRANT" else None
                got = make_daily(inst, model, self._events(inst, days), warrant)
            self._daily[symbol] = got
        return got

    def _days_of(self, inst: Instrument) -> np.ndarray:
        """Its sessions: from its first day to its last (the day before a delisting), less
        its suspensions."""
        last = HORIZON if inst.delisted is None else inst.delisted - timedelta(days=1)
        days = cal.trading_days(inst.first_day, last)
        if inst.suspensions:
            keep = np.ones(len(days), dtype=bool)
            for a, b in inst.suspensions:
                keep &= ~((days >= np.datetime64(a)) & (days <= np.datetime64(b)))
            days = days[keep]
        return days

    def _walk(self, inst: Instrument) -> Walk:
        days = self._days_of(inst)
        at = bk.positions(days)
        path = self.market_path()
        stock = inst.type == "EQUITY"
        industry = INDUSTRY_SHARE if inst.industry != "00" and stock else 0.0
        a, c, e = loadings(inst.vol, inst.beta, industry)
        common = a * path.factor[at]
        if industry:
            common = common + c * self._industry(inst.industry)[at]
        z = self.rng("daily", inst.symbol).standard_normal((len(days), 6))
        jumps = np.zeros(len(days))
        if inst.has_limits and stock:
            jumps = self._jumps(inst, len(days))
            runs = dispo.speculative_runs(self.rng("runs", inst.symbol), len(days), inst.runs)
            jumps = jumps + runs
        scale = path.scale[at]
        common = scale * common
        move = common + scale * e * z[:, 0] + jumps
        opening = path.gap[at] * (common + jumps) + 0.3 * inst.vol * scale * z[:, 1]
        wick = np.abs(z[:, 2:4]) * inst.vol * 0.45 * scale[:, None]
        return Walk(inst, days, z, move, opening, wick)

    def _jumps(self, inst: Instrument, n: int) -> np.ndarray:
        """News days: about one day in 120 a log-return jump of 8.5-15% either way, which the
        +/-10% limit clamps, so such a day closes at (or near) the limit; rarer for the
        largest companies (in proportion to their index weight beyond 1 %: 2330 about once in
        20 years), whose own news alone does not move the index by several percent."""
        rng = self.rng("jumps", inst.symbol)
        hit = rng.random(n) < JUMP_RATE * min(1.0, 0.01 / inst.weight if inst.weight else 1.0)
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

    # --- indices and ETFs ---------------------------------------------------------------------

    def components(self, board: str) -> list[Instrument]:
        """The served stocks of ``board``'s index (``Instrument.weight``)."""
        return [
            x
            for x in self.universe.instruments.values()
            if x.type == "EQUITY" and x.market == board and x.weight > 0
        ]

    def shares(self, symbol: str) -> int:
        """Shares outstanding: an index component's are set so that its capitalisation is its
        ``weight`` of its board's on :data:`WEIGHT_DAY` (``_baskets``); another instrument's
        are :data:`SHARE_DAYS` of its mean volume."""
        inst = self.universe[symbol]
        if inst.weight > 0:
            close = bk.weight_day_close(self.daily(symbol), WEIGHT_DAY)
            return int(round(inst.weight * BOARD_CAP[inst.market] / close / 1000)) * 1000
        return inst.volume * SHARE_DAYS * (inst.board_lot if inst.unit == "lots" else 1)

    def _make_index(self, inst: Instrument) -> Daily:
        days = cal.trading_days(inst.first_day, HORIZON)
        at = bk.positions(days)
        p0, p1 = int(at[0]), int(at[-1]) + 1
        members = self.components(inst.market)
        prices = bk.member_prices([self.daily(m.symbol) for m in members], p0, p1, total=False)
        shares = np.array([self.shares(m.symbol) for m in members], dtype=float)
        rest, sizes = bk.rest_of_board(
            self.rng("rest", inst.market), inst.market, self.market_path(), self._industry, p0, p1
        )
        at_weight = int(np.searchsorted(days, np.datetime64(WEIGHT_DAY, "D"), side="right")) - 1
        rest_weight = 1.0 - sum(m.weight for m in members)
        cap = BOARD_CAP[inst.market] * 100  # cents
        shares = np.concatenate((shares, rest_weight * sizes * cap / rest.close[at_weight]))
        prices = prices.join(rest)
        prev, opn, high, low, close = bk.ohlc(inst.start_price * 100, bk.returns(prices, shares))
        ref_, open_, high_, low_, close_ = (
            np.rint(x).astype(np.int64) for x in (prev, opn, high, low, close)
        )
        z = self.rng("daily", inst.symbol).standard_normal(len(days))
        move = np.abs(close_ - ref_) / ref_
        volume = (inst.volume * np.exp(0.25 * z) * (1 + 4 * move)).astype(np.int64)
        zero = np.zeros(len(days), dtype=np.int64)
        return Daily(
            inst,
            days,
            ref_,
            ref_.copy(),
            open_,
            high_,
            low_,
            close_,
            volume,
            np.full(len(days), inst.trades, dtype=np.int64),
            zero,
            zero.copy(),
        )

    def holdings(self, symbol: str) -> Holdings:
        """An ETF's holdings (``_baskets.fund_quantities``), cached."""
        got = self._holdings.get(symbol)
        if got is None:
            inst = self.universe[symbol]
            members = [
                m for m in self.components(inst.market) if m.symbol not in inst.basket_excludes
            ]
            days = cal.trading_days(inst.first_day, HORIZON)
            at = bk.positions(days)
            p0, p1 = int(at[0]), int(at[-1]) + 1
            prices = bk.member_prices([self.daily(m.symbol) for m in members], p0, p1, True)
            shares = np.array([self.shares(m.symbol) for m in members], dtype=float)
            qty = bk.fund_quantities(
                prices, shares, inst.basket == "equal", days, self.rng("holdings", symbol)
            )
            got = Holdings(members, p0, qty)
            self._holdings[symbol] = got
        return got

    def _fund(self, inst: Instrument) -> Fund:
        held = self.holdings(inst.symbol)
        p1 = held.p0 + len(held.quantity)
        dailies = [self.daily(m.symbol) for m in held.members]
        prices = bk.member_prices(dailies, held.p0, p1, total=True)
        r_open, r_high, r_low, r_close = bk.returns(prices, held.quantity)
        days = self._days_of(inst)
        z = self.rng("daily", inst.symbol).standard_normal((len(days), 6))
        premium = np.zeros(len(days))
        for i in range(1, len(days)):
            premium[i] = PREMIUM_PERSISTENCE * premium[i - 1] + PREMIUM_DEV * z[i, 0]
        return Fund(
            inst,
            days,
            z,
            bk.positions(days) - held.p0,
            np.concatenate(([0.0], np.cumsum(np.log1p(r_close)))),
            (r_open, r_high, r_low, r_close),
            np.exp(premium),
        )

    # --- attention and disposition -----------------------------------------------------------

    def status(self, symbol: str, d: date) -> tuple[bool, int]:
        """(on the attention list, seconds between call auctions: 0 unless under disposition)
        of ``symbol`` on ``d`` (``_disposition``)."""
        inst = self.universe[symbol]
        if inst.type != "EQUITY" or not inst.has_limits:
            return False, 0
        got = self._status.get(symbol)
        daily = self.daily(symbol)
        if got is None:
            change = dispo.six_day_change(daily.close, daily.ref)
            market = np.zeros(len(change))
            if (np.abs(change) > dispo.ATTENTION_CHANGE).any():  # the index is needed
                index = self.daily("IX0001" if inst.market == "TSE" else "IX0043")
                moves = dispo.six_day_change(index.close, index.ref)
                at = np.clip(np.searchsorted(index.dates, daily.dates), 0, len(index.dates) - 1)
                market = np.where(index.dates[at] == daily.dates, moves[at], 0.0)
            got = dispo.status(change, market)
            self._status[symbol] = got
        return got.at(daily.index_of(d))

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
        interval = self.status(symbol, d)[1]
        made = make_day(self.rng("day", sym, day_no), daily, i, interval)
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
