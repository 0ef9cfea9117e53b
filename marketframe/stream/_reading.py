"""``read(channel)``: one channel's batches until the stream is idle, as one frame.

Written once for :class:`~marketframe.stream.Stream` and
:class:`~marketframe.stream.AsyncStream`, whose ``read`` only differ in how they wait for the
next batch::

    c = Collector(channel, idle, timeout)
    while c.keep(next_batch(c.wait())):
        pass
    return c.frame(backend)
"""

from __future__ import annotations

import time
from typing import Any, TypedDict

import pyarrow as pa

from marketframe.convert import to_frame

from . import _protocol as proto
from ._frames import Batch, to_table


class Wait(TypedDict, total=False):
    """How long a ``read`` waits: until ``idle`` seconds pass without data (default 1), or
    ``timeout`` seconds in all (default None: no limit)."""

    idle: float
    timeout: float | None


class Collector:
    """The tables of ``channel`` read until ``idle`` seconds pass without data (or
    ``timeout`` seconds in all); batches of other channels are passed over."""

    def __init__(
        self, channel: str, idle: float, timeout: float | None, market: str = "stock"
    ) -> None:
        proto.check_channel(channel, market)
        self.channel = channel
        self.market = market
        self.idle = idle
        self.end = None if timeout is None else time.monotonic() + timeout
        self.tables: list[pa.Table] = []

    def wait(self) -> float:
        """Seconds to wait for the next batch."""
        if self.end is None:
            return self.idle
        return max(0.0, min(self.idle, self.end - time.monotonic()))

    def keep(self, batch: Batch | None) -> bool:
        """Keep ``batch`` if it is of the channel; whether to read on."""
        if batch is None:
            return False
        if batch.channel == self.channel:
            self.tables.append(batch.table)
        return self.end is None or time.monotonic() < self.end

    def frame(self, backend: str) -> Any:
        return to_frame(concat(self.channel, self.tables, self.market), backend)


def concat(channel: str, tables: list[pa.Table], market: str = "stock") -> pa.Table:
    """Tables of one channel as one (an empty, typed table when there are none)."""
    if not tables:
        return to_table(channel, [], market=market)
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
