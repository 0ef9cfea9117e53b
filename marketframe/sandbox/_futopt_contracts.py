"""The futures and options the sandbox lists (``_futopt`` prices and trades them): products,
contracts named like the real ones, their settlement days and TAIFEX's listed months and
strikes, and the calendar spreads of the futures.

Contracts: product + month code + last digit of the year (``TXFL6`` is TXF December 2026;
options put the strike first and use A-L for calls and M-X for puts: ``TXO22400L6``); a spread
names its legs' month codes with a ``/`` between them (``MXFA6/C6``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from . import _calendar as cal


@dataclass(frozen=True)
class Product:
    code: str
    name: str
    type: str  # FUTURE / OPTION
    contract_size: int
    volume: int
    trades: int


PRODUCTS: dict[str, Product] = {
    "TXF": Product("TXF", "臺股期貨", "FUTURE", 200, 90_000, 2400),
    "MXF": Product("MXF", "小型臺指期貨", "FUTURE", 50, 160_000, 2400),
    "TXO": Product("TXO", "臺指選擇權", "OPTION", 50, 9_000, 400),
}

MONTH_CODES = "ABCDEFGHIJKL"
PUT_CODES = "MNOPQRSTUVWX"


@dataclass(frozen=True)
class Contract:
    symbol: str
    product: Product
    year: int
    month: int
    settlement: date
    strike: int | None = None  # points
    call: bool | None = None
    far: Contract | None = None  # a calendar spread's far leg (this contract is its near leg)

    @property
    def name(self) -> str:
        base = f"{self.product.name}{self.month:02d}"
        if self.far is not None:
            return f"{base}/{self.far.month:02d}"
        if self.strike is None:
            return base
        return f"{base}{self.strike}{'買權' if self.call else '賣權'}"

    @property
    def start(self) -> date:
        return cal.next_trading_day(self.settlement - timedelta(days=92))


def settlement_date(year: int, month: int) -> date:
    """Third Wednesday of the month (the next trading day when it is a holiday)."""
    d = date(year, month, 1)
    d += timedelta(days=(2 - d.weekday()) % 7 + 14)
    return d if cal.is_trading_day(d) else cal.next_trading_day(d)


def months_out(c: Contract, d: date) -> int:
    """How many months after the front month (the nearest not yet settled on ``d``) contract
    ``c`` expires: 0 for the front month. What a month trades and holds follows its rank,
    not the calendar: once a month settles, the next one is the front and trades most."""
    y, m = _months(d, 1)[0]
    return (c.year - y) * 12 + c.month - m


def _months(d: date, n: int) -> list[tuple[int, int]]:
    y, m = d.year, d.month
    if settlement_date(y, m) < d:
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    out = []
    for _ in range(n):
        out.append((y, m))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _listed_months(d: date) -> list[tuple[int, int]]:
    """TAIFEX's listed months on ``d``: the three nearest consecutive months and the next
    two quarterly months (March, June, September, December) after them (TAIFEX contract
    specifications of TX/MTX/TXO; TXO lists a third quarterly month the sandbox leaves out)."""
    near = _months(d, 3)
    y, m = near[-1]
    out = list(near)
    while len(out) < 5:
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        if m % 3 == 0:
            out.append((y, m))
    return out


#: TXO strikes per month each side of the money (about 100 strikes per month)
STRIKES_EACH_SIDE = 50


def _strike_step(rank: int) -> int:
    """TXO strike interval in points: 50 for the three nearest months, 100 for the
    quarterly months beyond them (TAIFEX TXO specifications)."""
    return 50 if rank < 3 else 100


def _spreads(listed: list[Contract]) -> list[Contract]:
    """The calendar spreads of the listed futures: each product's nearest month against each
    later month (``TXFL6/A7``)."""
    out: list[Contract] = []
    for code in ("TXF", "MXF"):
        months = [c for c in listed if c.product.code == code and c.strike is None]
        near = months[0]
        for far in months[1:]:
            sym = f"{near.symbol}/{far.symbol[len(code) :]}"
            out.append(Contract(sym, near.product, near.year, near.month, near.settlement, far=far))
    return out
