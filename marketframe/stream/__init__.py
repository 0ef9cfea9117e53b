"""Streaming: the WebSocket channels as Arrow batches and frames (docs/streaming.md).

``client.stream()`` gives a blocking :class:`Stream` (scripts, notebooks);
``client.stream(async_=True)`` an :class:`AsyncStream`.
"""

from __future__ import annotations

from ._client import AsyncStream, StreamStats
from ._frames import CHANNELS, STREAM_SCHEMAS, Batch
from ._ledger import Gap
from ._options import StreamOptions
from ._protocol import Subscription, ws_url
from ._recorder import Recorder, read_recorded
from ._sync import Stream

__all__ = ["CHANNELS", "STREAM_SCHEMAS", "AsyncStream", "Batch", "Gap", "Recorder", "Stream",
           "StreamOptions", "StreamStats", "Subscription", "read_recorded", "ws_url"]
