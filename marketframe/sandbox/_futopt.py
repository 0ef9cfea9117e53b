"""Futures and options of the sandbox: TXF and MXF futures and TXO options on IX0001.

Contracts are named like the real ones: product + month code + last digit of the year
(``TXFL6`` is TXF December 2026; options put the strike first and use A-L for calls and M-X
for puts: ``TXO22400L6``). Prices follow the index of the same day, so the futures track it.

Calendar spreads of TXF and MXF (near month against each later listed month) are named as on
TAIFEX with a ``/`` between the legs' month codes (``MXFA6/C6``: MXF January 2026 against March
2026); a spread's prices are far leg minus near leg (its reference, open and close are exactly
the legs' differences, so they may be negative), in steps of one point. Spreads are served by
the single-contract endpoints (their symbol percent-encoded in the path, ``MXFA6%2FC6``) but
not listed by ``tickers``.

The contracts themselves (products, names, listed months and strikes, spreads) are in
``_futopt_contracts``.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import date, time, timedelta

import numpy as np

from . import _calendar as cal
from ._futopt_contracts import (
    MONTH_CODES,
    PRODUCTS,
    PUT_CODES,
    STRIKES_EACH_SIDE,
    Contract,
    _listed_months,
    _spreads,
    _strike_step,
    months_out,
    settlement_date,
)
from ._instrument import Instrument
from ._intraday import KIND_CLOSE, KIND_CONT, KIND_OPEN, Day, _path, _split_sizes
from ._market import Market


def _otick(price: float) -> int:
    """TXO tick in cents of a point."""
    if price < 1000:
        return 10
    if price < 5000:
        return 50
    if price < 50000:
        return 100
    if price < 100000:
        return 500
    return 1000


def _oround(price: float) -> int:
    t = _otick(price)
    return max(t, int(round(price / t)) * t)


def _ladder(lo: int, hi: int, option: bool) -> np.ndarray:
    if not option:
        return np.arange(lo, hi + 1, 100, dtype=np.int64)
    out, p = [lo], lo
    while p < hi:
        p += _otick(p)
        out.append(min(p, hi))
    return np.array(out, dtype=np.int64)


def _normal_cdf(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _black(forward: float, strike: float, years: float, call: bool, sigma: float = 0.18) -> float:
    years = max(years, 1 / 365)
    s = sigma * math.sqrt(years)
    d1 = (math.log(forward / strike) + s * s / 2) / s
    d2 = d1 - s
    if call:
        return forward * _normal_cdf(d1) - strike * _normal_cdf(d2)
    return strike * _normal_cdf(-d2) - forward * _normal_cdf(-d1)


#: the trial-matching windows before each session opens (TAIFEX: 08:30 and 14:50)
TRIAL_REGULAR = (time(8, 30), cal.FUT_OPEN)
TRIAL_AFTER_HOURS = (time(14, 50), cal.FUT_AH_OPEN)


def with_trials(day: Day, rng: Callable[..., np.random.Generator]) -> Day:
    """``day`` with the trial matches of its pre-open window: prices wander from the
    reference to the opening price (the last trial match is the open), indicative volumes
    grow, serials are their own sequence."""
    ah = day.inst.type.endswith("_AH")
    start, end = TRIAL_AFTER_HOURS if ah else TRIAL_REGULAR
    g = rng("futopt-trial", day.inst.symbol, day.date.toordinal(), int(ah))
    t0, t1 = cal.epoch_us(cal.at(day.date, start)), cal.epoch_us(cal.at(day.date, end))
    k = 8 if ah else 15
    times = np.sort(g.choice(np.arange(t0, t1, 1_000_000), k, replace=False)).astype(np.int64)
    ref, open_ = int(day.reference), int(day.price[0])
    option = day.inst.type.startswith("OPTION")
    raw = ref + (open_ - ref) * np.linspace(0.0, 1.0, k) + g.normal(0, abs(open_ - ref) / 4 + 1, k)
    raw[-1] = open_
    ticks = [_otick(p) if option else 100 for p in raw.tolist()]
    price = np.array(
        [
            max(t, int(round(p / t)) * t) if option else int(round(p / t)) * t
            for p, t in zip(raw.tolist(), ticks, strict=True)
        ],
        dtype=np.int64,
    )
    size = np.cumsum(g.integers(1, 40, k)).astype(np.int64)
    serial = np.cumsum(g.integers(1, 4, k)).astype(np.int64)
    return dataclasses.replace(
        day, trial_time=times, trial_price=price, trial_size=size, trial_serial=serial
    )


class FutOpt:
    def __init__(self, market: Market) -> None:
        self.market = market
        self._cache: dict[tuple[str, date, bool], Day | None] = {}
        self._lock = threading.Lock()
        self._contracts: dict[date, dict[str, Contract]] = {}

    def contracts(self, d: date, afterhours: bool = False) -> list[Contract]:
        """The contracts listed on ``d`` (built once a day, then looked up); in the night
        session opening that evening (``afterhours``), without the month expiring on ``d``."""
        if d not in self._contracts:
            listed = self._list(d)
            self._contracts[d] = {c.symbol: c for c in [*listed, *_spreads(listed)]}
        return [
            c
            for c in self._contracts[d].values()
            if c.far is None and not (afterhours and c.settlement == d)
        ]

    def nth_future(
        self, product: str, d: date, n: int, afterhours: bool = False
    ) -> Contract | None:
        """The ``n``-th nearest month of a futures product listed on ``d`` (the continuous
        ``1!``-``3!`` of the history and the stream's ``TXF1!``), in the day or the night
        session of ``d``; None past the listed months or for an options product."""
        months = sorted(
            (
                c
                for c in self.contracts(d, afterhours)
                if c.product.code == product and c.strike is None
            ),
            key=lambda c: (c.year, c.month),
        )
        return months[n - 1] if 0 < n <= len(months) else None

    def spreads(self, d: date, afterhours: bool = False) -> list[Contract]:
        """The calendar spreads listed on ``d`` (the single-contract routes and the history
        serve them; the ticker lists do not show them); as :meth:`contracts` for the night."""
        self.contracts(d)
        return [
            c
            for c in self._contracts[d].values()
            if c.far is not None and not (afterhours and c.settlement == d)
        ]

    def _list(self, d: date) -> list[Contract]:
        out: list[Contract] = []
        ix = self.market.daily("IX0001")
        i = ix.index_of(d)
        atm = int(round(ix.ref[i] / 100 / 100)) * 100 if i is not None else 20000
        months = _listed_months(d)
        for code in ("TXF", "MXF"):
            for y, m in months:
                sym = f"{code}{MONTH_CODES[m - 1]}{y % 10}"
                out.append(Contract(sym, PRODUCTS[code], y, m, settlement_date(y, m)))
        for rank, (y, m) in enumerate(months):
            step = _strike_step(rank)
            centre = int(round(atm / step)) * step
            for k in range(-STRIKES_EACH_SIDE, STRIKES_EACH_SIDE + 1):
                strike = centre + step * k
                for call in (True, False):
                    letter = (MONTH_CODES if call else PUT_CODES)[m - 1]
                    out.append(
                        Contract(
                            f"TXO{strike}{letter}{y % 10}",
                            PRODUCTS["TXO"],
                            y,
                            m,
                            settlement_date(y, m),
                            strike,
                            call,
                        )
                    )
        return out

    def contract(self, symbol: str, d: date) -> Contract | None:
        self.contracts(d)
        return self._contracts[d].get(symbol)

    def day(self, contract: Contract, d: date, afterhours: bool) -> Day | None:
        # REST bodies are built on several threads: the cache is only touched under the lock
        key = (contract.symbol, d, afterhours)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        made = self._make(contract, d, afterhours)
        with self._lock:
            self._cache[key] = made
            while len(self._cache) > 2048:
                self._cache.pop(next(iter(self._cache)))
        return made

    def reference(self, c: Contract, d: date, afterhours: bool) -> int | None:
        """The reference price of ``c`` on ``d`` (cents of a point), the one of
        :meth:`day`, without drawing the day's trades (the lists show a thousand options)."""
        ix = self.market.daily("IX0001")
        i = ix.index_of(d)
        if i is None:
            return None
        if c.far is not None:
            near = self._levels(
                replace(c, symbol=c.symbol.split("/")[0], far=None), d, i, afterhours
            )
            return self._levels(c.far, d, i, afterhours)[1][0] - near[1][0]
        fut = self._levels(c, d, i, afterhours)[1]
        if c.strike is None:
            return fut[0]
        years = max((c.settlement - d).days, 1) / 365
        return _oround(_black(fut[0], c.strike * 100, years, bool(c.call)))

    def _levels(
        self, c: Contract, d: date, i: int, afterhours: bool
    ) -> tuple[np.random.Generator, list[int]]:
        """A future's generator (after the draws made here) and its reference, open, high,
        low and close on day ``d`` (index row ``i``), cents of a point."""
        ix = self.market.daily("IX0001")
        rng = self.market.rng("futopt", c.symbol, d.toordinal(), int(afterhours))
        # the basis widens with the calendar months to expiry (not the rank of months_out())
        months = (c.year - d.year) * 12 + c.month - d.month
        basis = -1500 * (months + 1) + int(rng.normal(0, 800))
        und = [int(ix.ref[i]), int(ix.open[i]), int(ix.high[i]), int(ix.low[i]), int(ix.close[i])]
        if afterhours:
            close = und[4]
            drift = [int(rng.normal(0, 0.004 * close)) for _ in range(2)]
            o, cl = close + drift[0] // 2, close + drift[1]
            spread = abs(int(rng.normal(0, 0.003 * close)))
            und = [close, o, max(o, cl) + spread, min(o, cl) - spread, cl]
        return rng, [int(round((p + basis) / 100)) * 100 for p in und]

    def _make(self, c: Contract, d: date, afterhours: bool) -> Day | None:
        if afterhours and not cal.has_night_session(d):  # none before TAIFEX had any
            return None
        expiring = c.settlement == d  # its last trading day (a spread's: its near leg's)
        if afterhours and expiring:  # the expiring month has no night session that evening
            return None
        ix = self.market.daily("IX0001")
        i = ix.index_of(d)
        if i is None:
            return None
        if c.far is None:
            rng, fut = self._levels(c, d, i, afterhours)
        else:  # a calendar spread: its own generator, the legs' levels
            rng = self.market.rng("futopt", c.symbol, d.toordinal(), int(afterhours))
            fut = self._levels(
                replace(c, symbol=c.symbol.split("/")[0], far=None), d, i, afterhours
            )[1]
        years = max((c.settlement - d).days, 1) / 365
        if c.far is not None:  # far minus near
            far = self._levels(c.far, d, i, afterhours)[1]
            ref, o, cl = (far[j] - fut[j] for j in (0, 1, 4))
            wide = 100 * (1 + int(abs(rng.normal(0, 3))))
            h, lo = max(o, cl) + wide, min(o, cl) - wide
            option = False
        elif c.strike is None:
            ref, o, h, lo, cl = fut
            option = False
        else:
            k = c.strike * 100
            vals = [_oround(_black(p, k, years, bool(c.call))) for p in fut]
            ref, o, cl = vals[0], vals[1], vals[4]
            a, b = vals[2], vals[3]
            h, lo = max(a, b, o, cl), min(a, b, o, cl)
            option = True
        h, lo = max(h, o, cl), min(lo, o, cl)
        scale = 1 / (1 + 2 * months_out(c, d)) / (3 if afterhours else 1)
        n = max(20, int(c.product.trades * scale))
        volume = max(2 * n, int(c.product.volume * scale * math.exp(0.3 * rng.normal())))
        if afterhours:
            start = cal.at(d, cal.FUT_AH_OPEN)
            end = cal.at(d + timedelta(days=1), cal.FUT_AH_CLOSE)
        else:  # the expiring month stops at 13:30 on its last day
            start = cal.at(d, cal.FUT_OPEN)
            end = cal.at(d, cal.FUT_LAST_DAY_CLOSE if expiring else cal.FUT_CLOSE)
        t0, t1 = cal.epoch_us(start), cal.epoch_us(end)
        times = np.sort(rng.integers(t0 + 1, t1, n)) + np.arange(n)
        lad = _ladder(lo, h, option)
        price = _path(rng, lad, o, h, lo, cl, n)
        size = _split_sizes(rng, volume, n, auction_share=False)
        side = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
        step = np.array([_otick(p) if option else 100 for p in price.tolist()], dtype=np.int64)
        bid = np.where(side > 0, price - step, price)
        ask = np.where(side > 0, price, price + step)
        kinds = np.full(n, KIND_CONT, dtype=np.int8)
        kinds[0], kinds[-1] = KIND_OPEN, KIND_CLOSE
        serial = int(rng.integers(1000, 90000)) + np.cumsum(rng.integers(1, 40, n))
        inst = Instrument(
            c.symbol,
            c.name,
            c.symbol,
            c.product.type + ("_AH" if afterhours else ""),
            "TAIFEX",
            "TAIFEX",
            "00",
            "00",
            ref / 100,
            volume,
            n,
        )
        return Day(
            inst,
            d,
            ref,
            ref,
            0,
            0,
            1,
            times.astype(np.int64),
            price,
            size,
            bid,
            ask,
            serial.astype(np.int64),
            kinds,
            side,
            session="AFTERHOURS" if afterhours else "REGULAR",
        )
