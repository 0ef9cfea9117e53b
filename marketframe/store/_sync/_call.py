"""One ``Store.sync`` call around :func:`._run.run`: its arguments checked, a sync with
nothing to do answered without the lock, a checked sync run under it (``Store.verify``'s
repairs run the same two steps)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from marketframe._time import taipei_today
from marketframe.endpoints import Interval, earliest, plan, split, to_date
from marketframe.exceptions import SyncError
from marketframe.store import _io
from marketframe.store._dataset import NO_SYMBOL, Dataset, check_range, check_symbols, resolve
from marketframe.store._parts import Parts
from marketframe.store._report import SyncReport
from marketframe.store._sync._run import run as run_sync


def check_args(
    endpoint: str,
    symbols: str | Sequence[str] | None,
    start: Any,
    end: Any,
    timeframe: str | None,
    today: dt.date | str | None,
    params: dict[str, Any],
) -> tuple[Dataset, list[str], dt.date | None, Interval | None]:
    """Every argument of a sync checked (InvalidParams before any request or lock)."""
    spec = resolve(endpoint, timeframe, params)
    syms = check_symbols(spec, symbols)
    day = to_date("Store.sync", "today", today) if today is not None else None
    return spec, syms, day, check_range(spec, start, end, day or taipei_today())


def held_already(
    parts: Parts, spec: Dataset, syms: list[str], want: Interval | None
) -> SyncReport | None:
    """The report of a sync with nothing to do (every window held as final, every
    recorded file of these symbols unchanged by its cheap check), or None: such a sync
    takes no lock and writes nothing, so it also works on a read-only store."""
    if want is None:  # minute timeframes: always refetched
        return None
    log, storage = parts.log, parts.storage
    log.reload()
    log.check()
    report = SyncReport(spec.ds.key, symbols=len(syms) if spec.has_symbol else 0)
    for sym in syms:
        kind_symbol = sym if spec.has_symbol else None
        held = log.final(spec.ds, sym)
        windows, before = plan(want, held, kind_symbol, spec.lead_days())
        if windows or (before is not None and plan(before, held, None)[0]):
            return None
        floor = earliest(kind_symbol)
        lo = max(want[0], floor) if floor else want[0]
        if lo <= want[1]:
            report.windows_skipped += len(split(lo, want[1], spec.lead_days(), floor))
    for rel, rec in log.files(spec.ds).items():
        sym = _io.where(rel)[0] or NO_SYMBOL
        if sym in syms and not storage.unchanged(rel, rec):
            return None  # the sync's cheap check has something to fix
    return report


def run_checked(
    parts: Parts,
    spec: Dataset,
    syms: list[str],
    day: dt.date | None,
    want: Interval | None,
    *,
    progress: bool | None,
    strict: bool,
) -> SyncReport:
    """A checked sync, under the store's lock."""
    parts.caught_up()  # another process may have synced while we waited
    report = run_sync(
        parts.client,
        parts.storage,
        parts.log,
        spec,
        syms,
        want,
        today=day,
        progress=progress,
        max_workers=parts.workers(),
        commit_every=parts.commit_every,
    )
    if report.failures and strict:
        raise SyncError(report)
    return report
