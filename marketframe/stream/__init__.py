"""Streaming: the WebSocket channels as Arrow batches and frames (docs/streaming.md).

``client.stream()`` gives a blocking :class:`Stream` (scripts, notebooks);
``client.stream(async_=True)`` an :class:`AsyncStream`; ``client.stream(market="futopt")``
streams futures and options (v1.1 by default, ``version="v1.0"``).
"""

from __future__ import annotations

from marketframe.stream._blocking import Stream

from ._client import AsyncStream
from ._config import StreamOptions
from ._frames import CHANNELS, FUTOPT_CHANNELS, FUTOPT_STREAM_SCHEMAS, STREAM_SCHEMAS, Batch
from ._ledger import Gap
from ._live import LiveIndicators
from ._protocol import Subscription, ws_url
from ._recorder import Recorder, read_recorded
from ._stats import StreamStats

__all__ = [
    "CHANNELS",
    "FUTOPT_CHANNELS",
    "FUTOPT_STREAM_SCHEMAS",
    "STREAM_SCHEMAS",
    "AsyncStream",
    "Batch",
    "Gap",
    "LiveIndicators",
    "Recorder",
    "Stream",
    "StreamOptions",
    "StreamStats",
    "Subscription",
    "read_recorded",
    "ws_url",
]
