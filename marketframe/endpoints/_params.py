"""Parameter validation and encoding, driven by :data:`marketframe.endpoints.ENDPOINTS`.

Everything here runs before any request: a parameter that breaks the endpoint's rules raises
:class:`~marketframe.exceptions.InvalidParams` naming the allowed values.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import numpy as np

from marketframe._time import TAIPEI, one_year_after
from marketframe.endpoints._model import EARLIEST, MINUTE_TIMEFRAMES, Endpoint, spelled
from marketframe.exceptions import InvalidParams, did_you_mean

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: Dates outside this span are refused: the service has nothing there, and date arithmetic
#: (a year after 9999-06-01) would fail with a bare ValueError/OverflowError.
DATE_SPAN = (dt.date(1900, 1, 1), dt.date(2999, 12, 31))
#: A path parameter (symbol, market): letters, digits and ``. _ -``, starting with a letter or
#: digit, so it can never be ``.``/``..`` or otherwise rewrite the request's path.
_PATH_VALUE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
#: what a path value (a symbol, a market) may look like, for messages
PATH_VALUE_RULE = (
    "letters, digits and . _ - (starting with a letter or digit, at most 32), e.g. '2330'"
)


#: A path parameter as the service takes it: also ``/`` (calendar spreads, ``MXFA6/C6``) and
#: ``!`` (continuous aliases, ``TXF1!``), which :func:`encode` percent-encodes (``%2F``,
#: ``%21``), so they can never add a path segment. (Not a directory name: the store keeps
#: :func:`is_path_value`.)
_REQUEST_VALUE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._!/-]{0,31}$")
REQUEST_VALUE_RULE = (
    "letters, digits and . _ - / ! (starting with a letter or digit, at most "
    "32), e.g. '2330' or 'MXFA6/C6'"
)


def is_path_value(value: object) -> bool:
    """A symbol (or other path segment) the service can be asked for: never ``.``/``..``,
    ``/`` or an over-long string; the store also uses it as a directory name."""
    return isinstance(value, str) and _PATH_VALUE_RE.match(value) is not None


def is_request_value(value: object) -> bool:
    """A path value a request may carry: :func:`is_path_value`'s characters plus ``/`` and
    ``!`` (spreads ``MXFA6/C6``, continuous months ``TXF1!``; percent-encoded on the wire),
    never an empty, ``.`` or ``..`` part between slashes."""
    return (
        isinstance(value, str)
        and _REQUEST_VALUE_RE.match(value) is not None
        and all(part not in ("", ".", "..") for part in value.split("/"))
    )


_DATE_FIX = "a 'YYYY-MM-DD' string, datetime.date, datetime.datetime or numpy.datetime64"


def to_date(endpoint: str, name: str, value: object) -> dt.date:
    """``str`` (YYYY-MM-DD), ``date``, ``datetime`` (``pandas.Timestamp``) or
    ``numpy.datetime64`` -> ``date``.

    A tz-aware ``datetime`` is first converted to Asia/Taipei (the service's calendar), so
    ``2025-01-06 20:00 UTC`` is 2025-01-07; a naive one (a ``datetime64`` too) is taken as
    Taipei time."""
    day: dt.date | None = None
    if isinstance(value, dt.date) and value != value:  # noqa: PLR0124 - pandas' NaT
        pass  # NaT is a datetime that equals nothing: "not a date", never a TypeError later
    elif isinstance(value, dt.datetime):
        day = (value.astimezone(TAIPEI) if value.tzinfo is not None else value).date()
    elif isinstance(value, dt.date):
        day = value
    elif isinstance(value, np.datetime64):  # NaT, or a year out of Python's: no date
        got = value.astype("datetime64[D]").item()
        day = got if isinstance(got, dt.date) else None
    elif isinstance(value, str) and _DATE_RE.match(value):
        try:
            day = dt.date.fromisoformat(value)
        except ValueError:
            pass
    if day is None:
        raise InvalidParams(endpoint, name, f"is not a date: {_short(value)}", _DATE_FIX)
    if not DATE_SPAN[0] <= day <= DATE_SPAN[1]:
        raise InvalidParams(
            endpoint,
            name,
            f"({day}) is out of range",
            f"dates from {DATE_SPAN[0]} to {DATE_SPAN[1]}",
        )
    return day


def in_order(where: str, lo: dt.date | None, hi: dt.date | None) -> None:
    """Refuse a ``start`` after its ``end`` (either may be None): an empty answer would
    look like missing data."""
    if lo is not None and hi is not None and lo > hi:
        raise InvalidParams(where, "start", f"({lo}) is after end ({hi})", "start <= end")


def _allowed(p_allowed: tuple[str, ...] | None) -> str:
    return ", ".join(p_allowed or ())


def _short(value: object) -> str:
    """``repr`` of a bad value, cut short (an error message never grows with the input)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - e.g. an int too long to print: say what it is
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _fields(ep: Endpoint, name: str, value: Any) -> tuple[str, ...]:
    """A comma string (``"open,close"``), or a list/tuple of names or comma strings."""
    p = ep.param_map[name]
    fix = f"a comma string or a list of: {_allowed(p.allowed)}"
    parts = [value] if isinstance(value, str) else value
    if not isinstance(parts, list | tuple) or not all(isinstance(x, str) for x in parts):
        raise InvalidParams(
            ep.name, name, f"must be a comma string or a list of strings, got {_short(value)}", fix
        )
    items = [f.strip() for part in parts for f in part.split(",")]
    if not items or not all(items):
        raise InvalidParams(ep.name, name, f"has an empty field name in {_short(value)}", fix)
    bad = [f for f in items if f not in (p.allowed or ())]
    if bad:
        raise InvalidParams(ep.name, name, f"has unknown fields {bad}", _allowed(p.allowed))
    return tuple(dict.fromkeys(items))  # the order given, each field once


def check_value(ep: Endpoint, name: str, value: Any) -> Any:
    """Validate one parameter value and return its canonical Python form."""
    p = ep.param_map[name]
    if p.type == "enum":
        small_int = isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**9
        text = value if isinstance(value, str) else str(value) if small_int else None
        if p.fold_case and text is not None:  # sent in the service's spelling
            text = spelled(text, p.allowed or ()) or text
        if text is None or text not in (p.allowed or ()):
            raise InvalidParams(ep.name, name, f"has value {_short(value)}", _allowed(p.allowed))
        return text
    if p.type == "date":
        return to_date(ep.name, name, value)
    if p.type == "bool":
        if not isinstance(value, bool):
            raise InvalidParams(
                ep.name, name, f"must be a bool, got {_short(value)}", "True, False"
            )
        return value
    if p.type == "int":
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < p.minimum
            or value >= 2**31
        ):
            raise InvalidParams(
                ep.name,
                name,
                f"must be an int >= {p.minimum}, got {_short(value)}",
                f"ints from {p.minimum} to {2**31 - 1}",
            )
        return int(value)
    if p.type == "float":
        if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
            raise InvalidParams(
                ep.name,
                name,
                f"must be a finite number, got {_short(value)}",
                "finite int or float values (not NaN or inf)",
            )
        # numpy scalars (a value taken from a frame) as plain Python numbers
        return int(value) if isinstance(value, int) else float(value)
    if p.type == "fields":
        return _fields(ep, name, value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(
            ep.name,
            name,
            f"must be a non-empty string, got {_short(value)}",
            "a non-empty str (symbols as strings: '0050', not 50)",
        )
    if p.pattern is not None and not re.fullmatch(p.pattern, value):
        fix = p.fix(value) if callable(p.fix) else p.fix
        raise InvalidParams(
            ep.name,
            name,
            f"is not a valid {name}: {_short(value)}",
            fix or f"a value matching {p.pattern}",
        )
    if p.in_path and not is_request_value(value):
        raise InvalidParams(
            ep.name, name, f"is not a valid {name}: {_short(value)}", REQUEST_VALUE_RULE
        )
    return value


def validate(ep: Endpoint, params: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``params`` (one value for the path parameter) and return canonical values."""
    unknown = [k for k in params if k not in ep.param_map]
    if unknown:
        raise InvalidParams(
            ep.name,
            unknown[0],
            "is not a parameter of this endpoint" + did_you_mean(unknown[0], ep.param_map),
            ", ".join(ep.param_map),
        )
    out = {k: check_value(ep, k, v) for k, v in params.items() if v is not None}
    missing = [p.name for p in ep.params if p.required and p.name not in out]
    if missing:
        raise InvalidParams(
            ep.name, missing[0], "is required", _allowed(ep.param_map[missing[0]].allowed) or None
        )
    minute = out.get("timeframe") in MINUTE_TIMEFRAMES
    if minute:
        check_minute(ep, out)
    if ep.date_range and not (minute and ep.minute_range == "ignored"):
        _check_range(ep, ep.date_range, out)
    return out


def check_minute(ep: Endpoint, values: Mapping[str, Any]) -> None:
    """The row's minute-timeframe rules: a ``forbidden`` range, the ``minute_refused`` flags,
    the ``minute_fields``."""
    if ep.minute_range == "forbidden" and ep.date_range:
        for k in ep.date_range:
            if k in values:
                raise InvalidParams(
                    ep.name,
                    k,
                    "cannot be set with a minute timeframe (the "
                    "service always returns the latest 30 days)",
                    f"omit {'/'.join(ep.date_range)}, or use timeframe D, W or M",
                )
    for k in ep.minute_refused:
        if values.get(k):
            raise InvalidParams(
                ep.name,
                k,
                "is only available for timeframes D, W and M",
                f"timeframe D, W or M, or {k}=False",
            )
    if ep.minute_fields is not None:
        bad = [f for f in values.get("fields", ()) if f not in ep.minute_fields]
        if bad:
            raise InvalidParams(
                ep.name,
                "fields",
                f"cannot select {bad} with a minute timeframe",
                ", ".join(ep.minute_fields),
            )


def _check_range(ep: Endpoint, names: tuple[str, str], out: dict[str, Any]) -> None:
    lo_name, hi_name = names
    lo, hi = out.get(lo_name), out.get(hi_name)
    wire_lo = ep.param_map[lo_name].wire_name
    if lo is not None and hi is not None:
        if lo > hi:
            raise InvalidParams(
                ep.name, lo_name, f"({lo}) is after {hi_name} ({hi})", f"{wire_lo} <= {hi_name}"
            )
        if hi >= one_year_after(lo):
            raise InvalidParams(
                ep.name,
                hi_name,
                f"({hi}) makes a range of a year or more from {lo}",
                f"ranges under one year: {hi_name} <= {one_year_after(lo) - dt.timedelta(days=1)}; "
                + (
                    "for any range use marketframe.download() or `marketframe download`, "
                    "which split it into windows"
                    if ep.name == "stock.historical.candles"
                    else "split longer ranges into windows (the Parquet store does this for you)"
                ),
            )
    if lo is not None and "symbol" in out:
        kind = "index" if str(out["symbol"]).startswith("IX") else "stock"
        earliest = EARLIEST[kind]
        if lo < earliest:
            raise InvalidParams(
                ep.name,
                lo_name,
                f"({lo}) is before the earliest {kind} data",
                f"dates from {earliest}",
            )


def encode(ep: Endpoint, values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """Canonical values -> (path relative to base_url, query parameters).

    The one place paths are built: every path value is percent-encoded whole (``/`` -> ``%2F``,
    ``!`` -> ``%21``), as the service requires (sdk-parity.md, global facts)."""
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


# --- the glossary's words (docs/glossary.md) -> each endpoint's own parameter names ----------

#: words accepted on every call, whatever the endpoint calls the parameter
VOCABULARY = ("start", "end", "symbols", "odd_lot")


def aliases(ep: Endpoint) -> dict[str, str]:
    """The glossary's words ``ep`` accepts, each -> the endpoint's own parameter name."""
    names: dict[str, str] = {}
    if ep.date_range:
        names.update(zip(("start", "end"), ep.date_range, strict=True))
    if ep.multi_param == "symbol":
        names["symbols"] = "symbol"
    oddlot = ep.param_map.get("type")
    if oddlot is not None and oddlot.allowed == ("oddlot",):
        names["odd_lot"] = "type"
    return names


def vocabulary(ep: Endpoint, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with the glossary's words turned into ``ep``'s parameter names: ``start`` /
    ``end`` -> its date range (``from_``/``to``, or ``start_date``/``end_date``), ``symbols``
    -> ``symbol``, ``odd_lot=True`` -> ``type="oddlot"``. The endpoint's own names (the
    wire's and the SDK's) keep working; giving both spellings raises :class:`InvalidParams`."""
    out = dict(params)
    if not any(w in out for w in VOCABULARY):
        return out
    names = aliases(ep)
    if "odd_lot" in names:
        del names["odd_lot"]
        odd = out.pop("odd_lot", None)
        if odd is not None and not isinstance(odd, bool):
            raise InvalidParams(
                ep.name, "odd_lot", f"must be a bool, got {_short(odd)}", "True, False"
            )
        if odd:
            names["odd_lot"] = "type"
            out["odd_lot"] = "oddlot"
    for word, name in names.items():
        if word not in out:
            continue
        if out.get(name) is not None:
            raise InvalidParams(
                ep.name, word, f"is given twice (as {word} and as {name})", "one of the two"
            )
        out[name] = out.pop(word)
    return out
