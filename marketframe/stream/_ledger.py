"""The bookkeeping of "no lost trades": last serials, duplicates and gaps after reconnects.

Serials increase per symbol but are not consecutive, and regular trades and trial matches are
two sequences (a closing trial match may carry a higher serial than the closing trade), so
the ledger keeps the last serial per (symbol, odd lot, trial). A trade at or below it is a
duplicate (a server replaying from the start after a reconnect). At a drop every (symbol,
kind) of a ``trades`` subscription opens a :class:`Gap` after its last serial; the first new
trade of that kind closes it, and the gap is handed to the backfill.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._protocol import Subscription

Key = tuple[str, bool, bool]  # (symbol, odd lot, trial)


@dataclass
class Gap:
    """Trades of ``symbol`` possibly missed during a reconnect: serials strictly between
    ``after`` (``None``: none of this kind seen before the drop, so from the day's start) and
    ``before`` (``None``: none seen since). Regular trades and trial matches (``trial``) are
    two serial sequences. ``filled`` counts the trades backfilled from REST (``None``: not
    backfilled); ``error`` says why a backfill failed."""

    symbol: str
    odd_lot: bool
    trial: bool
    after: int | None
    before: int | None
    filled: int | None = None
    error: str | None = None


class TradeLedger:
    def __init__(self) -> None:
        self.last: dict[Key, int] = {}
        self.open: dict[Key, Gap] = {}
        self.gaps: list[Gap] = []  # closed gaps, in the order they closed

    def accept(self, row: dict[str, Any], odd: bool) -> tuple[bool, Gap | None]:
        """(keep the trade?, the gap it closes or None)."""
        serial = row.get("serial")
        if type(serial) is not int:
            return True, None
        key: Key = (str(row.get("symbol")), odd, row.get("isTrial") is True)
        last = self.last.get(key)
        if last is not None and serial <= last:
            return False, None
        self.last[key] = serial
        gap = self.open.pop(key, None)
        if gap is not None:
            gap.before = serial
            self.gaps.append(gap)
        return True, gap

    def dropped(self, subs: Iterable[Subscription]) -> None:
        """The connection dropped: open a gap per (symbol, kind) of each trades subscription
        (a gap still open from an earlier drop stays as it is)."""
        for sub in subs:
            if sub.channel != "trades":
                continue
            for trial in (False, True):
                key = (sub.symbol, sub.odd_lot, trial)
                if key not in self.open:
                    self.open[key] = Gap(sub.symbol, sub.odd_lot, trial, self.last.get(key),
                                         None)

    def close_open(self) -> list[Gap]:
        """End of stream: the gaps no trade closed become gaps up to now."""
        gaps = list(self.open.values())
        self.open.clear()
        self.gaps += gaps
        return gaps

    def filled(self, gap: Gap, rows: list[dict[str, Any]]) -> None:
        """``rows`` (sorted by serial) were fetched for ``gap``."""
        gap.filled = len(rows)
        if gap.before is None and rows:
            # filled up to now: later streamed trades at or below it are duplicates
            key = (gap.symbol, gap.odd_lot, gap.trial)
            self.last[key] = max(self.last.get(key, -1), rows[-1]["serial"])
