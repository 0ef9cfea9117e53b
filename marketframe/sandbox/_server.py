"""The sandbox's HTTP server (aiohttp): credentials and plans, rate limits, latency and faults.

aiohttp gives keep-alive HTTP/1.1 and WebSocket on the same port; the REST bodies come from
the handlers of the route table (``_routes.ROUTES``), each called with the ``_service.Service``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import orjson
from aiohttp import web

from ._auth import rest_plan
from ._limits import rest_pool
from ._query import Json, Query, ServiceError
from ._service import PLANS, Route, Service
from ._streaming import Streaming

log = logging.getLogger("marketframe.sandbox")

PREFIX = "/marketdata/v1.0"
#: the streaming endpoints: (product, version)
STREAMING = (("stock", "v1.0"), ("futopt", "v1.0"), ("futopt", "v1.1"))

MESSAGES = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "Resource Not Found",
    429: "Rate limit exceeded",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


EXPOSE_HEADERS = (
    "content-length,fr-aa,Retry-After,X-RateLimit-Limit,X-RateLimit-Remaining,X-RateLimit-Reset"
)


@dataclass
class Settings:
    """What can be changed while the sandbox runs (``Sandbox.configure``)."""

    rate_limit: int | None = 600  # requests per key per window; None: unlimited
    rate_window: float = 60.0  # seconds of a rate-limit window (the real service: 60)
    latency: float = 0.0  # seconds added to every response
    fault_rate: float = 0.0  # share of requests answered with a 5xx
    reset_rate: float = 0.0  # share of requests whose connection is dropped unanswered
    fault_seed: int = 0
    http_connections: int | None = 512  # open connections at once; None: no cap


class SandboxOptionError(ValueError):
    """A sandbox option outside its range, refused before the server starts (or, through
    ``Sandbox.configure``, before the running server takes it). ``name`` is the option,
    ``allowed`` its range in words."""

    def __init__(self, name: str, value: Any, allowed: str) -> None:
        self.name, self.value, self.allowed = name, value, allowed
        super().__init__(f"sandbox option {name}={value!r} is out of range; allowed: {allowed}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


#: every server option: (check, allowed in words). Numbers are finite (an infinite latency
#: or window hangs every request); 0 for rate_limit / http_connections means "no limit".
OPTION_RULES: dict[str, tuple[Any, str]] = {
    "seed": (lambda v: _is_int(v) and 0 <= v < 2**64, "an integer from 0 to 2**64-1"),
    "fault_seed": (lambda v: _is_int(v) and 0 <= v < 2**64, "an integer from 0 to 2**64-1"),
    "rate_limit": (
        lambda v: v is None or (_is_int(v) and 0 <= v <= 10**9),
        "an integer from 1 to 10**9 requests, or 0 / None: unlimited",
    ),
    "rate_window": (lambda v: _is_num(v) and 0 < v <= 86400, "seconds, > 0 and <= 86400"),
    "latency": (lambda v: _is_num(v) and 0 <= v <= 60, "seconds from 0 to 60"),
    "fault_rate": (lambda v: _is_num(v) and 0 <= v <= 1, "a share from 0 to 1"),
    "reset_rate": (lambda v: _is_num(v) and 0 <= v <= 1, "a share from 0 to 1"),
    "http_connections": (
        lambda v: v is None or (_is_int(v) and 0 <= v <= 1_000_000),
        "an integer from 1 to 1000000, or 0 / None: no cap",
    ),
    "extra_equities": (lambda v: _is_int(v) and 0 <= v <= 100_000, "an integer from 0 to 100000"),
    "idle_timeout": (lambda v: _is_num(v) and 0 < v <= 86400, "seconds, > 0 and <= 86400"),
    "port": (lambda v: _is_int(v) and 0 <= v <= 65535, "a port from 0 (any free one) to 65535"),
}


#: the streaming settings (``StreamSettings``), checked the same way
STREAM_RULES: dict[str, tuple[Any, str]] = {
    "stream_speed": (lambda v: _is_num(v) and 0 <= v <= 1e6, "0 (as fast as possible) to 1e6"),
    "stream_from": (
        lambda v: isinstance(v, str) and _hhmm(v),
        "a time of day 'HH:MM' (00:00 to 23:59)",
    ),
    "heartbeat": (lambda v: _is_num(v) and 0 < v <= 86400, "seconds, > 0 and <= 86400"),
    "drop_after": (lambda v: v is None or (_is_int(v) and v >= 1), "an integer >= 1, or None"),
    "max_connections": (
        lambda v: v is None or (_is_int(v) and v >= 1),
        "an integer >= 1, or None: no cap",
    ),
    "max_subscriptions": (
        lambda v: v is None or (_is_int(v) and v >= 1),
        "an integer >= 1, or None: no cap",
    ),
    "auth_timeout": (lambda v: _is_num(v) and 0 < v <= 86400, "seconds, > 0 and <= 86400"),
    "send_buffer": (
        lambda v: v is None or (_is_int(v) and 65536 <= v <= 1 << 40),
        "bytes from 65536 (64 KiB) up, or None: no bound",
    ),
    "garbage_every": (lambda v: v is None or (_is_int(v) and v >= 1), "an integer >= 1, or None"),
}


def _hhmm(text: str) -> bool:
    h, _, m = text.partition(":")
    return h.isdigit() and m[:2].isdigit() and int(h) < 24 and int(m[:2]) < 60


def check_stream_option(name: str, value: Any) -> Any:
    """A streaming setting checked (an unknown name is left to ``StreamSettings``)."""
    rule = STREAM_RULES.get(name)
    if rule is not None and not rule[0](value):
        raise SandboxOptionError(name, value, rule[1])
    return value


def check_option(name: str, value: Any) -> Any:
    """``value`` of server option ``name``, normalized (0 -> None where 0 means "no limit"),
    or :class:`SandboxOptionError`."""
    rule = OPTION_RULES.get(name)
    if rule is not None and not rule[0](value):
        raise SandboxOptionError(name, value, rule[1])
    if name in ("rate_limit", "http_connections") and value == 0:
        return None
    return value


@dataclass
class _Window:
    start: float
    count: int = 0


@dataclass
class Stats:
    served: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    record_paths: bool = False


def _build(route: Route, service: Service, match: dict[str, str], query: dict[str, str]) -> bytes:
    """One REST body, serialized (runs on the REST pool)."""
    return orjson.dumps(route.handler(service, match, Query(query)))


class RestApp:
    clock = staticmethod(time.time)  # the rate limiter's clock (a test can set its own)

    def __init__(self, service: Service, settings: Settings, routes: tuple[Route, ...]) -> None:
        self.service = service
        self.routes = routes
        self.settings = settings
        self.stats = Stats()
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()
        self._faults = random.Random(settings.fault_seed)
        self.pool = rest_pool()  # replaced on each start: a stopped sandbox shuts it down

    def reseed_faults(self, seed: int) -> None:
        self._faults = random.Random(seed)

    # --- rate limit --------------------------------------------------------------------------

    def _take(self, key: str) -> tuple[dict[str, str], bool]:
        limit = self.settings.rate_limit
        now = self.clock()
        with self._lock:
            w = self._windows.get(key)
            window = self.settings.rate_window
            if w is None or now >= w.start + window:
                w = self._windows[key] = _Window(now)
            w.count += 1
            count, reset_at = w.count, w.start + window
        shown = limit if limit is not None else 1_000_000_000
        allowed = limit is None or count <= limit
        # as the real capture of a 200 (samples/SOURCES.md, stock_intraday_volumes): the
        # three limit headers, Retry-After (the window's length; on a 429 the seconds left)
        # and the CORS list exposing them
        headers = {
            "Access-Control-Expose-Headers": EXPOSE_HEADERS,
            "Retry-After": str(max(1, math.ceil(window))),
            "X-RateLimit-Limit": str(shown),
            "X-RateLimit-Remaining": str(max(shown - count, 0)),
            "X-RateLimit-Reset": str(int(reset_at * 1000)),
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, math.ceil(reset_at - now)))
        return headers, allowed

    # --- responses ---------------------------------------------------------------------------

    def _json(self, body: Json | bytes, status: int, headers: dict[str, str]) -> web.Response:
        self.stats.served += 1
        self.stats.by_status[status] = self.stats.by_status.get(status, 0) + 1
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
        # the Date header is the service's clock (a frozen or advanced sandbox clock too): a
        # client learns the service's day from it, since history envelopes carry no date
        headers = {**headers, **self._clock_headers(headers)}
        return web.Response(
            body=raw,
            status=status,
            headers=headers,
            content_type="application/json",
            charset="utf-8",
        )

    def _clock_headers(self, headers: dict[str, str]) -> dict[str, str]:
        real = self.clock()
        try:
            served = self.service.now().astimezone(UTC)
        except Exception:  # noqa: BLE001 - a broken clock is the emulator's bug: a plain 500
            served = datetime.fromtimestamp(real, UTC)
        # X-RateLimit-Reset stays on the rate limiter's real clock: clients pace by it
        return {"Date": format_datetime(served, usegmt=True)}

    def _error(
        self, status: int, headers: dict[str, str], message: str | None = None
    ) -> web.Response:
        return self._json(
            {"statusCode": status, "message": message or MESSAGES[status]}, status, headers
        )

    def handler(self, route: Route) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            if self.stats.record_paths:
                self.stats.paths.append(request.path_qs)
            who, plan = rest_plan(request.headers)  # X-API-KEY, Bearer or X-SDK-TOKEN
            headers, allowed = self._take(who)
            s = self.settings
            if s.latency:
                await asyncio.sleep(s.latency)
            if s.reset_rate and self._faults.random() < s.reset_rate:
                self.stats.served += 1
                if request.transport is not None:
                    request.transport.abort()
                raise asyncio.CancelledError
            if plan is None:
                return self._error(401, headers)
            if not allowed:
                return self._error(429, headers)
            if s.fault_rate and self._faults.random() < s.fault_rate:
                return self._error(self._faults.choice((500, 502, 503)), headers)
            if not route.allows(plan, who.split(":", 1)[0]) and not route.on_trial(
                plan, lambda: self.service.now().date()
            ):
                above = " or ".join(PLANS[PLANS.index(route.plan) :])
                return self._error(
                    403,
                    headers,
                    f"Forbidden: the {plan} plan does not include "
                    f"this endpoint ({above} plan required)",
                )
            # built off the event loop: a heavy body delays only its own request
            loop = asyncio.get_running_loop()
            try:
                body = await loop.run_in_executor(
                    self.pool,
                    _build,
                    route,
                    self.service,
                    dict(request.match_info),
                    dict(request.query),
                )
            except ServiceError as e:
                return self._error(e.status, headers, e.message)
            except Exception:  # noqa: BLE001 - a bug in the emulator: say so in JSON, log it
                log.exception("sandbox: %s failed", request.path)
                return self._error(500, headers)
            return self._json(body, 200, headers)

        return handle

    def build(self, streaming: Streaming | None = None) -> web.Application:
        app = web.Application()
        if streaming is not None:
            # stocks stream on v1.0 only; futures/options on v1.0 and v1.1 (any other version
            # or product is the catch-all 404, before the WebSocket upgrade)
            for market, version in STREAMING:
                app.router.add_get(
                    f"/marketdata/{version}/{market}/streaming", streaming.handler(market, version)
                )
        for route in self.routes:
            app.router.add_get(PREFIX + route.path, self.handler(route), allow_head=False)

        async def not_found(request: web.Request) -> web.Response:
            headers, _ = self._take(rest_plan(request.headers)[0])
            return self._error(404, headers)

        app.router.add_route("*", "/{tail:.*}", not_found)
        return app
