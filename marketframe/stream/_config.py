"""The options of a stream, in one checked dataclass (docs/streaming.md lists them)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from marketframe.convert import check_backend
from marketframe.exceptions import InvalidParams


@dataclass(frozen=True)
class StreamOptions:
    """How a stream connects, heals and buffers.

    ``connect_timeout`` / ``reply_timeout``: seconds for the handshake and for each reply;
    ``reconnect``, ``max_reconnects``, ``backoff`` (doubling, with jitter) and ``max_backoff``
    govern reconnects; ``heartbeat_timeout``: seconds of silence before a ping (no pong:
    reconnect); ``max_buffer`` rows wait at most (then the reader pauses, nothing is dropped);
    ``batch_rows``: rows per batch at most; ``backend`` of :meth:`read` and ``frames``.
    """

    connect_timeout: float = 10.0
    reply_timeout: float = 30.0  # the embedded sandbox builds a day of events before replying
    reconnect: bool = True
    max_reconnects: int = 10
    backoff: float = 0.5
    max_backoff: float = 30.0
    heartbeat_timeout: float = 75.0
    max_buffer: int = 200_000
    batch_rows: int = 20_000
    backend: str = "pandas"

    def __post_init__(self) -> None:
        if self.max_buffer < 1 or self.batch_rows < 1:
            raise InvalidParams("stream", "max_buffer", "must be at least 1")
        check_backend("stream", self.backend)

    @classmethod
    def of(cls, base: StreamOptions | None = None, **overrides: Any) -> StreamOptions:
        """``base`` (default: the defaults) with ``overrides``; an unknown name raises
        :class:`InvalidParams` naming the options there are."""
        names = [f.name for f in fields(cls)]
        for key in overrides:
            if key not in names:
                raise InvalidParams("stream", key, "is not a stream option", ", ".join(names))
        return replace(base or cls(), **overrides)
