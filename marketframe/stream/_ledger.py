"""The bookkeeping of "no lost trades": last positions, duplicates and gaps after reconnects.

Serials increase per symbol *within one session of one trading day* and are not consecutive:
they restart every day, and the after-hours fixed-price trade carries ``99999999``. So a
trade's place in its stream is its :data:`Pos` ``(trading date, session, serial)`` -- the
trading date and session (regular, or after-hours from 13:35 on) read from its ``time`` in
Asia/Taipei -- compared as a tuple, so the next day's open comes after the previous day's
fixed-price trade. Regular trades and trial matches are two sequences (a closing trial match
may carry a higher serial than the closing trade), so the ledger keeps the last position per
(symbol, odd lot, trial). A trade at or before it is a duplicate (a server replaying from the
start after a reconnect). At a drop every (symbol, kind) of a ``trades`` subscription opens a
:class:`Gap` after its last position; the first new trade of that kind closes it (one gap per
trading day when the drop spans a day change), and the gap is handed to the backfill.

A gap that no trade closes (the drop came after the kind's last trade of the day, or the
symbol is quiet) would otherwise wait for the next trading day's first trade, when the
intraday endpoint no longer serves its day. So after a reconnect the stream asks
:meth:`TradeLedger.quiet` for provisional gaps up to now and, if no trade has closed one by
the time its rows are fetched, :meth:`TradeLedger.settle` closes it with them: the last
position moves to the last fetched row, so the stream's later copies of those trades are
duplicates.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ._protocol import Subscription

Key = tuple[str, bool, bool]  # (symbol, odd lot, trial)
Pos = tuple[int, int, int]  # (trading day number, session, serial)

REGULAR, AFTER_HOURS = 0, 1
_DAY_US = 86_400_000_000
_TAIPEI_US = 8 * 3_600_000_000  # Asia/Taipei is UTC+8 all year
_AFTER_HOURS_US = (13 * 60 + 35) * 60_000_000  # after the 13:30 close: after-hours session
_NIGHT_US = 6 * 3_600_000_000  # futures' after-hours session (15:00-05:00): its day at -6 h
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
FIXED_PRICE_SERIAL = 99_999_999  # the after-hours fixed-price trade: the day's last


def position(row: dict[str, Any]) -> Pos | None:
    """A trade's ``(trading day, session, serial)``; ``None`` without an int time and serial.

    Futures/options: the serial may be a zero-padded string (v1.1, REST) or only the frame's
    number (``frameSerial``, v1.0); an after-hours trade (type ``..._AH``, 15:00 to 05:00)
    belongs to the day its session started on."""
    serial, t = row.get("serial"), row.get("time")
    if type(serial) is str and serial.isdigit():
        serial = int(serial)
    elif serial is None:
        serial = row.get("frameSerial")
    if type(serial) is not int or type(t) is not int:
        return None
    kind = row.get("type")
    if type(kind) is str and kind.endswith("_AH"):
        return (t + _TAIPEI_US - _NIGHT_US) // _DAY_US, AFTER_HOURS, serial
    day, in_day = divmod(t + _TAIPEI_US, _DAY_US)
    return day, AFTER_HOURS if in_day >= _AFTER_HOURS_US else REGULAR, serial


def day_of(pos: Pos) -> str:
    """The ISO trading date of a position."""
    return date.fromordinal(_EPOCH_ORDINAL + pos[0]).isoformat()


@dataclass
class Gap:
    """Trades of ``symbol`` possibly missed during a reconnect, from trading day ``date``:
    serials strictly between ``after`` (``None``: none of this kind seen before the drop on
    that day, so from the day's start) and ``before`` (``None``: none seen since on that day,
    so up to the end of that day when a later day's trade closed the gap, else up to now).
    Regular trades and trial matches (``trial``) are two serial sequences. ``filled``
    counts the trades backfilled from REST (``None``: not backfilled); ``error`` says why a
    backfill failed or could not be done."""

    symbol: str
    odd_lot: bool
    trial: bool
    after: int | None
    before: int | None
    filled: int | None = None
    error: str | None = None
    date: str | None = None
    after_hours: bool = False  # futures/options: a gap of the after-hours session
    lo: Pos | None = field(default=None, repr=False)  # exclusive bounds, as positions
    hi: Pos | None = field(default=None, repr=False)

    def contains(self, pos: Pos) -> bool:
        """Whether a trade at ``pos`` belongs to the gap: after ``lo`` (any later day when
        the gap is open-ended), before ``hi`` (on ``hi``'s day when there is no ``lo``)."""
        if self.lo is not None and pos <= self.lo:
            return False
        if self.hi is not None and pos >= self.hi:
            return False
        return self.lo is not None or self.hi is None or pos[0] == self.hi[0]


def _gap(
    key: Key, lo: Pos | None, hi: Pos | None, day_end: bool = False, futopt: bool = False
) -> Gap:
    """A gap after ``lo`` and before ``hi``; ``day_end``: up to the end of ``lo``'s day.
    ``futopt``: the key's flag is the after-hours session, not odd lot."""
    if day_end:
        assert lo is not None
        hi = (lo[0] + 1, REGULAR, -1)  # before any trade of the next day
    day = lo or hi
    return Gap(
        key[0],
        key[1] and not futopt,
        key[2],
        None if lo is None else lo[2],
        None if hi is None or day_end else hi[2],
        date=None if day is None else day_of(day),
        after_hours=key[1] and futopt,
        lo=lo,
        hi=hi,
    )


class TradeLedger:
    """``market``: stock, or futopt (the subscriptions' flag is then after hours)."""

    def __init__(self, market: str = "stock") -> None:
        self.futopt = market == "futopt"
        self.last: dict[Key, Pos] = {}
        self.open: dict[Key, Pos | None] = {}  # (symbol, kind) -> last position at the drop
        self.gaps: list[Gap] = []  # closed gaps, in the order they closed
        #: symbol as subscribed -> the symbol its trades carry (a continuous alias, TXF1!)
        self.names: dict[str, str] = {}

    def accept(
        self, row: dict[str, Any], odd: bool, subscribed: str | None = None
    ) -> tuple[bool, list[Gap]]:
        """(keep the trade?, the gaps it closes). ``subscribed``: the symbol of the
        subscription the trade came on, when it may be an alias of the trade's symbol."""
        symbol = str(row.get("symbol"))
        if subscribed is not None and subscribed != symbol:
            self._resolved(subscribed, symbol, odd)
        pos = position(row)
        if pos is None:
            return True, []
        key: Key = (symbol, odd, row.get("isTrial") is True)
        last = self.last.get(key)
        if last is not None and pos <= last:
            return False, []
        self.last[key] = pos
        gaps = []
        fo = self.futopt
        if key in self.open:
            lo = self.open.pop(key)
            if lo is None or lo[0] == pos[0]:
                gaps = [_gap(key, lo, pos, futopt=fo)]
            else:  # the drop spans a day change: the rest of the old day, the new day's start
                gaps = [
                    _gap(key, lo, None, day_end=True, futopt=fo),
                    _gap(key, None, pos, futopt=fo),
                ]
            trial_key: Key = (key[0], key[1], True)
            if fo and not key[2] and trial_key in self.open:
                # futures' trial matches only precede the open: a session that had opened
                # before the drop missed none; otherwise they may be missed (up to the open)
                if lo is not None and lo[0] == pos[0]:
                    del self.open[trial_key]
                else:
                    gaps.append(_gap(trial_key, self.open.pop(trial_key), None, futopt=True))
        if pos[2] == FIXED_PRICE_SERIAL and not key[2]:
            # the day's last trade: no trial match of the day can follow, so an open trial
            # gap ends here (and is filled while REST still serves the day)
            trial: Key = (key[0], key[1], True)
            if trial in self.open:
                gaps.append(_gap(trial, self.open.pop(trial), pos))
            self.last[trial] = max(self.last.get(trial, pos), pos)
        self.gaps += gaps
        return True, gaps

    def _resolved(self, alias: str, symbol: str, odd: bool) -> None:
        """``alias`` stands for ``symbol``: gaps opened under the alias (a drop before its
        first trade) are the symbol's."""
        if self.names.get(alias) == symbol:
            return
        self.names[alias] = symbol
        for trial in (False, True):
            if (alias, odd, trial) in self.open:
                self.open.setdefault((symbol, odd, trial), self.open.pop((alias, odd, trial)))

    def dropped(self, subs: Iterable[Subscription]) -> None:
        """The connection dropped: open a gap per (symbol, kind) of each trades subscription
        (a gap still open from an earlier drop stays as it is)."""
        for sub in subs:
            if sub.channel != "trades":
                continue
            for trial in (False, True):
                key = (self.names.get(sub.symbol, sub.symbol), sub.flag, trial)
                if key not in self.open:
                    self.open[key] = self.last.get(key)

    def quiet(self) -> list[Gap]:
        """Provisional gaps up to now of every open (symbol, kind), to fill while no trade
        closes them (see :meth:`settle`); none for futures' trial matches (the endpoint
        serves none)."""
        return [
            _gap(key, lo, None, futopt=self.futopt)
            for key, lo in self.open.items()
            if not (self.futopt and key[2])
        ]

    def settle(self, gap: Gap) -> bool:
        """Close the provisional ``gap`` (from :meth:`quiet`) if its (symbol, kind) is still
        open where it was: no trade closed it while its rows were fetched. False: a trade
        did (its own gap is filled instead) or another settle did."""
        if not self.still_open(gap):
            return False
        del self.open[(gap.symbol, gap.odd_lot or gap.after_hours, gap.trial)]
        self.gaps.append(gap)
        return True

    def still_open(self, gap: Gap) -> bool:
        """Whether the provisional ``gap``'s (symbol, kind) is open where it was."""
        key = (gap.symbol, gap.odd_lot or gap.after_hours, gap.trial)
        return key in self.open and self.open[key] == gap.lo

    def add(self, gap: Gap, after: Gap) -> None:
        """Record ``gap`` just after ``after`` (a day split of a gap up to now)."""
        i = next((n for n, g in enumerate(self.gaps) if g is after), len(self.gaps) - 1)
        self.gaps.insert(i + 1, gap)

    def close_open(self) -> list[Gap]:
        """End of stream: the gaps no trade closed become gaps up to now."""
        gaps = [
            _gap(key, lo, None, futopt=self.futopt)
            for key, lo in self.open.items()
            if not self._opened_since(key, lo)
        ]
        self.open.clear()
        self.gaps += gaps
        return gaps

    def _opened_since(self, key: Key, lo: Pos | None) -> bool:
        """A futures trial key whose session opened after its last trial match (a regular
        trade came later): no trial match of that session can follow."""
        if not (self.futopt and key[2]):
            return False
        regular = self.last.get((key[0], key[1], False))
        return regular is not None and (lo is None or regular > lo)

    def filled(self, gap: Gap, rows: list[dict[str, Any]]) -> None:
        """``rows`` (sorted by position) were fetched for ``gap``."""
        gap.filled = len(rows)
        if gap.hi is None and rows:
            # filled up to now: later streamed trades at or before it are duplicates
            key = (gap.symbol, gap.odd_lot or gap.after_hours, gap.trial)
            pos = position(rows[-1])
            if pos is not None and (key not in self.last or pos > self.last[key]):
                self.last[key] = pos
