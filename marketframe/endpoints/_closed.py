"""A range of closed days is said, not only answered with an empty frame.

:func:`say_if_closed` warns :class:`~marketframe.exceptions.NoSession` when no trading day
falls in a requested range (a weekend, a holiday, a typhoon closure), naming the sessions on
either side. ``download`` says it for every range it is given; the loaders say it for the
endpoints whose rows are bars of sessions (:func:`say_if_answer_closed`) when their answer is empty.
"""

from __future__ import annotations

import datetime as dt
import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from marketframe.exceptions import InvalidParams, NoSession

if TYPE_CHECKING:
    from marketframe.endpoints._model import Endpoint


def say_if_answer_closed(ep: Endpoint, values: Mapping[str, Any]) -> None:
    """:func:`say_if_closed` for an empty answer of ``ep`` asked with ``values``, when its rows
    are bars of sessions: a dated endpoint with a ``timeframe`` (historical candles, the
    technical indicators), not one whose rows are events (corporate actions, ownership)."""
    if ep.date_range is None or "timeframe" not in ep.param_map:
        return
    start, end = (values.get(p) for p in ep.date_range)
    if isinstance(start, dt.date) and isinstance(end, dt.date):
        say_if_closed(ep.name, start, end)


def say_if_closed(where: str, start: dt.date, end: dt.date) -> None:
    """Warn (:class:`NoSession`) when no trading day falls in ``start..end``: the frame will
    be empty because the market was closed, which an empty frame alone does not say. The
    warning points at the first caller outside the package."""
    # the calendar (exchange_calendars) loads on first use: import marketframe stays light
    from marketframe import calendar

    try:
        if len(calendar.sessions_in_range(start, end)):
            return
        before = f"the session before is {calendar.previous_close(start).date()}"
    except InvalidParams:  # outside the calendar's years: nothing it can tell
        return
    try:
        after = f", the next {calendar.next_open(end).date()}"
    except InvalidParams:
        after = ""
    span = str(start) if start == end else f"from {start} to {end}"
    warnings.warn(
        NoSession(
            f"{where}: no trading session {span} (the market was closed: weekend, holiday or "
            f"closure, marketframe.calendar); the frame is empty; {before}{after}"
        ),
        stacklevel=_user_level(),
    )


def _user_level() -> int:
    """The ``stacklevel`` of the first frame outside the package, seen from the caller of
    :func:`warnings.warn` here (the loaders reach this at different depths)."""
    frame = sys._getframe(1)  # say_if_closed: stacklevel 1
    level = 1
    while frame.f_back is not None and _ours(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    return level


def _ours(module: str) -> bool:
    return module == "marketframe" or module.startswith("marketframe.")
