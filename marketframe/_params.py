"""Parameter validation and encoding, driven by :data:`marketframe.endpoints.ENDPOINTS`.

Everything here runs before any request: a parameter that breaks the endpoint's rules raises
:class:`~marketframe.exceptions.InvalidParams` naming the allowed values.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from marketframe.endpoints import EARLIEST, MINUTE_TIMEFRAMES, Endpoint
from marketframe.exceptions import InvalidParams

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DateLike = str | dt.date | dt.datetime


def to_date(endpoint: str, name: str, value: object) -> dt.date:
    """``str`` (YYYY-MM-DD), ``date`` or ``datetime`` -> ``date``."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and _DATE_RE.match(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise InvalidParams(endpoint, name, f"is not a date: {value!r}",
                        "a 'YYYY-MM-DD' string, datetime.date or datetime.datetime")


def one_year_after(day: dt.date) -> dt.date:
    """Same month and day next year; Feb 29 -> Feb 28."""
    try:
        return day.replace(year=day.year + 1)
    except ValueError:
        return day.replace(year=day.year + 1, day=28)


def _allowed(p_allowed: tuple[str, ...] | None) -> str:
    return ", ".join(p_allowed or ())


def _check_value(ep: Endpoint, name: str, value: Any) -> Any:
    """Validate one parameter value and return its canonical Python form."""
    p = ep.param_map[name]
    if p.type == "enum":
        text = str(value)
        if text not in (p.allowed or ()):
            raise InvalidParams(ep.name, name, f"has value {value!r}", _allowed(p.allowed))
        return text
    if p.type == "date":
        return to_date(ep.name, name, value)
    if p.type == "bool":
        if not isinstance(value, bool):
            raise InvalidParams(ep.name, name, f"must be a bool, got {value!r}", "True, False")
        return value
    if p.type == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidParams(ep.name, name, f"must be a non-negative int, got {value!r}",
                                "0, 1, 2, ...")
        return value
    if p.type == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidParams(ep.name, name, f"must be a number, got {value!r}", "numbers")
        return value
    if p.type == "fields":
        items = value.split(",") if isinstance(value, str) else list(value)
        bad = [f for f in items if f not in (p.allowed or ())]
        if bad or not items:
            raise InvalidParams(ep.name, name, f"has unknown fields {bad}", _allowed(p.allowed))
        return tuple(items)
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(ep.name, name, f"must be a non-empty string, got {value!r}")
    return value


def validate(ep: Endpoint, params: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``params`` (one value for the path parameter) and return canonical values."""
    unknown = [k for k in params if k not in ep.param_map]
    if unknown:
        raise InvalidParams(ep.name, unknown[0], "is not a parameter of this endpoint",
                            ", ".join(ep.param_map))
    out = {k: _check_value(ep, k, v) for k, v in params.items() if v is not None}
    missing = [p.name for p in ep.params if p.required and p.name not in out]
    if missing:
        raise InvalidParams(ep.name, missing[0], "is required",
                            _allowed(ep.param_map[missing[0]].allowed) or None)
    minute = out.get("timeframe") in MINUTE_TIMEFRAMES
    if ep.name == "stock.historical.candles" and minute:
        for k in ("from_", "to"):
            if k in out:
                raise InvalidParams(ep.name, k, "cannot be set with a minute timeframe (the "
                                    "service always returns the latest 30 days)",
                                    "omit from_/to, or use timeframe D, W or M")
        bad = [f for f in out.get("fields", ()) if f in ("turnover", "change")]
        if bad:
            raise InvalidParams(ep.name, "fields", f"cannot select {bad} with a minute timeframe",
                                "open, high, low, close, volume")
    if ep.date_range and not (minute and ep.name.startswith("stock.technical.")):
        _check_range(ep, out)
    return out


def _check_range(ep: Endpoint, out: dict[str, Any]) -> None:
    lo_name, hi_name = ep.date_range  # type: ignore[misc]
    lo, hi = out.get(lo_name), out.get(hi_name)
    wire_lo = ep.param_map[lo_name].wire_name
    if lo is not None and hi is not None:
        if lo > hi:
            raise InvalidParams(ep.name, lo_name, f"({lo}) is after {hi_name} ({hi})",
                                f"{wire_lo} <= {hi_name}")
        if hi >= one_year_after(lo):
            raise InvalidParams(
                ep.name, hi_name, f"({hi}) makes a range of a year or more from {lo}",
                f"ranges under one year: {hi_name} <= {one_year_after(lo) - dt.timedelta(days=1)}; "
                "split longer ranges into windows (the Parquet store does this for you)",
            )
    if lo is not None and "symbol" in out:
        kind = "index" if str(out["symbol"]).startswith("IX") else "stock"
        earliest = EARLIEST[kind]
        if lo < earliest:
            raise InvalidParams(ep.name, lo_name, f"({lo}) is before the earliest {kind} data",
                                f"dates from {earliest}")


def encode(ep: Endpoint, values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """Canonical values -> (path relative to base_url, query parameters)."""
    path = ep.path
    query: dict[str, str] = {}
    for p in ep.params:
        if p.name not in values:
            continue
        v = values[p.name]
        if p.in_path:
            path = path.replace("{" + p.name + "}", quote(str(v), safe=""))
            continue
        if isinstance(v, bool):
            text = "true" if v else "false"
        elif isinstance(v, dt.date):
            text = v.isoformat()
        elif isinstance(v, tuple):
            text = ",".join(v)
        else:
            text = str(v)
        query[p.wire_name] = text
    return path, query

