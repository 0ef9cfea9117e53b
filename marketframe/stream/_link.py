"""What the parts of a stream share: the socket and its subscriptions, the replies a request
waits for, and where the stream is in its life (up, closing, closed, failed).

:class:`~marketframe.stream.AsyncStream` makes one :class:`Link` and hands it to each of its
parts: the reader (``_inbox``), the requests (``_requests``) and the connection
(``_connection``). A part reads the link's fields and its own, nothing else.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from marketframe.exceptions import StreamClosed

from ._protocol import Subscription

#: put in the reply queue when the connection ends
CLOSED = object()


class Link:
    """The socket, the subscriptions and the stream's state (see the module docstring)."""

    def __init__(self) -> None:
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        #: the acknowledged subscriptions by id (kept across reconnects)
        self.subs: dict[str, Subscription] = {}
        #: unsubscribed ones (their data may still be in flight)
        self.gone: dict[str, Subscription] = {}
        #: the flag of what the subscribe in flight asks: odd lot, or after hours on futopt
        self.pending_flag = False
        #: control replies the reader queues for the request waiting for them
        self.replies: asyncio.Queue[Any] = asyncio.Queue()
        self.lock = asyncio.Lock()  # one request outstanding at a time
        self.last_close: tuple[int | None, str | None] = (None, None)
        self.last_recv = time.monotonic()
        self.server_error: str | None = None  # the latest error no request asked for
        self.online = False  # connected, authenticated and resubscribed
        self.changed = asyncio.Event()  # replaced and set at each change of state
        self.error: BaseException | None = None  # what ended the stream
        self.closing = False
        self.closed = False
        self.stop = asyncio.Event()  # set by close(): every wait ends

    def signal(self) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()

    def set_online(self, online: bool) -> None:
        self.online = online
        self.signal()

    def check_alive(self) -> None:
        if self.error is not None:
            raise self.error
        if self.closed or self.closing:
            raise StreamClosed("the stream was closed by the user")

    async def wait_online(self, old: Any) -> None:
        """Until a connection other than ``old`` is up and resubscribed."""
        while True:
            self.check_alive()
            ws = self.ws
            if self.online and ws is not None and ws is not old and not ws.closed:
                return
            await self.changed.wait()
