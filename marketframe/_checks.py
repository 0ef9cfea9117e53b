"""Argument checks: ``Client(...)``'s options, before anything is sent, and :func:`check_int`,
which the store and the live engine use too.

A bad option raises :class:`InvalidParams` at construction, naming the fix, instead of failing
later inside ``requests``. The credential (API key, bearer token or SDK token) is checked the
same way in :mod:`marketframe._http.credential`, and no message ever contains it.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from marketframe.exceptions import InvalidParams

_WHERE = "Client"


#: the REST API's version segment (the only one the service serves)
API_VERSION = "v1.0"
_VERSION_SEGMENT = re.compile(r"^v\d+(\.\d+)?$")


def check_base_url(base_url: object) -> str:
    """An ``http(s)://host[:port][/path]`` URL, resolved to end in the version segment.

    Both spellings work: ours (``https://api.fugle.tw/marketdata/v1.0``, the version
    included, as before) and the official SDK's (``https://api.fugle.tw/marketdata``, host and
    path prefix only), to which ``/v1.0`` is appended. A version is never doubled; a URL with
    another version, or with more path after the version (a copied request URL,
    ``.../v1.0/v1.0``), is refused with the URL to use instead."""
    fix = "an http:// or https:// URL, e.g. 'https://api.fugle.tw/marketdata/v1.0'"
    if not isinstance(base_url, str) or not base_url.strip():
        raise InvalidParams(_WHERE, "base_url", f"must be a non-empty str, got {base_url!r}", fix)
    shown = repr(base_url) if "@" not in base_url else "(value not shown: it has user info)"
    try:
        parts = urlsplit(base_url.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise InvalidParams(_WHERE, "base_url", f"is not a valid URL: {shown}", fix) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidParams(_WHERE, "base_url", f"is not an http(s) URL: {shown}", fix)
    if parts.username is not None or parts.password is not None:
        raise InvalidParams(
            _WHERE,
            "base_url",
            f"has user info: {shown}",
            "a URL without 'user:password@' (the key goes in api_key)",
        )
    if parts.query or parts.fragment:
        raise InvalidParams(_WHERE, "base_url", f"has a query or fragment: {shown}", fix)
    url = base_url.strip().rstrip("/")
    segments = parts.path.rstrip("/").split("/")
    at = next((i for i, seg in enumerate(segments) if _VERSION_SEGMENT.match(seg)), None)
    if at is None:
        return f"{url}/{API_VERSION}"  # the SDK's form: host and path prefix only
    prefix = f"{parts.scheme}://{parts.netloc}{'/'.join(segments[:at])}"
    if segments[at] != API_VERSION:
        raise InvalidParams(
            _WHERE,
            "base_url",
            f"ends in version {segments[at]!r}: {shown}; "
            f"the REST API is served at {API_VERSION} only",
            f"{prefix + '/' + API_VERSION!r} or {prefix!r}",
        )
    if at != len(segments) - 1:
        raise InvalidParams(
            _WHERE,
            "base_url",
            f"goes on after the version segment: {shown} (each call adds its own path)",
            f"{prefix + '/' + API_VERSION!r} (or {prefix!r}, as in the SDK)",
        )
    return url


def _positive(name: str, value: object, *, zero: bool = False) -> float:
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value >= 0 if zero else value > 0)
    ):
        return float(value)
    what = "a finite number >= 0" if zero else "a finite number > 0"
    raise InvalidParams(_WHERE, name, f"must be {what}, got {value!r}", f"{what} (seconds)")


def check_timeout(value: object) -> float | tuple[float, float]:
    """Seconds (> 0), or a ``(connect, read)`` pair of them."""
    if isinstance(value, tuple | list) and len(value) == 2:
        return (_positive("timeout", value[0]), _positive("timeout", value[1]))
    if isinstance(value, tuple | list):
        raise InvalidParams(
            _WHERE,
            "timeout",
            f"must be seconds or a (connect, read) pair, got {value!r}",
            "e.g. 10 or (5, 30)",
        )
    return _positive("timeout", value)


def check_cache(value: object) -> bool | Path:
    """``True`` (the user cache directory), ``False`` / ``None`` (no cache), or a file path."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str | os.PathLike) and str(os.fspath(value)).strip():
        return Path(os.fspath(value))
    raise InvalidParams(
        _WHERE,
        "cache",
        f"must be True, False or a file path, got {value!r}",
        "True, False, or a path such as 'cache.sqlite'",
    )


def check_int(
    name: str, value: object, minimum: int, where: str = _WHERE, allowed: str | None = None
) -> int:
    """``value`` if it is an int (not a bool) >= ``minimum``, else :class:`InvalidParams`
    from ``where`` naming ``allowed`` (by default the ints from ``minimum`` on)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidParams(
            where,
            name,
            f"must be an int >= {minimum}, got {value!r}",
            allowed or f"{minimum}, {minimum + 1}, ...",
        )
    return value


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidParams(_WHERE, name, f"must be a bool, got {value!r}", "True, False")
    return value


def check_options(**options: Any) -> dict[str, Any]:
    """All of ``Client``'s transport options, checked and canonical."""
    return {
        "base_url": check_base_url(options["base_url"]),
        "cache": check_cache(options["cache"]),
        "timeout": check_timeout(options["timeout"]),
        "retries": check_int("retries", options["retries"], 0),
        "backoff": _positive("backoff", options["backoff"], zero=True),
        "max_retry_after": _positive("max_retry_after", options["max_retry_after"], zero=True),
        "deadline": _positive("deadline", options["deadline"]),
        "pace": check_bool("pace", options["pace"]),
    }


def is_polars(frame: object) -> bool:
    """Whether ``frame`` is a polars object (without importing polars)."""
    return type(frame).__module__.startswith("polars")


def check_frame(where: str, param: str, frame: object, need: tuple[str, ...]) -> Any:
    """``frame`` (a pandas or polars DataFrame with the columns ``need``) as pandas."""
    import pandas as pd

    if is_polars(frame):
        out = frame.to_pandas()  # type: ignore[attr-defined]
    elif isinstance(frame, pd.DataFrame):
        out = frame
    else:
        raise InvalidParams(
            where, param, f"is a {type(frame).__name__}", "a pandas or polars DataFrame"
        )
    missing = [c for c in need if c not in out.columns]
    if missing:
        raise InvalidParams(where, param, f"has no column {missing[0]!r}", ", ".join(need))
    return out
