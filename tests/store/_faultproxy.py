"""A loopback TCP fault proxy: put it between a client and a server to break the network on
purpose (the store's tests put it between s3fs and SeaweedFS: ``endpoint_url`` is the proxy).

Modes, switchable at run time (``proxy.mode = "reset"``, or :meth:`FaultProxy.fault` for a
bounded spell):

``pass``        bytes go both ways untouched
``reset``       every connection is reset (RST): new ones on accept, open ones on their next
                bytes either way; with ``match``, only a request containing those bytes (its
                connection is reset before the request reaches the server)
``blackhole``   connections are accepted and bytes read, but nothing is forwarded either way
                (a silent endpoint: the client waits for its read timeout)
``delay``       each chunk is forwarded after ``delay`` seconds
``drop-reply``  the next request (whose bytes contain ``match``, if set) is forwarded, its
                response swallowed, and the connection closed: the server did the work, the
                client never hears of it. One reply is dropped, then the mode is back to pass.

``then``: with ``match``, the mode to switch to once the matched request was reset (or its
reply dropped), e.g. ``then="reset"``: the network goes down right after that request.

Counters say what happened: ``connections``, ``resets``, ``dropped_replies``, ``blackholed``.
Threads, not asyncio: the proxy must keep running while the code under test blocks.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
import time
from collections.abc import Iterator

MODES = ("pass", "reset", "blackhole", "delay", "drop-reply")


def _rst(sock: socket.socket) -> None:
    """Close ``sock`` with a TCP reset (SO_LINGER 0), not a FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class _Conn:
    def __init__(self, client: socket.socket, upstream: socket.socket):
        self.client, self.upstream = client, upstream
        self.doomed = False  # its current request's reply is to be dropped
        self.then: str | None = None  # the mode once that reply is dropped
        self.closed = False


class FaultProxy:
    """``FaultProxy(target_host, target_port)``; ``.url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self, host: str, port: int, *, delay: float = 1.0):
        self.target = (host, port)
        self.mode = "pass"
        self.delay = delay
        self.match: bytes | None = None  # drop-reply: only a request containing these bytes
        self.then: str | None = None  # the mode once the matched request met its fault
        self.connections = self.resets = self.dropped_replies = self.blackholed = 0
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port = self._sock.getsockname()[1]
        self._stop = False
        self._thread = threading.Thread(target=self._accept, name="faultproxy", daemon=True)
        self._thread.start()

    @classmethod
    def to(cls, url: str, **kw: float) -> FaultProxy:
        """A proxy to ``http://host:port``."""
        hostport = url.split("://", 1)[1].split("/", 1)[0]
        host, port = hostport.rsplit(":", 1)
        return cls(host, int(port), **kw)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def faults(self) -> int:
        return self.resets + self.dropped_replies + self.blackholed

    def set(
        self,
        mode: str,
        *,
        match: bytes | None = None,
        delay: float | None = None,
        then: str | None = None,
    ) -> None:
        for m in (mode, then or "pass"):
            if m not in MODES:
                raise ValueError(f"mode {m!r}; allowed: {', '.join(MODES)}")
        with self._lock:
            self.match, self.then = match, then
            if delay is not None:
                self.delay = delay
            self.mode = mode
            if mode == "reset" and match is None:  # open connections too, not only new ones
                for c in list(self._conns):
                    self._kill(c, reset=True)

    @contextlib.contextmanager
    def fault(self, mode: str, **kw: object) -> Iterator[FaultProxy]:
        """``mode`` for the duration of the ``with`` block, then pass."""
        self.set(mode, **kw)  # type: ignore[arg-type]
        try:
            yield self
        finally:
            self.set("pass")

    def close(self) -> None:
        self._stop = True
        with contextlib.suppress(OSError):
            self._sock.close()
        with self._lock:
            for c in list(self._conns):
                self._kill(c, reset=True)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------

    def _kill(self, c: _Conn, *, reset: bool, count: bool = True) -> None:
        """Close both ends of ``c`` (the caller holds the lock)."""
        if c.closed:
            return
        c.closed = True
        self._conns.discard(c)
        if reset:
            self.resets += count
            _rst(c.client)
            _rst(c.upstream)
        else:
            for s in (c.client, c.upstream):
                with contextlib.suppress(OSError):
                    s.close()

    def _after_fault(self, then: str | None) -> None:
        """The matched request met its fault: on to ``then`` (the caller holds the lock)."""
        if then is None:
            return
        self.mode, self.match, self.then = then, None, None
        if then == "reset":  # open connections too
            for c in list(self._conns):
                self._kill(c, reset=True)

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                mode, match = self.mode, self.match
            if mode == "reset" and match is None:
                with self._lock:
                    self.resets += 1
                _rst(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                _rst(client)
                continue
            c = _Conn(client, upstream)
            with self._lock:
                self._conns.add(c)
            threading.Thread(target=self._pump, args=(c,), daemon=True).start()

    def _pump(self, c: _Conn) -> None:
        """Both directions of one connection on one thread (select), so a mode change is
        seen before the next chunk either way."""
        socks = [c.client, c.upstream]
        while not c.closed:
            try:
                ready, _, _ = select.select(socks, [], [], 0.1)
            except (OSError, ValueError):
                break
            for s in ready:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                with self._lock:
                    if c.closed:
                        return
                    if not data:
                        self._kill(c, reset=False)
                        return
                    mode = self.mode
                    to_server = s is c.client
                    if mode == "reset" and (
                        self.match is None or (to_server and self.match in data)
                    ):
                        self._kill(c, reset=True)
                        if self.match is not None:
                            self._after_fault(self.then)
                        return
                    if mode == "blackhole":
                        self.blackholed += 1
                        continue  # read and forgotten: the other side waits
                    if mode == "drop-reply" and to_server:
                        if self.match is None or self.match in data:
                            c.doomed, c.then = True, self.then
                            self.mode, self.match = "pass", None  # one reply only
                    if c.doomed and not to_server and data.startswith(b"HTTP/1.1 100 "):
                        pass  # "100 Continue": the client sends the body, the server acts
                    elif c.doomed and not to_server:
                        # the server answered; the client never hears of it
                        self.dropped_replies += 1
                        self._kill(c, reset=True, count=False)
                        self._after_fault(c.then)
                        return
                    delay = self.delay if mode == "delay" else 0.0
                if delay:
                    time.sleep(delay)
                try:
                    (c.upstream if to_server else c.client).sendall(data)
                except OSError:
                    with self._lock:
                        self._kill(c, reset=False)
                    return
        with self._lock:
            self._kill(c, reset=False)
