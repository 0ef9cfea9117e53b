"""The sandbox's defences against abuse: a connection cap, quiet accept errors, a REST pool.

The sandbox listens on 127.0.0.1 only, but tests and users share one server, so one client
must not be able to take it down for the others:

- at most ``http_connections`` connections are open at once; further ones are closed as
  soon as they are accepted (one log line per burst, never a traceback);
- a connection that sends no complete request within ``idle_timeout`` seconds (none at all,
  or headers trickled in, or idle between requests) is closed: aiohttp's keep-alive timer;
- request line and header sizes are bounded by aiohttp (8 KiB a line, 128 headers), bodies
  by ``client_max_size``, so a connection's memory is bounded;
- the accept loop's own errors (``EMFILE`` and the like) are logged once per burst without a
  traceback;
- REST bodies are built on a small thread pool, off the event loop, so a heavy query delays
  only itself, not the other clients or the streaming connections.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web

log = logging.getLogger("marketframe.sandbox")

#: Worker threads that build REST bodies (the machines this runs on have few cores).
REST_WORKERS = 2


class LimitedServer(web.Server):
    """aiohttp's connection manager, refusing connections beyond ``limit()``."""

    def __init__(self, template: web.Server, limit: Any) -> None:
        super().__init__(
            template.request_handler,
            request_factory=template.request_factory,
            handler_cancellation=template.handler_cancellation,
            loop=asyncio.get_running_loop(),
            **template._kwargs,
        )  # noqa: SLF001 - the runner's handler settings
        self._limit = limit
        self.refused = 0
        self._quiet_until_below = False

    def connection_made(self, handler: Any, transport: asyncio.Transport) -> None:
        cap = self._limit()
        if cap is not None and len(self._connections) >= cap:
            self.refused += 1
            if not self._quiet_until_below:
                log.warning(
                    "sandbox: %d connections open (the cap); refusing more until some close", cap
                )
                self._quiet_until_below = True
            transport.abort()
            return
        self._quiet_until_below = False
        super().connection_made(handler, transport)


class Runner(web.AppRunner):
    """An ``AppRunner`` whose server is a :class:`LimitedServer`."""

    def __init__(self, app: web.Application, limit: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._limit = limit

    async def _make_server(self) -> web.Server:
        return LimitedServer(await super()._make_server(), self._limit)


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Log the accept loop's resource errors as one line per burst, without a traceback.

    asyncio reports every failed ``accept()`` (e.g. out of file descriptors) with a full
    traceback, once per retry; under a flood that is hundreds of megabytes of log.
    """
    state = {"repeats": 0}

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if "accept" not in message:
            loop.default_exception_handler(context)
            return
        state["repeats"] += 1
        if state["repeats"] == 1 or state["repeats"] % 1000 == 0:
            exc = context.get("exception")
            log.warning(
                "sandbox: %s (%s; %d so far)",
                message,
                type(exc).__name__ if exc else "no detail",
                state["repeats"],
            )

    loop.set_exception_handler(handler)


def rest_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(REST_WORKERS, thread_name_prefix="marketframe-sandbox-rest")
