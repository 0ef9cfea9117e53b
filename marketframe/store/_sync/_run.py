"""One sync: validate, plan the missing windows, fetch them concurrently, write, record.

The order of effects is what makes a sync safe to kill at any point: for each symbol the
partition files are upserted first and the log is rewritten after, so a window is only
ever recorded as held once its rows are on disk. A rerun refetches whatever the log does
not record, and because writes are upserts on the endpoint's key, refetching a window that was
already written cannot duplicate a row.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from marketframe._progress import progress_bar
from marketframe._time import session_date, taipei_today
from marketframe.endpoints import (
    Interval,
    earliest,
    fetch_start,
    plan,
    split,
)
from marketframe.store import _io
from marketframe.store._dataset import NO_SYMBOL, Dataset, Fetch
from marketframe.store._log import Log
from marketframe.store._report import Failure, SyncReport
from marketframe.store._storage import Storage
from marketframe.store._sync._batch import Batch
from marketframe.store._sync._commit import commit_symbol, forget_damaged

if TYPE_CHECKING:
    from marketframe._http.fanout import Outcome
    from marketframe._http.request import Prepared
    from marketframe._http.transport import Response
    from marketframe.client import Client


@dataclass
class _SyncRun:
    """What one sync's fetch loop shares with the writers (in place of a long parameter list)."""

    spec: Dataset
    client: Client[Any]  # of any backend: a sync reads the answers as Arrow
    root: Storage
    log: Log
    batch: Batch
    report: SyncReport
    clock_today: dt.date
    writers: ThreadPoolExecutor
    bar: Any
    pending: dict[str, int]  # symbol -> windows not yet fetched
    requests: list[Prepared] = field(default_factory=list)  # in the order of the tasks
    done: dict[str, list[tuple[int, Response]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # symbol -> its answered windows (task index, answer), typed by the writer
    commits: list[Future[None]] = field(default_factory=list)
    commit_lock: threading.Lock = field(default_factory=threading.Lock)


def _request(spec: Dataset, task: Fetch, today: dt.date) -> dict[str, Any]:
    p: dict[str, Any] = dict(spec.params)
    if spec.ds.timeframe is not None:
        p["timeframe"] = spec.ds.timeframe
    if (param := spec.ep.multi_param) is not None:  # the dataset has symbols
        p[param] = task.symbol
    if "sort" in spec.ep.param_map:
        p["sort"] = "asc"  # windows come back in key order: fresh partitions need no sort
    assert spec.ep.date_range is not None  # a stored dataset has one (resolve checks it)
    lo_name, hi_name = spec.ep.date_range
    if task.window is not None:
        p[lo_name], p[hi_name] = task.fetch_from, task.window[1]
    elif spec.ep.minute_range == "ignored":
        p[lo_name] = p[hi_name] = today  # required on the wire, ignored by the service
    return p


def run(
    client: Client[Any],
    root: Storage,
    log: Log,
    spec: Dataset,
    symbols: list[str],
    want: Interval | None,
    *,
    today: dt.date | None,
    progress: bool | None,
    max_workers: int,
    commit_every: float = 2.0,
    again: bool = True,
) -> SyncReport:
    """Fetch what ``log`` does not hold as final, write it, record it; never raises for a
    failed window (it is in the report).

    A file whose damage only its merge finds (bit rot keeps its size and modification time,
    so the cheap check passed it) loses its symbol's coverage after the plan was made: with
    ``again``, those symbols are synced once more, so the requested range is held when the
    sync returns."""
    t0 = time.perf_counter()
    report = SyncReport(spec.ds.key, symbols=len(symbols) if spec.has_symbol else 0)
    clock_today = today or taipei_today()
    lead = spec.lead_days()
    forget_damaged(root, log, spec.ds, symbols, report)
    cheap = len(report.repaired)  # found by the cheap check: this pass fetches their range
    skipped: dict[str, int] = {}
    tasks: list[Fetch] = []
    for sym in symbols:
        if want is None:
            tasks.append(Fetch(sym, None, None))
            continue
        held = log.final(spec.ds, sym)
        kind_symbol = sym if spec.has_symbol else None
        windows, before = plan(want, held, kind_symbol, lead)
        if before is not None:  # before the earliest data: empty by the service's rules
            log.record(spec.ds, sym, before, before[1], empty=True, params=spec.params)
        floor = earliest(kind_symbol)
        lo = max(want[0], floor) if floor else want[0]
        skipped[sym] = (
            max(0, len(split(lo, want[1], lead, floor)) - len(windows)) if lo <= want[1] else 0
        )
        report.windows_skipped += skipped[sym]
        tasks += [Fetch(sym, w, fetch_start(w[0], lead, floor)) for w in windows]
    # every request is prepared (checked, encoded) once, before the first one is sent
    requests = [
        client.prepare(spec.ep.name, refresh=True, **_request(spec, t, clock_today)) for t in tasks
    ]
    before_stats = client.stats()
    pending: dict[str, int] = defaultdict(int)
    for t in tasks:
        pending[t.symbol] += 1
    bar = progress_bar(len(tasks), spec.ds.key, progress, client)
    batch = Batch(root, log, f"sync {spec.ep.name}", commit_every)
    try:
        if tasks:
            # fetches through the client's fan-out; each symbol's writes, once all its
            # windows are in, on a writer thread (different symbols never share a file).
            # Ctrl-C, a write error: the fan-out stops sending and does not wait for requests
            # in flight; the symbols already handed to the writers are still written
            with ThreadPoolExecutor(2, thread_name_prefix="marketframe-write") as writers:
                state = _SyncRun(
                    spec, client, root, log, batch, report, clock_today, writers, bar, pending
                )
                state.requests = requests
                client.receive_all(
                    requests,
                    progress=lambda i, outcome: _collect(tasks, i, outcome, state),
                    workers=max_workers,
                )
                for c in state.commits:
                    c.result()  # a write error (disk full, ...) is raised, never swallowed
    except BaseException:
        try:  # what the writers finished is still recorded, whatever stopped the sync
            batch.close()
        except Exception:  # noqa: BLE001 - the first error is the one raised
            batch.discard()
        raise
    else:
        batch.close()
    finally:
        if bar is not None:
            bar.close()
    after = client.stats()
    report.requests = after.requests - before_stats.requests
    report.retries = after.retries - before_stats.retries
    report.cache_hits = after.cache_hits - before_stats.cache_hits
    late = sorted({_io.where(rel)[0] or NO_SYMBOL for rel in report.repaired[cheap:]})
    if again and late and want is not None:  # minute data: nothing older to fetch
        more = run(
            client,
            root,
            log,
            spec,
            late,
            want,
            today=today,
            progress=progress,
            max_workers=max_workers,
            commit_every=commit_every,
            again=False,
        )
        _add(report, more)
        # the final windows the damaged file's symbols were spared were not held after all
        report.windows_skipped -= sum(skipped.get(s, 0) for s in late)
    report.failures.sort(key=lambda f: (f.symbol or "", f.start or dt.date.min))
    report.seconds = time.perf_counter() - t0
    return report


def _add(report: SyncReport, more: SyncReport) -> None:
    """``more``'s counts and findings added to ``report`` (a second pass of one sync)."""
    for k in ("requests", "retries", "cache_hits", "windows_fetched", "empty_windows"):
        setattr(report, k, getattr(report, k) + getattr(more, k))
    report.rows_received += more.rows_received
    report.rows_written += more.rows_written
    report.failures += more.failures
    report.repaired += more.repaired


def _collect(tasks: list[Fetch], i: int, outcome: Outcome[Response], state: _SyncRun) -> None:
    """Take an answered window as it ends; hand each finished symbol to a writer, which
    types its windows together (one conversion for a symbol's answers) and writes them."""
    task = tasks[i]
    if outcome.error is not None:
        _failed(state, task, outcome.error)
    elif outcome.result is not None:
        state.done[task.symbol].append((i, outcome.result))
    state.pending[task.symbol] -= 1
    if state.bar is not None:
        state.bar.update(1)
    if state.pending[task.symbol] == 0:
        answered = state.done.pop(task.symbol, [])
        state.commits.append(state.writers.submit(_convert_and_commit, tasks, answered, state))


def _failed(state: _SyncRun, task: Fetch, exc: BaseException) -> None:
    """Record ``task``'s window as failed (the transport's errors carry no credential)."""
    with state.commit_lock:
        state.report.failures.append(
            Failure(
                task.symbol if state.spec.has_symbol else None,
                task.window[0] if task.window else None,
                task.window[1] if task.window else None,
                f"{type(exc).__name__}: {exc}",
            )
        )


def _convert_and_commit(
    tasks: list[Fetch], answered: list[tuple[int, Response]], state: _SyncRun
) -> None:
    """Type one symbol's answered windows, then write and record those that converted."""
    if not answered:
        return
    preps = [state.requests[i] for i, _ in answered]
    outcomes = state.client.convert_all(preps, [resp for _, resp in answered])
    results: list[tuple[Fetch, pa.Table, dt.date]] = []
    for (i, resp), outcome in zip(answered, outcomes, strict=True):
        if outcome.error is not None:
            _failed(state, tasks[i], outcome.error)
            continue
        assert outcome.result is not None
        # the service's day: its envelope's date, else its Date header, else this machine's
        served = session_date(outcome.result.envelopes[0]) or resp.served
        results.append((tasks[i], outcome.result.table, served or state.clock_today))
    commit_symbol(
        state.batch,
        state.root,
        state.log,
        state.spec,
        tasks[answered[0][0]].symbol,
        results,
        state.report,
        state.commit_lock,
    )
