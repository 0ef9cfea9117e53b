"""A request prepared once (:class:`Prepared`): the one request path's first step.

Endpoint row + parameters -> :func:`prepare` -> a frozen :class:`Prepared` holding the
canonical values, the path, the query, the cache key and the kind of credential it will
carry. Everything that checks parameters happens in :func:`prepare`, before any request;
the transport sends a ``Prepared`` as it is and conversion reads its values, so nothing is
validated, encoded or parsed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import urlencode

from marketframe.endpoints import Endpoint, encode, validate

__all__ = ["Prepared", "prepare"]


@dataclass(frozen=True, slots=True)
class Prepared:
    """One GET of one endpoint, validated and encoded (never the credential itself)."""

    ep: Endpoint
    values: Mapping[str, Any]  # canonical values (dates as dates, fields as tuples)
    path: str  # relative to the client's base URL, path values percent-encoded
    query: tuple[tuple[str, str], ...]  # wire names and texts, in the row's order
    key: str  # path?query with the query sorted: the same request has the same key
    wire: str  # path?query as sent (the row's order), percent-encoded once
    credential: str  # the kind of credential it carries: api_key, bearer_token, sdk_token
    refresh: bool = False  # skip the HTTP cache's stored answer

    @property
    def name(self) -> str:
        return self.ep.name

    @property
    def target(self) -> str:
        """The value of the row's path parameter (a symbol, a market), else the path."""
        multi = self.ep.multi_param
        return str(self.values[multi]) if multi and multi in self.values else self.path

    def shown(self) -> str:
        """The request as logs and errors show it (path and query, no credential)."""
        return self.path + ("?" + "&".join(f"{k}={v}" for k, v in self.query) if self.query else "")


def prepare(
    ep: Endpoint, params: Mapping[str, Any], *, credential: str, refresh: bool = False
) -> Prepared:
    """``params`` (the endpoint's names, one value for its path parameter; the glossary's words
    already turned into them by :func:`marketframe.endpoints.vocabulary`) checked and encoded:
    :class:`~marketframe.InvalidParams` before anything is sent."""
    values = validate(ep, params)
    path, query = encode(ep, values)
    pairs = tuple(query.items())
    key = path + ("?" + urlencode(sorted(pairs)) if pairs else "")
    wire = path + ("?" + urlencode(pairs) if pairs else "")
    return Prepared(ep, MappingProxyType(values), path, pairs, key, wire, credential, refresh)
