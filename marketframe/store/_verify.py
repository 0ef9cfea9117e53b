"""``Store.verify``: find damaged, missing or replaced files and a damaged log; repair.

A check reads every file the log records and compares it with its record (size, content
hash, row count) and parses it (a file that matches its hash has the page checksums it was
written with: see :func:`._io.parse_checked`). A repair rebuilds a damaged log from what of it
reads whole (:meth:`._log.Reader.salvage`; a store of an earlier layout: its manifest's
previous generation, see :mod:`._log._legacy`), removes each damaged file, forgets what its
symbol held and fetches that range again; minute data comes back only as far as the service
still has it (the latest 30 days). A damaged part of a derived dataset is computed again
from its source (the dataset's recorded values name the source, the spec and the
adjustment), after the sources' own repairs. What cannot be repaired is a failure of the
report, never an exception.
"""

from __future__ import annotations

import datetime as dt
from contextlib import nullcontext
from typing import Any

from marketframe.endpoints import ENDPOINTS, merge
from marketframe.exceptions import MarketframeError, StoreCorrupted, SyncError
from marketframe.indicators.stateful import IndicatorSpec
from marketframe.store import _compute, _io
from marketframe.store._compute._derive import derived_id
from marketframe.store._dataset import NO_SYMBOL, UNIVERSE, DatasetId
from marketframe.store._log import _legacy
from marketframe.store._log._document import fresh
from marketframe.store._parts import Parts
from marketframe.store._report import VerifyReport
from marketframe.store._storage import LocalStorage
from marketframe.store._sync._call import check_args, run_checked


def check_file(storage: Any, rel: str, rec: dict[str, Any]) -> str | None:
    """What is wrong with a recorded partition file, or None."""
    try:
        table = storage.read_file(rel, rec)
    except StoreCorrupted as exc:
        return str(exc).split("; to repair it", 1)[0].removeprefix(exc.path).strip()
    if "rows" in rec and table.num_rows != rec["rows"] and not rec.get("pending"):
        return f"holds {table.num_rows} rows where {rec['rows']} were written"
    return None


def run(
    parts: Parts, repair: bool, *, today: dt.date | None, progress: bool | None
) -> VerifyReport:
    """Check (and with ``repair`` fix) the store; called under the store's lock."""
    log = parts.log
    log.reload()
    report = VerifyReport(str(parts.root))
    if log.damage is not None:
        report.problems.append(f"{log.where}: {log.damage}")
        if not repair:
            return report
        data, how = _restore(parts)
        log.replace_state(data)
        log.commit("repair")
        report.repaired.append(how)
    damaged: dict[tuple[DatasetId, str], list[str]] = {}
    values: dict[DatasetId, dict[str, Any]] = {}
    for ds, d in log.datasets():
        values[ds] = d.get("values", {})
        for rel, rec in sorted(d.get("files", {}).items()):
            if "hash" not in rec:
                continue  # staged, never recorded as held
            report.checked += 1
            problem = check_file(parts.storage, rel, rec)
            if problem is not None:
                report.problems.append(f"{rel}: {problem}")
                sym, _ = _io.where(rel)
                damaged.setdefault((ds, sym or NO_SYMBOL), []).append(rel)
    if repair and damaged:
        derived = {k: v for k, v in damaged.items() if k[0].endpoint.startswith("derived.")}
        for (ds, sym), rels in damaged.items():  # the sources first: derived data reads them
            if (ds, sym) not in derived:
                _refetch(parts, ds, sym, rels, values[ds], today, progress, report)
        for (ds, sym), rels in derived.items():
            _recompute(parts, ds, sym, rels, values, report)
    return report


