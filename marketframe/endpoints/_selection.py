"""What to fetch of a date-ranged endpoint, checked once: the dataset's parameters, the
symbols and the date range. ``Store.sync``/``read`` and ``download`` share these checks;
each error names the call the user made (``where``), so nobody re-reads another's message.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from marketframe.endpoints import _params
from marketframe.endpoints._model import MINUTE_TIMEFRAMES, Endpoint
from marketframe.endpoints._windows import Interval
from marketframe.exceptions import InvalidParams

__all__ = ["NOT_IDENTITY", "check_dataset", "check_range", "check_symbols", "latest_only"]

#: parameters that only order or bound the answer, never change a row
NOT_IDENTITY = frozenset({"symbol", "timeframe", "sort"})


def check_dataset(
    ep: Endpoint, timeframe: str | None, params: Mapping[str, Any], where: str | None = None
) -> tuple[str | None, dict[str, Any]]:
    """The timeframe and the canonical parameters that shape the data (everything but
    symbols and dates) of ``ep``, checked against its row."""
    where = where or ep.name
    # the parameters that select symbols and dates: sync/read arguments, not the dataset's
    selecting = (*(ep.date_range or ()), ep.multi_param)
    bad = [k for k in params if k in selecting or k not in ep.param_map]
    if bad:
        allowed = [p.name for p in ep.params if p.name not in (*selecting, "timeframe", "sort")]
        raise InvalidParams(
            where,
            bad[0],
            "is not a dataset parameter here (symbols and dates are sync/read arguments)",
            ", ".join(allowed) or "none",
        )
    if "timeframe" in ep.param_map:
        timeframe = str(timeframe) if timeframe is not None else "D"
        tf = ep.param_map["timeframe"]
        if timeframe not in (tf.allowed or ()):
            raise InvalidParams(
                where, "timeframe", f"has value {timeframe!r}", ", ".join(tf.allowed or ())
            )
    elif timeframe is not None:
        raise InvalidParams(where, "timeframe", "is not a parameter of this endpoint", "None")
    canon: dict[str, Any] = {}
    try:
        for k, v in params.items():
            if v is None or k in NOT_IDENTITY:
                continue
            canon[k] = _params.check_value(ep, k, v)
        if timeframe in MINUTE_TIMEFRAMES:
            _params.check_minute(ep, canon)  # the row's minute rules (e.g. fields allowed)
    except InvalidParams as exc:
        raise (exc if where == ep.name else exc.raised_by(where)) from None
    missing = [
        p.name
        for p in ep.params
        if p.required and p.name not in canon and p.name not in (*selecting, "timeframe")
    ]
    if missing:
        raise InvalidParams(where, missing[0], "is required", None)
    if canon.get("adjusted"):  # adjusted history changes with every new corporate action
        raise InvalidParams(
            where,
            "adjusted",
            "would store prices that the next corporate action makes stale",
            "sync raw candles and read(..., adjust='all')",
        )
    return timeframe, canon


def check_symbols(
    ep: Endpoint, symbols: str | Sequence[str] | None, where: str | None = None
) -> list[str] | None:
    """``symbols`` (one or a list) as a list without duplicates, each a valid directory
    name; None for an endpoint that answers for every symbol at once."""
    where = where or ep.name
    if ep.multi_param is None:
        if symbols is not None:
            raise InvalidParams(
                where,
                "symbols",
                "is not accepted: this endpoint answers for every symbol at once",
                "None",
            )
        return None
    return symbol_list(symbols, where)


def symbol_list(symbols: object, where: str) -> list[str]:
    """``symbols`` (one or a list) as a list without duplicates, each a valid directory
    name (the service's rule for a symbol), else :class:`InvalidParams` from ``where``."""
    if symbols is None:
        raise InvalidParams(where, "symbols", "is required", "a symbol or a list")
    if isinstance(symbols, str):
        items = [symbols]
    elif isinstance(symbols, Iterable) and not isinstance(symbols, bytes | Mapping):
        items = list(symbols)
    else:
        raise InvalidParams(
            where,
            "symbols",
            f"has value {symbols!r} of type {type(symbols).__name__}",
            "a symbol string like '2330', or a list of them",
        )
    if not items:
        raise InvalidParams(where, "symbols", "is an empty list", "one or more symbols")
    out: list[str] = []
    for s in items:
        if not _params.is_path_value(s):  # the service's rule: a symbol is also a directory
            shown = repr(s) if len(repr(s)) <= 40 else repr(s)[:37] + "..."
            raise InvalidParams(
                where,
                "symbols",
                f"has value {shown}",
                "symbol strings of " + _params.PATH_VALUE_RULE,
            )
        if s not in out:
            out.append(s)
    return out


def latest_only(ep: Endpoint, timeframe: str | None) -> bool:
    """Minute data the service answers for its latest 30 days only (no date range)."""
    return timeframe in MINUTE_TIMEFRAMES and ep.minute_range != "checked"


def check_range(
    ep: Endpoint,
    timeframe: str | None,
    start: Any,
    end: Any,
    today: dt.date,
    where: str | None = None,
) -> Interval | None:
    """``start``..``end`` (``end`` None: ``today``) as dates, parsed here once; None for
    minute data the service only answers for its latest 30 days."""
    where = where or ep.name
    if latest_only(ep, timeframe):
        if start is not None or end is not None:
            raise InvalidParams(
                where,
                "start",
                "cannot be set with a minute timeframe (the "
                "service returns the latest 30 days; each sync keeps them)",
                "start=None, end=None",
            )
        return None
    if start is None:
        raise InvalidParams(where, "start", "is required", "a 'YYYY-MM-DD' string or a date")
    lo = _params.to_date(where, "start", start)
    hi = _params.to_date(where, "end", end) if end is not None else today
    if lo > today:  # nothing to ask for: an empty answer would look like missing data
        raise InvalidParams(
            where,
            "start",
            f"({lo}) is after today ({today}, Asia/Taipei): the service has no data yet",
            f"a start on or before {today}",
        )
    _params.in_order(where, lo, hi)
    return lo, hi
