"""Derived datasets, many members' short feeds through the kernels at once.

A feed is one member's new bars of one input file with its context in front. When a bucket
holds many symbols, a feed is short (a few days of minutes, an appended day), and the
kernels' cost is their calls, not their bars: five indicators are a few dozen calls whatever
the length. Short feeds are therefore queued (:class:`Panel`) and computed together as the
columns of one panel (bars x feeds). Each column is padded with zeros after its last bar;
every kernel is causal, so the padding never reaches a real bar. A column with missing
values (NaN) is computed by the kernels' own rules for it, as it is alone. The new rows are
then gathered into one table a year, members in the order their feeds came.

A feed of ``SOLO`` bars or more (a member's year of minutes) runs alone, through the 1-D
kernel, after the feeds queued before it: a panel is for short feeds, and holds at most
``CELLS`` values an input, so what waits is bounded whatever the bucket.

Imports run one way: the task loop (:mod:`._task`) -> the member side (:mod:`._member`) ->
this module -> :mod:`._partfile`, :mod:`._derive`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from marketframe.indicators import stateful as sf
from marketframe.store._compute._derive import outputs
from marketframe.store._compute._partfile import part_table

SOLO = 4_096  # bars of a feed (context included) from which it runs alone: its calls are
# then a small share of its cost (a few days of minutes and longer)
CELLS = 1 << 18  # bars x feeds of a panel at most


@dataclass
class Feed:
    """One member's bars of one input file for one target."""

    year: int | None  # of the input file: where its rows go
    symbol: str
    both: np.ndarray  # (inputs the kernel reads, bars): the context, then the new bars
    cut: int  # context bars in front
    date: pa.ChunkedArray[Any]  # the new bars' times


#: where a batch's rows go: (year, [(symbol, rows)], table of those rows in that order)
Emit = Callable[[int | None, list[tuple[str, int]], pa.Table], None]


class Panel:
    """The queue of one target's short feeds, computed together (see the module
    docstring); ``emit`` receives their rows, a table a year, in the order they came (given
    with each call, not kept: a panel refers to nothing that refers to it)."""

    def __init__(self, sp: sf.IndicatorSpec) -> None:
        self.sp = sp
        self.feeds: list[Feed] = []
        self.longest = 0

    def add(self, feed: Feed, emit: Emit) -> None:
        bars = feed.both.shape[1]
        if bars >= SOLO:
            self.run(emit)  # the feeds before it first: rows stay in the order they came
            self._alone(feed, emit)
            return
        longest = max(self.longest, bars)
        if self.feeds and (len(self.feeds) + 1) * longest > CELLS:
            self.run(emit)
            longest = bars
        self.feeds.append(feed)
        self.longest = longest

    def run(self, emit: Emit) -> None:
        """Compute the queued feeds and hand on their rows."""
        feeds, self.feeds, self.longest = self.feeds, [], 0
        if not feeds:
            return
        if len(feeds) == 1:  # nothing to share: the 1-D kernel, no padding
            self._alone(feeds[0], emit)
            return
        ends = np.array([f.both.shape[1] for f in feeds])
        cuts = np.array([f.cut for f in feeds])
        width = int(ends.max())
        # filled a feed a row (contiguous writes), then turned to bars x feeds for the
        # kernels in one copy: a column at a time was twice the cost
        rows = np.zeros((feeds[0].both.shape[0], len(feeds), width))
        for j, f in enumerate(feeds):
            rows[:, j, : ends[j]] = f.both
        panel = np.ascontiguousarray(rows.transpose(0, 2, 1))
        by_feed = [r.T for r in outputs(self.sp, panel)]  # (feeds, bars) views
        bars = np.arange(width)
        years = [f.year for f in feeds]
        for year in dict.fromkeys(years):
            at = [j for j, y in enumerate(years) if y == year]
            new = (bars >= cuts[at, None]) & (bars < ends[at, None])  # member, then time
            mine = slice(None) if len(at) == len(feeds) else at
            values = [r[mine][new] for r in by_feed]
            runs = [(feeds[j].symbol, int(ends[j] - cuts[j])) for j in at]
            chunks = [c for j in at for c in feeds[j].date.chunks]
            date = pa.chunked_array(chunks, feeds[0].date.type)
            emit(year, runs, part_table(self.sp, date, values))

    def _alone(self, f: Feed, emit: Emit) -> None:
        """One feed through the 1-D kernels."""
        res = outputs(self.sp, f.both)
        values = [r[f.cut :] for r in res]
        emit(f.year, [(f.symbol, f.both.shape[1] - f.cut)], part_table(self.sp, f.date, values))