def _refetch(
    parts: Parts,
    ds: DatasetId,
    sym: str,
    rels: list[str],
    params: dict[str, Any],
    today: dt.date | None,
    progress: bool | None,
    report: VerifyReport,
) -> None:
    """Remove ``rels`` (damaged files of one symbol), forget its coverage, fetch it again."""
    if ds == UNIVERSE:  # the service lists today's tickers only: a past day is gone
        report.failures += [
            f"{rel}: an archived day of the universe cannot be fetched again (the service"
            " lists today's tickers only); restore it from a backup"
            for rel in rels
        ]
        return
    if ds.endpoint not in ENDPOINTS:  # a store written by a later version
        report.failures += [f"{rel}: {ds.endpoint} is no endpoint of this version" for rel in rels]
        return
    log = parts.log
    held = log.intervals(ds, sym)
    ranges = merge([*held["final"], *held["open"]])
    # a local store is locked as a whole already; an object store's repair takes the lease
    # of the one symbol it rewrites
    with parts.locked(ds, [sym]) if parts.storage.remote else nullcontext():
        for rel in rels:
            parts.storage.delete(rel)
            log.drop_file(ds, rel)
        log.drop_symbol(ds, sym)
        log.commit("repair")
    symbols = None if sym == NO_SYMBOL else sym
    minute = _io.by_year(ds) and ENDPOINTS[ds.endpoint].minute_range != "checked"
    for lo, hi in [(None, None)] if minute else ranges:
        try:
            args = check_args(ds.endpoint, symbols, lo, hi, ds.timeframe, today, params)
            with parts.locked(ds, [sym]) if parts.storage.remote else nullcontext():
                run_checked(parts, *args, progress=progress, strict=True)
        except SyncError as exc:
            report.failures += [str(f) for f in exc.report.failures]
            continue
        except MarketframeError as exc:  # the store locked, unreachable, refused...
            report.failures += [f"{rel}: not fetched again ({exc})" for rel in rels]
            continue
        span = "the service's latest 30 days" if minute else f"{lo}..{hi}"
        report.repaired += [f"{rel}: fetched again ({span})" for rel in rels]


def _recompute(
    parts: Parts,
    ds: DatasetId,
    sym: str,
    rels: list[str],
    values: dict[DatasetId, dict[str, Any]],
    report: VerifyReport,
) -> None:
    """Remove ``rels`` (damaged parts of a derived dataset's symbol) and forget its state,
    then compute the symbol again in full from its source, as the dataset's values record
    it (the source dataset, the spec, the adjustment)."""
    own = values[ds]
    source = next((d for d in values if d.key == own.get("source")), None)
    try:
        spec = IndicatorSpec.from_json(own["spec"])
        adjust = own.get("adjust")
        same = source is not None and derived_id(source, spec, adjust) == ds
    except (KeyError, TypeError, ValueError, MarketframeError):
        same = False
    if source is None or not same:
        why = (
            f"its source {own.get('source')} is not in the store"
            if source is None
            else "it was written by another version (compute it again)"
        )
        report.failures += [f"{rel}: cannot be computed again: {why}" for rel in rels]
        return
    remote = parts.storage.remote
    log = parts.log
    # ``sym``: a bucket (its members computed again together: they share its parts), or a
    # symbol's directory of a store computed before buckets
    members = list(log.noted(ds, sym, "members") or [sym])
    try:
        with parts.locked(ds, [sym]) if remote else nullcontext():
            for rel in rels:
                parts.storage.delete(rel)
                log.drop_file(ds, rel)
            log.note(ds, sym, "state", None)  # computed again from its first bar
            log.commit("repair")
        _compute.compute(
            parts,
            source.endpoint,
            spec,
            members,
            source.timeframe,
            None,
            1,
            adjust,
            dict(values[source]),
            held=not remote,
        )
    except MarketframeError as exc:  # the source not held, the store locked, unreachable...
        report.failures += [f"{rel}: not computed again ({exc})" for rel in rels]
        return
    report.repaired += [f"{rel}: computed again from {source.endpoint}" for rel in rels]


def _restore(parts: Parts) -> tuple[dict[str, Any], str]:
    """The state a repair starts from, and what it did to get it."""
    log, storage = parts.log, parts.storage
    if log.where != _legacy.MANIFEST:  # the log: whatever of it reads whole
        data, skipped = log.salvage()
        lost = ", ".join(str(g) for g in skipped) or "none"
        return (
            data,
            f"{log.where}: the state rebuilt from the log (damaged entries skipped: {lost})",
        )
    old = _legacy.version_1(storage) if isinstance(storage, LocalStorage) else None
    if old is not None and isinstance(storage, LocalStorage):
        return _legacy.migrate(storage, old), (
            f"{_legacy.MANIFEST}: layout 1 migrated (directories tf=/sym=, files rewritten "
            "and recorded)"
        )
    prev, problem = _legacy.read_previous(storage)
    if prev is not None:
        return prev, f"{_legacy.MANIFEST}: restored from {_legacy.PREVIOUS}"
    return fresh(), (
        f"{_legacy.MANIFEST}: started afresh ({_legacy.PREVIOUS} {problem}); sync again what "
        "the store should hold"
    )
