"""The arguments of the adjustment checked before any request: ``adjust=`` against the other
parameters of a load, a read or a download, and ``as_of=``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from marketframe.adjust._core import ALLOWED, MODES
from marketframe.endpoints import ENDPOINTS, get, to_date
from marketframe.exceptions import InvalidParams


def check(where: str, adjust: Any, params: Mapping[str, Any]) -> str | None:
    """``adjust`` checked against the other parameters; InvalidParams naming the fix."""
    if adjust is None:
        return None
    if not isinstance(adjust, str) or adjust not in MODES:
        raise InvalidParams(where, "adjust", f"has value {adjust!r}", ALLOWED)
    if params.get("adjusted"):
        raise InvalidParams(
            where,
            "adjust",
            "cannot be combined with adjusted=True (the service has adjusted the prices already)",
            "adjust=... (computed locally) or adjusted=True (the service's)",
        )
    timeframe = params.get("timeframe")
    if timeframe in ("W", "M"):
        raise InvalidParams(
            where,
            "adjust",
            f"cannot adjust {timeframe} candles (an action inside a week or month splits its bar)",
            "timeframe D or minutes (resample the adjusted daily frame), or "
            "adjusted=True for the service's own adjusted W/M candles",
        )
    return adjust


def check_as_of(where: str, as_of: Any, mode: str | None) -> dt.date | None:
    """``as_of`` (the day whose known actions adjust the prices) checked: a date, and only
    with ``adjust=``; InvalidParams naming the fix."""
    if as_of is None:
        return None
    if mode is None:
        raise InvalidParams(
            where,
            "as_of",
            "is given without adjust= (it says which corporate actions adjust the prices)",
            "adjust='splits' or 'all' together with as_of, or no as_of",
        )
    return to_date(where, "as_of", as_of)


def check_read(
    endpoint: str, adjust: Any, params: Mapping[str, Any], timeframe: str | None
) -> str | None:
    """``Store.read(..., adjust=...)`` checked (before reading or any request)."""
    if adjust is None:
        return None

    if not get(endpoint).adjustable:
        raise InvalidParams(
            "Store.read",
            "adjust",
            f"does not apply to {endpoint}",
            f"omit it, or read {_adjustable()}",
        )
    return check("Store.read", adjust, {**params, "timeframe": timeframe})


def _adjustable() -> str:
    """The endpoints whose rows take ``adjust=`` (``Endpoint.adjustable``)."""
    return ", ".join(n for n, ep in ENDPOINTS.items() if ep.adjustable)


def check_load(name: str, params: dict[str, Any]) -> tuple[str | None, dt.date | None]:
    """``client.load(name, adjust=..., as_of=..., **params)`` checked, both taken out of
    ``params``: the endpoint takes them and they fit the other parameters. The mode (None:
    not adjusted) and the day of ``as_of``."""
    if "adjust" not in params and "as_of" not in params:
        return None, None
    if not get(name).adjustable:
        raise InvalidParams(
            name,
            "adjust" if "adjust" in params else "as_of",
            "is only a parameter of " + _adjustable(),
            "omit it, or load " + _adjustable(),
        )
    mode = check(name, params.pop("adjust", None), params)
    return mode, check_as_of(name, params.pop("as_of", None), mode)
