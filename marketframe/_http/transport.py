"""HTTP transport: pooled session, timeouts, retries within a deadline, and pacing.

Retries are done here rather than by urllib3's ``Retry`` so that one loop can honour
``Retry-After`` (and refuse to sleep longer than ``max_retry_after``), feed the pacer, and count
every retry in :class:`Stats`. Each call ends within its total ``deadline`` (retries, waits and
the reading of the body included). The HTTP cache is set up in :mod:`marketframe._http.cache`. The
credential (:mod:`marketframe._http.credential`) travels only in its header (``X-API-KEY``,
``Authorization: Bearer`` or ``X-SDK-TOKEN``): it is never logged, never put in an exception,
and never stored.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import requests
from requests.adapters import HTTPAdapter

from marketframe._http.body import read_within
from marketframe._http.cache import KEY_HEADER, cached_session, default_cache_path
from marketframe._http.credential import Credential
from marketframe._time import TAIPEI
from marketframe.endpoints import FRESHNESS, MINUTE_TIMEFRAMES, Endpoint
from marketframe.exceptions import (
    APIError,
    DeadlineExceeded,
    TransportError,
    error_for_status,
    redact,
)

log = logging.getLogger("marketframe")
__all__ = [
    "DEFAULT_DEADLINE",
    "KEY_HEADER",
    "NEVER_EXPIRE",
    "Pacer",
    "Response",
    "Stats",
    "Transport",
    "default_cache_path",
    "expire_after",
]
#: Seconds one call may take, all retries and their waits included (``Client(deadline=...)``).
DEFAULT_DEADLINE = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
NEVER_EXPIRE = -1
BACKOFF_MAX = 8.0  # seconds, before jitter


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


class Pacer:
    """Slows requests down from the ``X-RateLimit-*`` headers before the service refuses them.

    While ``Remaining`` is above ``reserve`` requests go out at once. Below it, each request
    waits ``(reset - now) / remaining`` so the rest of the window is spread out; at zero it
    waits for the reset. Requests are counted down locally as they go out, and an answer can
    only lower that count within a window (answers lag the requests in flight), so threads
    share one budget. When a window ends, the next starts with the whole limit and an end
    estimated from the window length seen so far, until its own headers arrive; answers from
    a window that has ended are ignored.
    """

    def __init__(self, reserve: float = 0.1):
        self.reserve = reserve
        self._lock = threading.Lock()
        self._remaining: float | None = None
        self._limit: int | None = None
        self._reset: float | None = None  # epoch seconds
        self._estimated = False  # _reset is our guess for a window with no answer yet
        self._span = 0.0  # the longest window seen (seconds)
        self._queued = 0  # requests told to wait for the next window
        self._blind = 0  # requests sent before any headers were seen
        self._inflight = 0  # requests counted by delay() and not answered yet

    def update(self, headers: Mapping[str, str]) -> None:
        try:
            limit = int(headers["X-RateLimit-Limit"])
            remaining = int(headers["X-RateLimit-Remaining"])
            reset = int(headers["X-RateLimit-Reset"]) / 1000.0  # epoch milliseconds
        except (KeyError, ValueError):
            return
        now = time.time()
        with self._lock:
            self._inflight = max(self._inflight - 1, 0)
            if reset <= now or (
                self._reset is not None and not self._estimated and reset < self._reset - 0.5
            ):
                return  # an answer from a window that has ended
            self._span = max(self._span, reset - now)
            self._limit = limit
            if self._remaining is None:  # the first answer: the others sent blind are in flight
                remaining -= max(self._blind - 1, 0)
                self._blind = 0
            elif not self._estimated and self._reset is not None and reset > self._reset + 0.5:
                self._roll(reset)  # a window began that delay() has not seen yet
            remaining = (
                min(remaining, int(self._remaining)) if self._remaining is not None else remaining
            )
            self._remaining, self._reset, self._estimated = remaining, reset, False

    def _roll(self, reset: float) -> None:
        """Start a window: the whole limit, less every request still in flight (those that
        waited for this window, and any sent at the end of the last that may land in it)."""
        assert self._limit is not None
        self._remaining = self._limit - self._inflight
        self._queued = 0
        self._reset = reset

    def abandon(self) -> None:
        """A counted request got no answer at all (connection error, timeout)."""
        with self._lock:
            self._inflight = max(self._inflight - 1, 0)

    def delay(self) -> float:
        """Seconds to wait before the next request (and count it against the budget)."""
        with self._lock:
            self._inflight += 1
            if self._remaining is None or self._limit is None or self._reset is None:
                self._blind += 1
                return 0.0
            now = time.time()
            if now >= self._reset:  # a new window, its end estimated until it answers
                self._roll(now + self._span)
                self._estimated = True
            window = self._reset - now
            remaining = self._remaining
            if remaining <= 0:  # spent: go out in a later window, and count there
                later, slot = divmod(self._queued, max(1, int(self._limit * (1 - self.reserve))))
                self._queued += 1
                return window + later * self._span + slot * 1e-3
            self._remaining = remaining - 1
            if remaining > self.reserve * self._limit:
                return 0.0
            return window / remaining


def expire_after(ep: Endpoint, values: Mapping[str, Any], now: dt.datetime | None = None) -> int:
    """Cache lifetime (seconds, or -1 for never) of one request, from the endpoint's class."""
    now = now or dt.datetime.now(TAIPEI)
    fixed = FRESHNESS[ep.freshness]
    if fixed is not None:
        return fixed
    if ep.freshness == "historical":
        end = values.get(ep.date_range[1]) if ep.date_range else None
        minute = values.get("timeframe") in MINUTE_TIMEFRAMES
        if end is not None and not minute and end < now.date():
            return NEVER_EXPIRE  # a range of past days never changes
        return 60
    # reference data: until the next trading day's 08:00 in Taipei
    nxt = _next_trading_8am(now)
    return max(1, int((nxt - now).total_seconds()))


