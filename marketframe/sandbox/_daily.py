"""One instrument's daily history (:class:`Daily`, prices in cents) and the corporate events
that shape it (capital changes, dividends): below the market that makes them and the
intraday generator that reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np

from ._instrument import Instrument

# --- corporate events --------------------------------------------------------------------------


@dataclass(frozen=True)
class CapitalChange:
    symbol: str
    action_type: str  # etf_split_or_merge, par_value_change, capital_reduction
    effective: date
    halt: date | None
    resume: date | None
    factor: float  # reference price = previous close * factor
    raw: dict[str, object]


CAPITAL_CHANGES: tuple[CapitalChange, ...] = (
    CapitalChange(
        "0050",
        "etf_split_or_merge",
        date(2025, 6, 18),
        date(2025, 6, 11),
        date(2025, 6, 18),
        0.25,
        {"splitType": "分割", "splitRatio": 4},
    ),
    CapitalChange(
        "8069",
        "capital_reduction",
        date(2017, 9, 18),
        None,
        date(2017, 9, 18),
        1.25,
        {
            "reductionRatio": 0.2,
            "reductionReason": "彌補虧損",
            "reason": "彌補虧損",
            "refundPerShare": 0,
            "sharesPerThousand": 800,
        },
    ),
    CapitalChange(
        "6446",
        "par_value_change",
        date(2023, 11, 13),
        date(2023, 11, 6),
        date(2023, 11, 13),
        0.4,
        {"parValueBefore": 10, "parValueAfter": 4},
    ),
)


@dataclass(frozen=True)
class Dividend:
    symbol: str
    ex_date: date
    cash: int  # cents per share
    stock: float  # free shares per thousand
    previous_close: int
    reference: int


@dataclass
class Daily:
    """The daily history of one instrument (prices in cents)."""

    inst: Instrument
    dates: np.ndarray  # datetime64[D]
    ref: np.ndarray
    prev_close: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # in the unit of intraday data
    ntrades: np.ndarray
    limit_up: np.ndarray
    limit_down: np.ndarray
    dividends: list[Dividend] = field(default_factory=list)
    capital_changes: list[tuple[CapitalChange, int, int]] = field(default_factory=list)

    def index_of(self, d: date) -> int | None:
        key = np.datetime64(d, "D")
        i = int(np.searchsorted(self.dates, key))
        if i < len(self.dates) and self.dates[i] == key:
            return i
        return None

    def span(self, start: date, end: date) -> slice:
        lo = int(np.searchsorted(self.dates, np.datetime64(start, "D"), side="left"))
        hi = int(np.searchsorted(self.dates, np.datetime64(end, "D"), side="right"))
        return slice(lo, hi)
