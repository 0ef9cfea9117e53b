"""A dataset resolved and validated (:class:`Spec`) and one window to fetch (:class:`Task`):
the types the sync, its writers and the reads share, below all of them in the imports."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from marketframe._windows import MAX_LEAD, Interval
from marketframe.endpoints import MINUTE_TIMEFRAMES, Endpoint
from marketframe.exceptions import InvalidParams

NO_SYMBOL = "*"  # the one "symbol" of a dataset without symbols (corporate actions)


@dataclass(frozen=True)
class DatasetId:
    """What identifies a dataset: the endpoint, the parameters that change its data, timeframe."""

    endpoint: str
    params: str  # fingerprint, hive-safe ("default", "period-20", ...)
    timeframe: str | None

    @property
    def key(self) -> str:
        return f"{self.endpoint}|{self.params}|{self.timeframe or '-'}"


@dataclass(frozen=True)
class Spec:
    """A dataset, resolved and validated."""

    ep: Endpoint
    ds: DatasetId
    params: dict[str, Any]  # canonical identity parameters (no symbol, range, timeframe)

    @property
    def has_symbol(self) -> bool:
        """The dataset is one per value of the row's path parameter (a stock's ``symbol``, a
        futures ``product``); without one (corporate actions) it is a single dataset."""
        return self.ep.multi_param is not None

    @property
    def minute(self) -> bool:
        return self.ds.timeframe in MINUTE_TIMEFRAMES

    @property
    def latest(self) -> bool:
        """Minute data the service answers for its latest 30 days only (no date range): a
        row whose minute timeframes take a checked range syncs windows like daily data."""
        return self.minute and self.ep.minute_range != "checked"

    def lead_days(self) -> int:
        """Calendar days to request before each window so warm-up bars are not lost."""
        tech = self.ep.technical  # the row's warm-up: bars the service omits at the start
        if tech is None or self.minute:
            return 0
        bars = int(tech.warmup(self.params)) + 1
        if self.ds.timeframe == "W":
            days = bars * 7 + 7
        elif self.ds.timeframe == "M":
            days = bars * 31 + 31
        else:
            days = bars * 7 // 5 + bars // 10 + 10  # weekends and holidays
        if days > MAX_LEAD:
            raise InvalidParams(
                self.ep.name,
                "period",
                f"needs {days} days of warm-up",
                f"warm-up under {MAX_LEAD} days (smaller periods)",
            )
        return days


@dataclass
class Task:
    """One window of one symbol to fetch (``window`` None: the latest 30 days of minutes)."""

    symbol: str
    window: Interval | None  # None: minute timeframe, the latest 30 days
    fetch_from: dt.date | None