def _next_trading_8am(now: dt.datetime) -> dt.datetime:
    """08:00 (Taipei) of the first trading day whose 08:00 is after ``now``: across weekends
    and holidays by :mod:`marketframe.calendar`; outside its coverage, the next day's 08:00."""
    from marketframe import calendar  # pandas: only when reference data is cached
    from marketframe.exceptions import InvalidParams

    now = now.astimezone(TAIPEI)
    try:
        opens = calendar.next_open(now)
        nxt = dt.datetime.combine(opens.date(), dt.time(8), TAIPEI)
        if nxt <= now:  # 08:00-09:00 of a trading day: that day's 08:00 has passed
            nxt = dt.datetime.combine(calendar.next_open(opens).date(), dt.time(8), TAIPEI)
        return nxt
    except InvalidParams:
        nxt = (now + dt.timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
        return nxt - dt.timedelta(days=1) if now.hour < 8 else nxt


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


class Transport:
    """One client's HTTP side: a pooled (optionally cached) session, retries within a total
    ``deadline`` per call, and pacing. Options arrive already checked (``_options``) from
    :class:`~marketframe.Client`, whose signature holds the only defaults."""

    def __init__(
        self,
        base_url: str,
        credential: Credential,
        *,
        cache: bool | Path,
        timeout: float | tuple[float, float],
        retries: int,
        backoff: float,
        max_retry_after: float,
        deadline: float,
        pool_size: int,
        pace: bool,
    ):
        self.base_url = base_url.rstrip("/")
        self.credential = credential
        self._key = credential.secret  # redacted from every message
        self.timeout = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.deadline = deadline
        self.stats = Stats()
        self.pacer = Pacer() if pace else None
        self.session, self.cache_path = cached_session(cache)
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=pool_size, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        header, value = credential.header
        self.session.headers[header] = value
        self.session.headers["Accept"] = "application/json"

    def close(self) -> None:
        self.session.close()

    def get(
        self,
        ep: Endpoint,
        path: str,
        query: Mapping[str, str],
        values: Mapping[str, Any],
        *,
        refresh: bool = False,
    ) -> Response:
        """GET ``path`` with retries; raises the mapped :class:`APIError` on a final error.

        The whole call, retries and their waits included, ends within ``deadline`` seconds of
        its first attempt: each attempt's timeouts are cut to the time left, the body is read
        within it (``_body``), and a wait that would end past it is not started."""
        url = self.base_url + path
        shown = redact(
            url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""), self._key
        )  # for logs and errors
        kwargs: dict[str, Any] = {"params": dict(query)}
        if hasattr(self.session, "cache"):
            kwargs["expire_after"] = expire_after(ep, values)
            if refresh:
                kwargs["force_refresh"] = True
        start = time.perf_counter()
        if "expire_after" in kwargs and not refresh:
            # a stored answer costs no request: serve it before the pacer counts one
            hit = self._send(ep, values, url, kwargs, only_if_cached=True)
            if hit.status_code == 200 and getattr(hit, "from_cache", False):
                self.stats.add(cache_hits=1)
                log.debug("GET %s -> 200 (cache)", shown)
                return Response(
                    shown,
                    200,
                    True,
                    time.perf_counter() - start,
                    0,
                    _rate_headers(hit.headers),
                    hit.content,
                )
        tried: list[str] = []
        ends: float | None = None  # monotonic end of the deadline, from the first attempt
        attempt = 0
        while True:
            if self.pacer is not None:
                wait = self.pacer.delay()
                if wait > 0:
                    if ends is not None and time.monotonic() + wait > ends:
                        self.pacer.abandon()
                        raise self._late(ep, values, shown, tried, f"pacing {wait:.1f} s")
                    self.stats.add(paced_seconds=wait)
                    log.debug("pacing %.3f s before %s", wait, shown)
                    time.sleep(wait)
            now = time.monotonic()
            ends = ends if ends is not None else now + self.deadline
            left = ends - now
            if left <= 0:
                if self.pacer is not None:
                    self.pacer.abandon()
                raise self._late(ep, values, shown, tried, "")
            timeout = (min(self.timeout[0], left), min(self.timeout[1], left))
            try:
                resp = self._send(
                    ep,
                    values,
                    url,
                    {**kwargs, "timeout": timeout, "hooks": {"response": read_within(ends)}},
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                self.stats.add(requests=1)
                tried.append(type(exc).__name__)
                if self.pacer is not None:
                    self.pacer.abandon()
                if attempt >= self.retries:
                    raise TransportError(
                        f"no answer to GET {shown}: {_tally(tried)}",
                        endpoint=ep.name,
                        params=_shown_params(values, self._key),
                    ) from None
                wait = self._backoff(attempt + 1)
                if time.monotonic() + wait >= ends:
                    raise self._late(ep, values, shown, tried, "") from None
                attempt += 1
                self.stats.add(retries=1)
                self._sleep(wait, shown, f"{type(exc).__name__}")
                continue
            cached = bool(getattr(resp, "from_cache", False))
            if cached:
                self.stats.add(cache_hits=1)
                if self.pacer is not None:
                    self.pacer.abandon()  # counted, but the service never saw it
            else:
                self.stats.add(requests=1, status=resp.status_code)
                if self.pacer is not None:
                    self.pacer.update(resp.headers)
            log.debug("GET %s -> %s%s", shown, resp.status_code, " (cache)" if cached else "")
            if resp.status_code == 200:
                return Response(
                    shown,
                    200,
                    cached,
                    time.perf_counter() - start,
                    attempt,
                    _rate_headers(resp.headers),
                    resp.content,
                )
            tried.append(f"HTTP {resp.status_code}")
            # the service sends Retry-After on every answer (the rate window's length, 60 s):
            # it is an instruction only on a 429; other statuses back off as configured
            retry_after = _retry_after(resp.headers) if resp.status_code == 429 else None
            if resp.status_code in RETRY_STATUSES and attempt < self.retries:
                wait = retry_after if retry_after is not None else self._backoff(attempt + 1)
                # a wait past the deadline is not started: the service's answer is the error
                if wait <= self.max_retry_after and time.monotonic() + wait < ends:
                    attempt += 1
                    self.stats.add(retries=1)
                    self._sleep(wait, shown, f"HTTP {resp.status_code}")
                    continue
            raise self._error(ep, resp, values, retry_after)

    def _send(
        self,
        ep: Endpoint,
        values: Mapping[str, Any],
        url: str,
        kwargs: dict[str, Any],
        **extra: Any,
    ) -> requests.Response:
        """``session.get``; a library error other than a connection failure or timeout (which
        the caller retries) becomes a :class:`TransportError` with the key redacted."""
        try:
            return self.session.get(url, **kwargs, **extra)
        except (requests.ConnectionError, requests.Timeout):
            raise
        except (requests.RequestException, ValueError) as exc:
            raise TransportError(
                redact(f"{type(exc).__name__}: {exc}", self._key),
                endpoint=ep.name,
                params=_shown_params(values, self._key),
            ) from None

    def _late(
        self, ep: Endpoint, values: Mapping[str, Any], shown: str, tried: list[str], pending: str
    ) -> DeadlineExceeded:
        what = _tally(tried) if tried else "no attempt"
        more = f", then {pending} would pass it" if pending else ""
        return DeadlineExceeded(
            f"GET {shown} got no answer within the {self.deadline:g} s deadline: {what}{more}",
            endpoint=ep.name,
            params=_shown_params(values, self._key),
        )

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter, at most ``BACKOFF_MAX`` seconds."""
        return min(BACKOFF_MAX, self.backoff * 2.0 ** (attempt - 1)) * (0.5 + random.random())

    @staticmethod
    def _sleep(seconds: float, shown: str, why: str) -> None:
        log.debug("retrying %s after %s in %.3f s", shown, why, seconds)
        time.sleep(seconds)

    def _error(
        self,
        ep: Endpoint,
        resp: requests.Response,
        values: Mapping[str, Any],
        retry_after: float | None,
    ) -> APIError:
        try:
            body = orjson.loads(resp.content)
            message = str(body.get("message") or resp.reason)
        except (orjson.JSONDecodeError, AttributeError):
            message = (resp.text or resp.reason or "")[:200]
        cls = error_for_status(resp.status_code)
        return cls(
            redact(message, self._key),
            status=resp.status_code,
            endpoint=ep.name,
            params=_shown_params(values, self._key),
            retry_after=retry_after,
            plan=ep.plan,
        )


def _tally(tried: list[str]) -> str:
    """``3 attempts (ReadTimeout x2, HTTP 503)``."""
    counts: dict[str, int] = {}
    for t in tried:
        counts[t] = counts.get(t, 0) + 1
    parts = [f"{k} x{n}" if n > 1 else k for k, n in counts.items()]
    return f"{len(tried)} attempt{'s' if len(tried) != 1 else ''} ({', '.join(parts)})"


def _shown_params(values: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Parameters as an error shows them: dates as ISO strings, the key redacted (a user may
    pass it as a parameter by mistake)."""
    shown = {k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in values.items()}
    return {k: redact(v, key) if isinstance(v, str) else v for k, v in shown.items()}


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _rate_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        k: headers[k]
        for k in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
        if k in headers
    }
