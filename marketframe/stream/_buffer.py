"""The bounded buffer between the socket reader and the consumer.

Policy (lossless back-pressure): rows wait here, grouped by (channel, odd lot), up to
``max_buffer`` rows. When the buffer is full the reader stops reading the socket
(:meth:`RowBuffer.wait_space`) until the consumer takes a batch, so the back-pressure reaches
the server through TCP and nothing is dropped. Backfilled trades are added even when full (a
backfill is bounded by one gap). The consumer takes at most ``batch_rows`` rows of the
fullest group at a time.

Two exceptions keep the pause from blocking what must not wait: while a request waits for
its reply (``urgent``) the reader goes on reading (the reply is behind the data; the buffer
may then exceed ``max_buffer`` by what arrives meanwhile), and once the stream is closing
(:meth:`RowBuffer.release`) it never pauses again, so ``close()`` can finish and flush.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

Rows = list[dict[str, Any]]


class RowBuffer:
    def __init__(self, max_buffer: int, batch_rows: int) -> None:
        self.max_buffer = max_buffer
        self.batch_rows = batch_rows
        self.size = 0
        self._rows: defaultdict[tuple[str, bool], Rows] = defaultdict(list)
        self.data = asyncio.Event()  # set when rows arrive (or the stream ends)
        self.space = asyncio.Event()  # clear while the reader waits for room
        self.space.set()
        self.urgent = 0  # requests waiting for a reply: the reader must not pause
        self.released = False

    def add(self, channel: str, odd_lot: bool, row: dict[str, Any]) -> None:
        self._rows[(channel, odd_lot)].append(row)
        self.size += 1
        self.data.set()

    def extend(self, channel: str, odd_lot: bool, rows: Rows) -> None:
        if rows:
            self._rows[(channel, odd_lot)].extend(rows)
            self.size += len(rows)
            self.data.set()

    @property
    def full(self) -> bool:
        return self.size >= self.max_buffer

    async def wait_space(self) -> None:
        """Block the reader until the consumer took enough rows (or a request waits for its
        reply, or the stream closes)."""
        while self.full and not self.urgent and not self.released:
            self.space.clear()
            await self.space.wait()

    def wake(self) -> None:
        """Let a paused reader re-check (a request now waits for its reply)."""
        self.space.set()

    def release(self) -> None:
        """The stream is closing: never pause the reader again."""
        self.released = True
        self.space.set()

    def take(self) -> tuple[str, bool, Rows] | None:
        """Up to ``batch_rows`` rows of the fullest (channel, odd lot) group, or None."""
        if not self.size:
            return None
        key = max(self._rows, key=lambda k: len(self._rows[k]))
        rows = self._rows[key]
        if len(rows) > self.batch_rows:
            taken, self._rows[key] = rows[: self.batch_rows], rows[self.batch_rows :]
        else:
            taken = rows
            del self._rows[key]
        self.size -= len(taken)
        if self.size < self.max_buffer:
            self.space.set()
        return key[0], key[1], taken
