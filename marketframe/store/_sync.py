"""One sync: validate, plan the missing windows, fetch them concurrently, write, record.

The order of effects is what makes a sync safe to kill at any point: for each symbol the
partition files are upserted first and the manifest is rewritten after, so a window is only
ever recorded as held once its rows are on disk. A rerun refetches whatever the manifest does
not record, and because writes are upserts on the endpoint's key, refetching a window that was
already written cannot duplicate a row.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from marketframe import _params
from marketframe._time import session_date, taipei_today
from marketframe.endpoints import ENDPOINTS, MINUTE_TIMEFRAMES, get
from marketframe.exceptions import InvalidParams, MarketframeError, redact
from marketframe.store._commit import commit_symbol, forget_damaged
from marketframe.store._manifest import NO_SYMBOL, DatasetId, Manifest
from marketframe.store._pool import DaemonPool
from marketframe.store._report import Failure, SyncReport
from marketframe.store._spec import Spec, Task
from marketframe.store._windows import (
    Interval,
    earliest,
    fetch_start,
    plan,
    split,
)

if TYPE_CHECKING:
    from marketframe.client import Client

#: parameters that only order or bound the answer, never change a row
_NOT_IDENTITY = {"symbol", "timeframe", "sort"}


def date_ranged() -> list[str]:
    return [name for name, ep in ENDPOINTS.items() if ep.date_range]


def fingerprint(params: Mapping[str, Any]) -> str:
    """Hive-safe text of the parameters that change the data: ``period-20``, ``default``."""
    parts = []
    for k in sorted(params):
        v = params[k]
        text = ".".join(sorted(v)) if isinstance(v, tuple) else str(v)
        parts.append(f"{k}-{text}")
    # a character a path cannot hold (contractMonth "1!", "202609/202610") as ~hex: the text
    # stays one hive-safe directory name, and values that were already safe keep their name
    return re.sub(r"[^A-Za-z0-9_.\-]", lambda m: f"~{ord(m[0]):02x}", "_".join(parts)) or "default"


def resolve(endpoint: str, timeframe: str | None, params: Mapping[str, Any]) -> Spec:
    """Validate the dataset part of a request (everything but symbols and dates)."""
    ep = get(endpoint)
    if not ep.date_range:
        raise InvalidParams(
            "Store",
            "endpoint",
            f"{endpoint!r} has no date range to store",
            ", ".join(date_ranged()),
        )
    bad = [k for k in params if k in (*ep.date_range, ep.multi_param) or k not in ep.param_map]
    if bad:
        allowed = [
            p.name
            for p in ep.params
            if p.name not in (*ep.date_range, ep.multi_param, "timeframe", "sort")
        ]
        raise InvalidParams(
            ep.name,
            bad[0],
            "is not a dataset parameter here (symbols and dates are sync/read arguments)",
            ", ".join(allowed) or "none",
        )
    if "timeframe" in ep.param_map:
        timeframe = str(timeframe) if timeframe is not None else "D"
        tf = ep.param_map["timeframe"]
        if timeframe not in (tf.allowed or ()):
            raise InvalidParams(
                ep.name, "timeframe", f"has value {timeframe!r}", ", ".join(tf.allowed or ())
            )
    elif timeframe is not None:
        raise InvalidParams(ep.name, "timeframe", "is not a parameter of this endpoint", "None")
    canon: dict[str, Any] = {}
    for k, v in params.items():
        if v is None or k in _NOT_IDENTITY:
            continue
        canon[k] = _params._check_value(ep, k, v)
    missing = [
        p.name
        for p in ep.params
        if p.required
        and p.name not in canon
        and p.name not in (*ep.date_range, ep.multi_param, "timeframe")
    ]
    if missing:
        raise InvalidParams(ep.name, missing[0], "is required", None)
    if canon.get("adjusted"):  # adjusted history changes with every new corporate action
        raise InvalidParams(
            ep.name,
            "adjusted",
            "would store prices that the next corporate action makes stale",
            "sync raw candles and read(..., adjust='all')",
        )
    if timeframe in MINUTE_TIMEFRAMES:
        _params.check_minute(ep, canon)  # the row's minute rules (e.g. fields allowed)
    return Spec(ep, DatasetId(ep.name, fingerprint(canon), timeframe), canon)


def check_symbols(spec: Spec, symbols: str | Sequence[str] | None) -> list[str]:
    if not spec.has_symbol:
        if symbols is not None:
            raise InvalidParams(
                spec.ep.name,
                "symbols",
                "is not accepted: this endpoint answers for every symbol at once",
                "None",
            )
        return [NO_SYMBOL]
    if symbols is None:
        raise InvalidParams(spec.ep.name, "symbols", "is required", "a symbol or a list")
    if isinstance(symbols, str):
        items = [symbols]
    elif isinstance(symbols, Iterable) and not isinstance(symbols, bytes | Mapping):
        items = list(symbols)
    else:
        raise InvalidParams(
            spec.ep.name,
            "symbols",
            f"has value {symbols!r} of type {type(symbols).__name__}",
            "a symbol string like '2330', or a list of them",
        )
    if not items:
        raise InvalidParams(spec.ep.name, "symbols", "is an empty list", "one or more symbols")
    out: list[str] = []
    for s in items:
        if not _params.is_path_value(s):  # the service's rule: a symbol is also a directory
            shown = repr(s) if len(repr(s)) <= 40 else repr(s)[:37] + "..."
            raise InvalidParams(
                spec.ep.name,
                "symbols",
                f"has value {shown}",
                "symbol strings of " + _params.PATH_VALUE_RULE,
            )
        if s not in out:
            out.append(s)
    return out


def check_range(spec: Spec, start: Any, end: Any, today: dt.date) -> Interval | None:
    name = spec.ep.name
    if spec.latest:
        if start is not None or end is not None:
            raise InvalidParams(
                name,
                "start",
                "cannot be set with a minute timeframe (the "
                "service returns the latest 30 days; each sync keeps them)",
                "start=None, end=None",
            )
        return None
    if start is None:
        raise InvalidParams(name, "start", "is required", "a 'YYYY-MM-DD' string or a date")
    lo = _params.to_date(name, "start", start)
    hi = _params.to_date(name, "end", end) if end is not None else today
    if lo > hi:
        raise InvalidParams(name, "start", f"({lo}) is after end ({hi})", "start <= end")
    return lo, hi


@dataclass
class _Run:
    """What one sync's fetch loop shares with the writers (in place of a long parameter list)."""

    spec: Spec
    client: Client
    root: Path
    manifest: Manifest
    report: SyncReport
    clock_today: dt.date
    writers: ThreadPoolExecutor
    bar: Any
    pending: dict[str, int]  # symbol -> windows not yet fetched
    done: dict[str, list[tuple[Task, pa.Table, dt.date]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # symbol -> its fetched windows
    commits: list[Future[None]] = field(default_factory=list)
    commit_lock: threading.Lock = field(default_factory=threading.Lock)


def _request(spec: Spec, task: Task, today: dt.date) -> dict[str, Any]:
    p: dict[str, Any] = dict(spec.params)
    if spec.ds.timeframe is not None:
        p["timeframe"] = spec.ds.timeframe
    if spec.has_symbol:
        p[spec.ep.multi_param] = task.symbol  # type: ignore[index]
    if "sort" in spec.ep.param_map:
        p["sort"] = "asc"  # windows come back in key order: fresh partitions need no sort
    lo_name, hi_name = spec.ep.date_range  # type: ignore[misc]
    if task.window is not None:
        p[lo_name], p[hi_name] = task.fetch_from, task.window[1]
    elif spec.ep.minute_range == "ignored":
        p[lo_name] = p[hi_name] = today  # required on the wire, ignored by the service
    return p


def run(
    client: Client,
    root: Any,
    manifest: Manifest,
    spec: Spec,
    symbols: list[str],
    want: Interval | None,
    *,
    today: dt.date | None,
    progress: bool | None,
    max_workers: int,
) -> SyncReport:
    """Fetch what ``manifest`` does not hold as final, write it, record it; never raises for a
    failed window (it is in the report)."""
    t0 = time.perf_counter()
    report = SyncReport(spec.ds.key, symbols=len(symbols) if spec.has_symbol else 0)
    clock_today = today or taipei_today()
    lead = spec.lead_days()
    forget_damaged(root, manifest, spec.ds, symbols, report)
    tasks: list[Task] = []
    for sym in symbols:
        if want is None:
            tasks.append(Task(sym, None, None))
            continue
        held = manifest.final(spec.ds, sym)
        kind_symbol = sym if spec.has_symbol else None
        windows, before = plan(want, held, kind_symbol, lead)
        if before is not None:  # before the earliest data: empty by the service's rules
            manifest.record(spec.ds, sym, before, before[1], empty=True, params=spec.params)
        floor = earliest(kind_symbol)
        lo = max(want[0], floor) if floor else want[0]
        report.windows_skipped += (
            max(0, len(split(lo, want[1], lead, floor)) - len(windows)) if lo <= want[1] else 0
        )
        tasks += [Task(sym, w, fetch_start(w[0], lead, floor)) for w in windows]
    # every request's parameters are checked before the first one is sent
    requests = [_params.validate(spec.ep, _request(spec, t, clock_today)) for t in tasks]

    before_stats = client.stats()
    pending: dict[str, int] = defaultdict(int)
    for t in tasks:
        pending[t.symbol] += 1
    bar = _progress(len(tasks), spec.ds.key, progress, client)
    try:
        if tasks:
            # fetches on max_workers threads; each symbol's writes, once all its windows are
            # in, on a writer thread (different symbols never share a partition file)
            pool = DaemonPool(max_workers, "marketframe-store")
            with ThreadPoolExecutor(2, thread_name_prefix="marketframe-write") as writers:
                futures: dict[Future[Any], Task] = {
                    pool.submit(_fetch, client, spec, req): t
                    for t, req in zip(tasks, requests, strict=True)
                }
                state = _Run(
                    spec, client, root, manifest, report, clock_today, writers, bar, pending
                )
                try:
                    _collect(futures, state)
                finally:
                    # Ctrl-C, a write error: stop sending and do not wait for requests in
                    # flight; the symbols already handed to the writers are still written
                    pool.shutdown(cancel=True)
                for c in state.commits:
                    c.result()  # a write error (disk full, ...) is raised, never swallowed
        manifest.save()
    finally:
        if bar is not None:
            bar.close()
    after = client.stats()
    report.requests = after.requests - before_stats.requests
    report.retries = after.retries - before_stats.retries
    report.cache_hits = after.cache_hits - before_stats.cache_hits
    report.failures.sort(key=lambda f: (f.symbol or "", f.start or dt.date.min))
    report.seconds = time.perf_counter() - t0
    return report


def _collect(futures: dict[Future[Any], Task], state: _Run) -> None:
    """Take fetched windows as they complete; hand each finished symbol to a writer."""
    spec = state.spec
    for fut in _completed(futures):
        task = futures[fut]
        try:
            table, env_today = fut.result()
        except MarketframeError as exc:
            state.report.failures.append(
                Failure(
                    task.symbol if spec.has_symbol else None,
                    task.window[0] if task.window else None,
                    task.window[1] if task.window else None,
                    redact(f"{type(exc).__name__}: {exc}", _key_of(state.client)),
                )
            )
        else:
            state.done[task.symbol].append((task, table, env_today or state.clock_today))
        state.pending[task.symbol] -= 1
        if state.bar is not None:
            state.bar.update(1)
        if state.pending[task.symbol] == 0:
            state.commits.append(
                state.writers.submit(
                    commit_symbol,
                    state.root,
                    state.manifest,
                    spec,
                    task.symbol,
                    state.done.pop(task.symbol, []),
                    state.report,
                    state.commit_lock,
                )
            )


def _completed(futures: dict[Future[Any], Task]) -> Iterator[Future[Any]]:
    """Futures as they complete. The wait wakes up every quarter second: a process-directed
    SIGINT may be delivered to a fetch thread, and the main thread only raises
    ``KeyboardInterrupt`` once it runs Python code again (a wait without a timeout would
    sleep through Ctrl-C until a request finished)."""
    left = set(futures)
    while left:
        done, left = wait(left, timeout=0.25, return_when=FIRST_COMPLETED)
        yield from done


def _key_of(client: Client) -> str | None:
    return getattr(getattr(client, "_transport", None), "_key", None)


def _fetch(client: Client, spec: Spec, req: dict[str, Any]) -> tuple[pa.Table, dt.date | None]:
    fetched = client.fetch(spec.ep.name, refresh=True, **req)
    # the session date from the envelope the client parsed (the body is read once)
    return fetched.table, session_date(fetched.envelopes[0])


def _progress(total: int, label: str, progress: bool | None, client: Any = None) -> Any:
    """The sync's bar (None when hidden or empty): its ETA is bounded below by the plan's
    rate limit (:mod:`marketframe.store._progress`)."""
    if progress is False or total == 0:
        return None
    from marketframe.store._progress import SyncBar

    return SyncBar(total, label, progress, client)
