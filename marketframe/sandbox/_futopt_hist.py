"""Futures and options history of the sandbox, built from the intraday market of ``_futopt``.

A contract's day in the history is the same :class:`~._intraday.Day` the intraday routes serve,
so a daily row agrees with that day's trades and candles (open = first trade, high/low, close =
last trade, volume = the sum). On top of the listed contracts of ``FutOpt.contracts`` this adds
what only the history shows: TXO weekly options (``YYYYMMWn``; the outermost strikes untraded),
calendar spreads of the futures (``YYYYMM/YYYYMM``), open interest and settlement prices. A day's
settlement price is the next trading day's reference price of the same contract, so ``change``
(close - reference) is the change against the previous settlement; on a contract's expiry day
the settlement is ``0``, as in the recorded api-dev payload.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from . import _calendar as cal
from ._futopt import FutOpt
from ._futopt_contracts import (
    MONTH_CODES,
    PRODUCTS,
    PUT_CODES,
    Contract,
    months_out,
    settlement_date,
)
from ._intraday import Day
from ._query import Json

#: contract-month forms the history takes (YYYYMM, weekly, spread, continuous)
_MONTH = r"\d{4}(?:0[1-9]|1[0-2])"
MONTH_RE = re.compile(
    rf"(?P<m>{_MONTH})(?P<w>[WF][1-5])?|(?P<a>{_MONTH})/(?P<b>{_MONTH})|"
    r"(?P<k>[123])!"
)
#: a contract code given where a product is expected (TXFK6, TXO22400L6, MXFA6/C6)
CODE_RE = re.compile(r"[A-Z][A-Z0-9]{2}(?:\d+)?[A-X]\d(?:/[A-L]\d)?")


@dataclass(frozen=True)
class Bar:
    """OHLCV of the trades of one contract day visible at a time (prices in cents)."""

    open: int
    high: int
    low: int
    close: int
    volume: int
    transaction: int
    reference: int


def month_of(c: Contract) -> str:
    """The contract month as the history writes it: ``202611``, weekly ``202610W1``."""
    text = f"{c.year}{c.month:02d}"
    if c.settlement != settlement_date(c.year, c.month):
        text += f"W{(c.settlement.day - 1) // 7 + 1}"
    return text


class History:
    """The listed contracts of a product on a day and their daily figures."""

    def __init__(self, futopt: FutOpt) -> None:
        self.fo = futopt
        self.market = futopt.market

    # --- what is listed --------------------------------------------------------------------

    def opened(self, d: date, afterhours: bool, t_us: int) -> bool:
        """Whether the session of ``d`` has opened by ``t_us`` on a day with a market (the
        futures follow the index, whose history starts in 2015)."""
        if not cal.is_trading_day(d) or self.market.daily("IX0001").index_of(d) is None:
            return False
        if afterhours and not cal.has_night_session(d):
            return False
        return t_us >= cal.epoch_us(cal.at(d, cal.FUT_AH_OPEN if afterhours else cal.FUT_OPEN))

    def outrights(self, product: str, d: date) -> list[Contract]:
        """Monthly contracts (futures by month; options by month, strike, call first)."""
        got = [c for c in self.fo.contracts(d) if c.product.code == product]
        return sorted(got, key=lambda c: (c.year, c.month, c.strike or 0, not c.call))

    def weeklies(self, product: str, d: date) -> list[Contract]:
        """TXO weekly options expiring on the Wednesdays of the next two weeks (not the monthly
        settlement), at the monthly contracts' strikes."""
        if product != "TXO":
            return []
        strikes = sorted({c.strike for c in self.outrights(product, d) if c.strike})
        out = []
        for w in (d + timedelta(days=(2 - d.weekday()) % 7 + 7 * k) for k in range(2)):
            if not cal.is_trading_day(w) or w == settlement_date(w.year, w.month):
                continue
            n = (w.day - 1) // 7 + 1
            for strike in strikes:
                for call in (True, False):
                    letter = (MONTH_CODES if call else PUT_CODES)[w.month - 1]
                    out.append(
                        Contract(
                            f"TXO{strike}{letter}{w.year % 10}W{n}",
                            PRODUCTS["TXO"],
                            w.year,
                            w.month,
                            w,
                            strike,
                            call,
                        )
                    )
        return out

    def untraded(self, c: Contract, d: date) -> bool:
        """The outermost strikes of a weekly series have no trade (rows of nulls)."""
        if month_of(c).isdigit() or c.strike is None:
            return False
        strikes = [x.strike for x in self.outrights(c.product.code, d) if x.strike]
        return c.strike in (min(strikes), max(strikes))

    def spreads(self, product: str, d: date) -> list[Contract]:
        """Calendar spreads of a futures product, the ones the intraday routes serve (the
        nearest month against each later one, ``TXFL6/A7``): one set, one set of trades."""
        return [c for c in self.fo.spreads(d) if c.product.code == product]

    def contract(
        self,
        product: str,
        d: date,
        month: str,
        strike: float | None,
        call: bool | None,
        afterhours: bool = False,
    ) -> Contract | None:
        """The contract of ``month`` (``YYYYMM``, weekly, ``1!``-``3!``) listed on ``d`` (a
        continuous month in the night session skips the month expiring on ``d``)."""
        m = MONTH_RE.fullmatch(month)
        if m is None:
            return None
        if m["k"]:
            return self.fo.nth_future(product, d, int(m["k"]), afterhours)
        pool = self.outrights(product, d) + self.weeklies(product, d)
        return next(
            (
                c
                for c in pool
                if month_of(c) == month
                and (c.strike is None or (c.strike == strike and c.call == call))
            ),
            None,
        )

    # --- figures of a contract day ---------------------------------------------------------

    def day(self, c: Contract, d: date, afterhours: bool) -> Day | None:
        return self.fo.day(c, d, afterhours)

    def bar(self, c: Contract, d: date, afterhours: bool, t_us: int) -> Bar | None:
        """The day's trades visible at ``t_us`` (None: none yet, or untraded)."""
        day = self.day(c, d, afterhours)
        if day is None or self.untraded(c, d):
            return None
        n = day.visible(t_us)
        if n == 0:
            return None
        p = day.price[:n]
        return Bar(
            int(p[0]),
            int(p.max()),
            int(p.min()),
            int(p[-1]),
            int(day.size[:n].sum()),
            n,
            int(day.reference),
        )

    def complete(self, c: Contract, d: date, afterhours: bool, t_us: int) -> bool:
        day = self.day(c, d, afterhours)
        return day is not None and day.visible(t_us) == len(day.time)

    def settlement(self, c: Contract, d: date) -> int | None:
        """Cents: the next trading day's reference; 0 on the expiry day (not yet settled)."""
        if d >= c.settlement:
            return 0
        nxt = self.day(c, cal.next_trading_day(d), False)
        return None if nxt is None else nxt.reference

    def open_interest(self, c: Contract, d: date) -> int:
        rng = self.market.rng("futopt-oi", c.symbol, d.toordinal())
        base = c.product.volume * (0.6 if c.strike is None else 1.5) / (1 + 3 * months_out(c, d))
        return max(0, int(base * math.exp(0.25 * rng.normal())))

    def spread_bar(
        self, c: Contract, d: date, afterhours: bool, t_us: int
    ) -> tuple[Bar, int] | None:
        """A calendar spread's day from its own trades (far minus near, as the intraday
        routes serve it), and its volume from spread orders traded against single legs
        (synthetic: two to three times the spread's own volume)."""
        got = self.bar(c, d, afterhours, t_us)
        if got is None:
            return None
        rng = self.market.rng("futopt-spread", c.symbol, d.toordinal(), int(afterhours))
        return got, int(got.volume * (2 + rng.random()))


def minute_bars(day: Day, n: int, tf: int) -> list[Json]:
    """Minute candles of the first ``n`` trades, aligned on the first trade's minute: date
    (epoch µs of the bar start), OHLC in cents, volume, transaction, and the day's average
    price up to the bar's end (cents, float)."""
    if not n:
        return []
    t0 = int(day.time[0]) - int(day.time[0]) % 60_000_000
    width = tf * 60_000_000
    times, prices, sizes = day.time[:n], day.price[:n], day.size[:n]
    bucket = (times - t0) // width
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    ends = np.r_[starts[1:], n]
    cum = np.cumsum(prices * sizes) / np.cumsum(sizes)
    return [
        {
            "t": t0 + int(bucket[s]) * width,
            "open": int(prices[s]),
            "high": int(prices[s:e].max()),
            "low": int(prices[s:e].min()),
            "close": int(prices[e - 1]),
            "volume": int(sizes[s:e].sum()),
            "transaction": e - s,
            "average": float(cum[e - 1]),
        }
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
    ]
