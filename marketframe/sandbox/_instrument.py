"""What the sandbox knows of one instrument (:class:`Instrument`), the type the tables of
``_universe`` are made of, and ``_eq``, which writes an equity's row briefly."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

STOCK_HISTORY_START = date(2010, 1, 4)
INDEX_HISTORY_START = date(2015, 1, 5)


@dataclass(frozen=True)
class Instrument:
    symbol: str
    name: str
    name_en: str
    type: str  # EQUITY, INDEX, WARRANT
    exchange: str  # TWSE, TPEx
    market: str  # TSE, OTC, ESB
    industry: str  # industry code ("00": none)
    security_type: str  # security-type code
    start_price: float  # first close of the synthetic history (dollars)
    volume: int  # mean daily volume in the unit of intraday data (lots, or shares)
    trades: int  # mean number of trades per day
    vol: float = 0.018  # daily volatility
    growth: float = 0.04  # long-run drift per year of the synthetic price path
    listed: date = STOCK_HISTORY_START
    #: the first day it is no longer listed (its last session is the trading day before);
    #: None: listed to the end of the synthetic history
    delisted: date | None = None
    suspensions: tuple[tuple[date, date], ...] = ()
    #: board changes: (first day on the new board, exchange, market), in date order; before
    #: the first one the instrument is on ``exchange`` / ``market``
    moves: tuple[tuple[date, str, str], ...] = ()
    dividend_months: tuple[int, ...] = (7,)
    etf: bool = False
    day_trade: bool = True
    underlying: str | None = None
    #: the share of the stock's daily variance that is the market factor's (the rest is the
    #: industry factor's, :data:`INDUSTRY_SHARE`, and the stock's own)
    beta: float = 0.45
    #: the stock's share of its board's index (TAIEX, TPEx index) on :data:`WEIGHT_DAY`, of
    #: the order of the real company's; 0: not a component of the sandbox's index
    weight: float = 0.0
    #: speculative runs a year: days of steep gains that put the stock on the exchanges'
    #: attention list and, when they last, under disposition (``_disposition``)
    runs: float = 0.0
    #: an ETF's basket: "cap" holds its board's index components at their capitalisation,
    #: "equal" the same companies less ``basket_excludes`` at equal weights (``_baskets``)
    basket: str = ""
    basket_excludes: tuple[str, ...] = ()
    #: what the service says of this instrument alone (a warrant's terms), as it says it
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def unit(self) -> str:
        """Unit of intraday volume: lots for whole-lot stocks, shares on the emerging board,
        TWD turnover for indices."""
        if self.type == "INDEX":
            return "twd"
        return "shares" if self.market == "ESB" else "lots"

    @property
    def board_lot(self) -> int:
        return 1000

    @property
    def first_day(self) -> date:
        start = INDEX_HISTORY_START if self.type == "INDEX" else STOCK_HISTORY_START
        return max(start, self.listed)

    @property
    def has_limits(self) -> bool:
        return self.market != "ESB" and self.type != "INDEX"

    def listed_on(self, d: date) -> bool:
        """Listed on ``d``: from its listing day to the day before its delisting (a
        suspended day included)."""
        return self.listed <= d and (self.delisted is None or d < self.delisted)

    def board(self, d: date) -> tuple[str, str]:
        """(exchange, market) on ``d``, after the board changes of :attr:`moves`."""
        exchange, market = self.exchange, self.market
        for since, ex, mk in self.moves:
            if d >= since:
                exchange, market = ex, mk
        return exchange, market


def _eq(
    symbol: str,
    name: str,
    name_en: str,
    exchange: str,
    market: str,
    industry: str,
    price: float,
    volume: int,
    trades: int,
    **kw: Any,  # the other fields of Instrument, of their own types
) -> Instrument:
    return Instrument(
        symbol,
        name,
        name_en,
        "EQUITY",
        exchange,
        market,
        industry,
        kw.pop("security_type", "01"),
        price,
        volume,
        trades,
        **kw,
    )
