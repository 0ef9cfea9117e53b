"""The sandbox's WebSocket send path: what a connection has queued goes out, and a client
that does not read is bounded.

Replayed as fast as possible (``stream_speed=0``), the replay waits for its reader; on a
market clock nothing waits, and a client that lets more than ``send_buffer`` bytes wait for it
gets an ``error`` event and a close frame behind what its socket already holds; what is queued
here is discarded at once, so its memory comes back."""

from __future__ import annotations

import asyncio

import orjson

from ._stream_conn import _Conn
from ._stream_replay import StreamSettings

#: seconds a dropped client has to read the error event before its socket is cut
DROP_GRACE = 30.0
#: the close code after that error (1008: policy violation; the service's is unknown)
SLOW_CONSUMER_CLOSE = 1008


def _cut(transport: asyncio.BaseTransport) -> None:
    """Abort a dropped client's socket that still holds what it never read (one that read
    it has closed already: its buffer emptied, and a closed transport cannot abort)."""
    assert isinstance(transport, asyncio.WriteTransport)
    if transport.get_write_buffer_size():
        transport.abort()


async def flush(conn: _Conn, settings: StreamSettings) -> bool:
    """Send what is queued for ``conn``; True when the client was dropped for not reading."""
    if settings.stream_speed == 0:
        await conn.frames.flush()
        return False
    await conn.frames.flush(wait=False)
    bound = settings.send_buffer
    if bound is None or conn.frames.backlog <= bound:
        return False
    _drop(conn, bound)
    return True


def _drop(conn: _Conn, bound: int) -> None:
    """An ``error`` event and a close frame, then the socket closes once the client has
    read them, or after ``DROP_GRACE`` seconds if it never does."""
    message = (
        f"Slow consumer: {conn.frames.backlog} bytes waiting to be read, more than the send "
        f"buffer of {bound} bytes; the connection is closed"
    )
    transport = conn.frames.request.transport
    conn.frames.write_now(
        orjson.dumps({"event": "error", "data": {"message": message}}),
        close=(SLOW_CONSUMER_CLOSE, b"send buffer full"),
    )
    assert transport is not None  # write_now refuses a closed one
    transport.close()
    asyncio.get_running_loop().call_later(DROP_GRACE, _cut, transport)
