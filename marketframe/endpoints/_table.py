"""The table: the endpoint rows by name, read by the rules beside it and by every package."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from marketframe.endpoints._model import Endpoint
from marketframe.endpoints._rows import _ROWS
from marketframe.exceptions import InvalidParams, did_you_mean

#: the rows by name (a live view: tests that add a synthetic row see it everywhere)
_BY_NAME: dict[str, Endpoint] = {e.name: e for e in _ROWS}
ENDPOINTS: Mapping[str, Endpoint] = MappingProxyType(_BY_NAME)


def get(name: str) -> Endpoint:
    """The endpoint called ``name``; InvalidParams naming the allowed names otherwise."""
    try:
        return ENDPOINTS[name]
    except KeyError:
        raise InvalidParams(
            name,
            "endpoint",
            "is not an endpoint" + did_you_mean(name, ENDPOINTS),
            ", ".join(ENDPOINTS),
        ) from None
