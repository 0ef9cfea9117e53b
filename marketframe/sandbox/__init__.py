"""A faithful local emulator of the market data service, over a deterministic synthetic market.

Start it from Python::

    from marketframe.sandbox import Sandbox
    with Sandbox(seed=0, now="2026-11-20T14:00:00+08:00") as sb:
        sb.base_url   # http://127.0.0.1:PORT/marketdata/v1.0  (REST)
        sb.ws_url     # ws://127.0.0.1:PORT/marketdata/v1.0/stock/streaming
        sb.futopt_ws_url("v1.1")  # ws://127.0.0.1:PORT/marketdata/v1.1/futopt/streaming
        sb.keys       # {"basic": "sandbox-basic", "developer": ..., "advanced": ...}

or from a shell: ``marketframe sandbox --port 8000``. See docs/sandbox.md.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import threading
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web

from . import _calendar as cal
from ._auth import DEMO_CREDENTIALS, DEMO_KEYS
from ._limits import Runner, quiet_accept_errors, rest_pool
from ._market import Market
from ._query import Query, ServiceError
from ._routes import ROUTES, with_aliases
from ._server import (
    PREFIX,
    RestApp,
    SandboxOptionError,
    Settings,
    Stats,
    check_option,
    check_stream_option,
)
from ._service import Route, Service
from ._stream_replay import StreamSettings
from ._streaming import Streaming

__all__ = [
    "DEMO_CREDENTIALS",
    "DEMO_KEYS",
    "Query",
    "Route",
    "Sandbox",
    "SandboxOptionError",
    "Service",
    "ServiceError",
    "iso_time",
]

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _restore_ctrl_c() -> None:
    """Make Ctrl-C interrupt a blocked main thread again.

    Importing polars (the package's frames do) replaces the process's C-level SIGINT handler
    with one after which blocking waits such as ``threading.Event().wait()`` resume instead
    of raising ``KeyboardInterrupt``; Python still reports its own default handler. When that
    default is what Python believes is installed, install it again so that belief is true.
    """
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _parse_now(now: str | datetime | None) -> datetime | None:
    if now is None:
        return None
    if isinstance(now, str):
        now = datetime.fromisoformat(now)
    if now.tzinfo is None:
        now = now.replace(tzinfo=cal.TAIPEI)
    return now


def iso_time(text: str) -> str:
    """argparse type of ``--now``: an ISO time, refused as a usage error otherwise."""
    try:
        _parse_now(text)
    except ValueError:
        example = datetime(2026, 11, 20, 10, 30).isoformat() + "+08:00"
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO time; write e.g. {example} or 2026-11-20"
        ) from None
    return text


class Sandbox:
    """A running sandbox server on 127.0.0.1 (a context manager).

    Parameters
    ----------
    seed:
        The synthetic market's seed: the same seed, symbol and date always give the same data.
    now:
        A frozen "now" (ISO string or datetime; naive means Asia/Taipei). ``None`` follows the
        wall clock. Change it later with :meth:`set_now` or :meth:`advance`.
    rate_limit, rate_window:
        Requests per key per window of ``rate_window`` seconds (60, as the real service;
        ``rate_limit=None`` or ``0``: unlimited, headers still sent).
    latency:
        Seconds added to every response.
    fault_rate, reset_rate:
        Shares of requests answered with a 5xx, or whose connection is dropped unanswered.
    extra_equities:
        Generic synthetic equities (symbols 9001, 9002, ...) added to the universe for bulk jobs.
    http_connections:
        Connections open at once (REST and WebSocket); further ones are closed on accept.
        ``None`` or ``0``: no cap.

    Every option is checked before anything starts: one outside its range (a negative seed
    or rate, a share above 1, an infinite latency, ...) raises :class:`SandboxOptionError`
    (a ``ValueError``) naming the allowed range.
    idle_timeout:
        Seconds a connection may go without sending a complete request (silent, trickling
        headers, or idle between requests) before the server closes it.
    extra_routes:
        More :class:`Route` rows to serve (a new endpoint's handler while it is written, or a
        test's synthetic endpoint); see docs/contributing.md.
    **stream:
        Streaming settings: ``stream_speed`` (0: as fast as possible; 1: real time),
        ``stream_from`` ("08:30"), ``heartbeat`` (30 s), ``drop_after`` (close each connection
        after N data events), ``max_connections``, ``max_subscriptions`` (per connection,
        200 by default; a subscribe past it gets an ``error`` event and the connection stays),
        ``auth_timeout``, ``garbage_every`` (send a malformed frame after every N data events),
        ``send_buffer`` (bytes that may wait for one client on a market clock before it gets
        an ``error`` event and is dropped; 1 MiB by default, None: no bound).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        now: str | datetime | None = None,
        rate_limit: int | None = 600,
        rate_window: float = 60.0,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        reset_rate: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        extra_equities: int = 0,
        http_connections: int | None = 512,
        idle_timeout: float = 60.0,
        extra_routes: tuple[Route, ...] = (),
        **stream: Any,
    ) -> None:
        checked = {
            k: check_option(k, v)
            for k, v in {
                "seed": seed,
                "rate_limit": rate_limit,
                "rate_window": rate_window,
                "latency": latency,
                "fault_rate": fault_rate,
                "reset_rate": reset_rate,
                "port": port,
                "extra_equities": extra_equities,
                "http_connections": http_connections,
                "idle_timeout": idle_timeout,
            }.items()
        }
        rate_limit, http_connections = checked["rate_limit"], checked["http_connections"]
        stream = {k: check_stream_option(k, v) for k, v in stream.items()}
        self.seed = seed
        self.host = host
        self.port = port
        self._now = _parse_now(now)
        self.market = Market(seed, extra_equities=extra_equities)
        self.settings = Settings(
            rate_limit, rate_window, latency, fault_rate, reset_rate, seed, http_connections
        )
        self.idle_timeout = idle_timeout
        self.service = Service(self.market, self.now)
        self.rest = RestApp(self.service, self.settings, (*ROUTES, *with_aliases(extra_routes)))
        self.stream_settings = StreamSettings(**stream)
        self.streaming = Streaming(self.service, self.stream_settings)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: Any = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # --- the clock ---------------------------------------------------------------------------

    def now(self) -> datetime:
        return self._now if self._now is not None else datetime.now(cal.TAIPEI)

    def set_now(self, now: str | datetime | None) -> None:
        """Freeze the clock at ``now`` (``None``: follow the wall clock)."""
        self._now = _parse_now(now)

    def advance(self, *, days: int = 0, trading_days: int = 0, **delta: float) -> datetime:
        """Move the frozen clock on, by calendar days or trading days (same time of day)."""
        now = self.now()
        now = now + timedelta(days=days, **delta)
        for _ in range(trading_days):
            d = cal.next_trading_day(now.date())
            now = now.replace(year=d.year, month=d.month, day=d.day)
        self._now = now
        return now

    # --- settings ----------------------------------------------------------------------------

    def configure(self, **changes: Any) -> None:
        """Change REST settings (``rate_limit``, ``latency``, ``fault_rate``, ``reset_rate``,
        ``fault_seed``, ``http_connections``) or streaming settings (``stream_speed``,
        ``stream_from``, ``heartbeat``, ``drop_after``, ``max_connections``, ``auth_timeout``,
        ``garbage_every``) while running. Changing the stream speed or start restarts the shared
        replay clock."""
        changes = {
            k: check_stream_option(k, v)
            if k in StreamSettings.__dataclass_fields__
            else check_option(k, v)
            for k, v in changes.items()
        }
        for k, v in changes.items():
            for target in (self.settings, self.stream_settings):
                if hasattr(target, k):
                    setattr(target, k, v)
                    break
            else:
                allowed = ", ".join(
                    [
                        *self.settings.__dataclass_fields__,
                        *self.stream_settings.__dataclass_fields__,
                    ]
                )
                raise TypeError(f"unknown sandbox setting {k!r}; allowed: {allowed}")
        if "fault_seed" in changes:
            self.rest.reseed_faults(changes["fault_seed"])
        if {"stream_speed", "stream_from"} & set(changes):
            self.streaming.restart()

    @property
    def requests_served(self) -> int:
        """Responses sent so far (every status, faults included)."""
        return self.rest.stats.served

    @property
    def connections(self) -> int:
        """HTTP and WebSocket connections open now (refused ones do not count)."""
        server = self._runner.server if self._runner is not None else None
        return 0 if server is None else len(server.connections)

    @property
    def stats(self) -> Stats:
        return self.rest.stats

    # --- addresses ---------------------------------------------------------------------------

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.origin + PREFIX

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}{PREFIX}/stock/streaming"

    def futopt_ws_url(self, version: str = "v1.1") -> str:
        """The futures/options streaming URL (``v1.0`` or ``v1.1``)."""
        return f"ws://{self.host}:{self.port}/marketdata/{version}/futopt/streaming"

    @property
    def keys(self) -> dict[str, str]:
        return dict(DEMO_KEYS)

    @property
    def credentials(self) -> dict[str, dict[str, str]]:
        """Every plan's credential of each kind: ``credentials[kind][plan]``, the kinds named
        as ``Client``'s arguments (``api_key``, ``bearer_token``, ``sdk_token``)."""
        return {kind: dict(values) for kind, values in DEMO_CREDENTIALS.items()}

    @property
    def api_key(self) -> str:
        """The advanced plan's key (every endpoint allowed)."""
        return DEMO_KEYS["advanced"]

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Sandbox:
        if self._thread is not None:
            return self
        _restore_ctrl_c()
        self.rest.pool = rest_pool()
        self._thread = threading.Thread(target=self._serve, name="marketframe-sandbox", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise RuntimeError(f"the sandbox could not start: {self._error}") from self._error
        return self

    def _serve(self) -> None:
        # Ctrl-C belongs to the thread that started the sandbox: with SIGINT/SIGTERM blocked
        # here (and in the executor threads this loop starts, which inherit the mask), the
        # kernel delivers them to the main thread, whose wait they then interrupt.
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def up() -> None:
            quiet_accept_errors(loop)
            app = self.rest.build(self.streaming)
            self._runner = Runner(
                app,
                lambda: self.settings.http_connections,
                access_log=None,
                handle_signals=False,
                keepalive_timeout=self.idle_timeout,
            )
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
            await site.start()
            server = site._server
            assert server is not None
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

        try:
            loop.run_until_complete(up())
        except BaseException as e:  # noqa: BLE001 - reported to the starting thread
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()
        self.rest.pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Sandbox(base_url={self.base_url!r}, seed={self.seed}, now={self.now()!s})"
