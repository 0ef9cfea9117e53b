"""What an answer leaves behind: the :class:`Response` a fetch returns besides the body, the
client's :class:`Stats` counters, and the headers read from an answer (``Retry-After``,
``Date``, ``X-RateLimit-*``). :mod:`marketframe._http.transport` fills them in."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from marketframe._time import TAIPEI

__all__ = ["Response", "Stats", "rate_headers", "retry_after_seconds", "served_day"]


@dataclass
class Stats:
    """Counters of one client (thread-safe); ``client.stats()`` returns a copy as a dict."""

    requests: int = 0  # requests sent over the network (retries included)
    cache_hits: int = 0
    retries: int = 0
    paced_seconds: float = 0.0
    statuses: dict[int, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **kw: Any) -> None:
        with self._lock:
            for k, v in kw.items():
                if k == "status":
                    self.statuses[v] = self.statuses.get(v, 0) + 1
                else:
                    setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "cache_hits": self.cache_hits,
                "retries": self.retries,
                "paced_seconds": round(self.paced_seconds, 3),
                "statuses": dict(self.statuses),
            }


@dataclass
class Response:
    """What a fetch returns besides the body (never the credential)."""

    url: str
    status: int
    from_cache: bool
    elapsed: float
    retries: int
    rate_limit: dict[str, str]
    body: bytes = field(repr=False, default=b"")
    #: the service's day when it answered (its ``Date`` header, in Taipei), None if absent
    served: dt.date | None = None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def served_day(headers: Mapping[str, str]) -> dt.date | None:
    """The day in Taipei of an answer's ``Date`` header (the service's clock)."""
    value = headers.get("Date")
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).astimezone(TAIPEI).date()
    except (TypeError, ValueError):
        return None


def rate_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        k: headers[k]
        for k in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
        if k in headers
    }
