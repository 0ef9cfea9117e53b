"""The calendar's days: XTAI's sessions plus the corrections, the trading days of each
session, and a session's open and close."""

from __future__ import annotations

import datetime as dt
import threading
import warnings
from functools import cache, lru_cache

import numpy as np
import pandas as pd

from marketframe.calendar._table import CORRECTIONS, FIRST_DAY, HOURS, LAST_DAY, TAIPEI, Hours

_BUILDING = threading.Lock()


@lru_cache(maxsize=1)
def _base() -> np.ndarray:
    """XTAI's sessions over the coverage, as ``datetime64[D]`` (loaded once, on first use:
    importing exchange_calendars and building XTAI take about a second). One thread builds
    it while the others wait: the warning filters below are process-wide, and a second
    builder leaving its ``catch_warnings`` would restore them under the first one."""
    with _BUILDING:
        return _xtai()


@lru_cache(maxsize=1)
def _xtai() -> np.ndarray:
    import exchange_calendars as xcals  # about a second: loaded on first use

    with warnings.catch_warnings():  # its own pandas deprecations are not the user's to see
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        xtai = xcals.get_calendar("XTAI", start=FIRST_DAY.isoformat(), end=LAST_DAY.isoformat())
    return np.asarray(xtai.sessions.values.astype("datetime64[D]"))


def base_sessions() -> pd.DatetimeIndex:
    """The base calendar's (XTAI's) stock sessions over the coverage, uncorrected."""
    return pd.DatetimeIndex(_base().astype("datetime64[us]"), name="session")


@lru_cache(maxsize=1)
def _days() -> np.ndarray:
    """Every stock session (base + corrections), sorted ``datetime64[D]``."""
    closed = {np.datetime64(c.day, "D") for c in CORRECTIONS if c.kind == "closed"}
    opened = {np.datetime64(c.day, "D") for c in CORRECTIONS if c.kind != "closed"}
    days = {d for d in _base() if d not in closed} | opened
    return np.array(sorted(days), dtype="datetime64[D]")


@cache
def _labels(market: str, session: str) -> np.ndarray:
    """The session labels of (market, session): the trading days that have that session."""
    hours = HOURS[(market, session)]
    days = _days()
    days = days[days >= np.datetime64(hours.since, "D")]
    if not hours.overnight:
        return days
    # a night session opens on the evening of every trading day and belongs to the next one,
    # across a closure too (the evening before Lunar New Year's closure belongs to the first
    # day after it)
    every = _days()
    result: np.ndarray = every[1:][every[:-1] >= np.datetime64(hours.since, "D")]
    return result


def _previous_day(label: np.datetime64) -> np.datetime64:
    every = _days()
    result: np.datetime64 = every[np.searchsorted(every, label) - 1]
    return result


def _bounds(label: np.datetime64, hours: Hours) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Open and close of the session labelled ``label``."""
    start = _previous_day(label) if hours.overnight else label
    d = pd.Timestamp(start).date()
    opens = pd.Timestamp(dt.datetime.combine(d, hours.open, tzinfo=TAIPEI))
    end = d + dt.timedelta(days=1) if hours.overnight else d
    closes = pd.Timestamp(dt.datetime.combine(end, hours.close, tzinfo=TAIPEI))
    return opens, closes
