"""What a dataset is (:class:`DatasetId`, :class:`Dataset` resolved and validated from a
call's arguments) and one window to fetch (:class:`Fetch`): the types the sync, its
writers, the reads and compute share, below all of them in the imports."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from marketframe import endpoints
from marketframe.endpoints import (
    ENDPOINTS,
    MAX_LEAD,
    MINUTE_TIMEFRAMES,
    Endpoint,
    Interval,
    check_dataset,
    get,
)
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


#: the archive of the tickers lists (``store.sync("universe")``): one file a day, no symbols
UNIVERSE = DatasetId("universe", "archive", None)


@dataclass(frozen=True)
class Dataset:
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
class Fetch:
    """One window of one symbol to fetch (``window`` None: the latest 30 days of minutes)."""

    symbol: str
    window: Interval | None  # None: minute timeframe, the latest 30 days
    fetch_from: dt.date | None


def date_ranged() -> list[str]:
    return [name for name, ep in ENDPOINTS.items() if ep.date_range]


def params_dir(params: Mapping[str, Any]) -> str:
    """Hive-safe text of the parameters that change the data: ``period-20``, ``default``."""
    parts = []
    for k in sorted(params):
        v = params[k]
        text = ".".join(sorted(v)) if isinstance(v, tuple) else str(v)
        parts.append(f"{k}-{text}")
    # a character a path cannot hold (contractMonth "1!", "202609/202610") as ~hex: the text
    # stays one hive-safe directory name, and values that were already safe keep their name
    return re.sub(r"[^A-Za-z0-9_.\-]", lambda m: f"~{ord(m[0]):02x}", "_".join(parts)) or "default"


def resolve(endpoint: str, timeframe: str | None, params: Mapping[str, Any]) -> Dataset:
    """Validate the dataset part of a request (everything but symbols and dates)."""
    ep = get(endpoint)
    if not ep.date_range:
        raise InvalidParams(
            "Store",
            "endpoint",
            f"{endpoint!r} has no date range to store",
            ", ".join(date_ranged()),
        )
    tf, canon = check_dataset(ep, timeframe, params)
    return Dataset(ep, DatasetId(ep.name, params_dir(canon), tf), canon)


def check_symbols(spec: Dataset, symbols: str | Sequence[str] | None) -> list[str]:
    """The symbols of a sync or read (:func:`marketframe.endpoints.check_symbols`); a
    dataset without symbols is held under :data:`NO_SYMBOL`."""
    return endpoints.check_symbols(spec.ep, symbols) or [NO_SYMBOL]


def check_range(spec: Dataset, start: Any, end: Any, today: dt.date) -> Interval | None:
    return endpoints.check_range(spec.ep, spec.ds.timeframe, start, end, today)
