"""ENDPOINTS: one row per REST endpoint of the service, with every rule that is its own.

The client tree (``client.stock.intraday.quote``), parameter validation, the store's windows
and warm-up, the cross-check, the CLI, ``docs/endpoints.md`` and the endpoint tests are all
generated from this table. Adding an endpoint is one row here, its schema in
:mod:`marketframe.schemas` and its handler in the sandbox (``docs/contributing.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from marketframe._time import TAIPEI as TAIPEI
from marketframe.endpoints._model import (
    EARLIEST,
    FRESHNESS,
    FUTOPT_FIELDS,
    HISTORICAL_FIELDS,
    MARKETS,
    MINUTE_TIMEFRAMES,
    PLANS,
    TIMEFRAMES,
    Endpoint,
    MinuteRange,
    Param,
    Technical,
)
from marketframe.endpoints._rows import _ROWS
from marketframe.endpoints._vocab import FROM, SYMBOL, TO

__all__ = [
    "EARLIEST",
    "ENDPOINTS",
    "FRESHNESS",
    "FROM",
    "FUTOPT_FIELDS",
    "HISTORICAL_FIELDS",
    "MARKETS",
    "MINUTE_TIMEFRAMES",
    "PLANS",
    "SYMBOL",
    "TIMEFRAMES",
    "TO",
    "Endpoint",
    "MinuteRange",
    "Param",
    "Technical",
    "get",
]

#: the rows by name (a live view: tests that add a synthetic row see it everywhere)
_BY_NAME: dict[str, Endpoint] = {e.name: e for e in _ROWS}
ENDPOINTS: Mapping[str, Endpoint] = MappingProxyType(_BY_NAME)


def get(name: str) -> Endpoint:
    """The endpoint called ``name``; InvalidParams naming the allowed names otherwise."""
    try:
        return ENDPOINTS[name]
    except KeyError:
        from marketframe.exceptions import InvalidParams, did_you_mean

        raise InvalidParams(
            name,
            "endpoint",
            "is not an endpoint" + did_you_mean(name, ENDPOINTS),
            ", ".join(ENDPOINTS),
        ) from None
