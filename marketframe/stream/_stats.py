"""A stream's counters (``stream.stats``), kept by the parts that see each event."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class StreamStats:
    messages: int = 0  # data messages received
    heartbeats: int = 0
    reconnects: int = 0
    duplicates: int = 0  # trades dropped because their serial was already seen
    backfilled: int = 0  # trades added from REST
    paused: int = 0  # times the reader waited for the consumer (buffer full)
    malformed: int = 0  # frames skipped because they could not be read (see .malformed)
    quarantined: int = 0  # rows set aside because they could not be converted

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
