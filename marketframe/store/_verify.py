"""``Store.verify``: find damaged, missing or replaced files and a damaged manifest; repair.

A check reads every file the manifest records and compares it with its record (size, content
hash, row count) and its own page checksums. A repair restores a damaged manifest from the
previous generation (``_manifest.prev.json``), removes each damaged file, forgets what its
symbol held and fetches that range again; minute data comes back only as far as the service
still has it (the latest 30 days).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from marketframe.store import _io
from marketframe.store._manifest import NO_SYMBOL, PREVIOUS, VERSION, DatasetId, parse
from marketframe.store._report import StoreCorrupted, StoreLocked, SyncError, VerifyReport
from marketframe.store._windows import merge

if TYPE_CHECKING:
    from marketframe.store import Store


@contextmanager
def locked(path: Path, timeout: float) -> Iterator[None]:
    """The store's inter-process lock; :class:`StoreLocked` when ``timeout`` runs out."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise StoreLocked(path.parent, timeout) from None
    try:
        yield
    finally:
        lock.release()


def check_file(path: Path, rec: dict[str, Any]) -> str | None:
    """What is wrong with a recorded partition file, or None."""
    try:
        table = _io.read_file(path, rec)
    except StoreCorrupted as exc:
        return str(exc).split("; to repair it", 1)[0].removeprefix(str(path)).strip()
    if "rows" in rec and table.num_rows != rec["rows"] and not rec.get("pending"):
        return f"holds {table.num_rows} rows where {rec['rows']} were written"
    return None


def run(store: Store, repair: bool, *, today: dt.date | None,
        progress: bool | None) -> VerifyReport:
    """Check (and with ``repair`` fix) the store; called under the store's lock."""
    manifest = store._manifest
    manifest.reload()
    report = VerifyReport(str(store.root))
    if manifest.damage is not None:
        report.problems.append(f"{manifest.path.name}: {manifest.damage}")
        if not repair:
            return report
        data, problem = parse(store.root / PREVIOUS)
        if problem is None:
            report.repaired.append(f"{manifest.path.name}: restored from {PREVIOUS}")
        else:
            data = {"version": VERSION, "datasets": {}}
            report.repaired.append(f"{manifest.path.name}: started afresh ({PREVIOUS} {problem}); "
                                   "sync again what the store should hold")
        manifest.replace_data(data)
        manifest.save()
    damaged: dict[tuple[DatasetId, str], list[str]] = {}
    values: dict[DatasetId, dict[str, Any]] = {}
    for ds, d in manifest.datasets():
        values[ds] = d.get("values", {})
        for rel, rec in sorted(d.get("files", {}).items()):
            if "hash" not in rec:
                continue  # staged, never recorded as held
            report.checked += 1
            problem = check_file(store.root / rel, rec)
            if problem is not None:
                report.problems.append(f"{rel}: {problem}")
                sym, _ = _io.where(rel)
                damaged.setdefault((ds, sym or NO_SYMBOL), []).append(rel)
    if repair and damaged:
        for (ds, sym), rels in damaged.items():
            _refetch(store, ds, sym, rels, values[ds], today, progress, report)
    return report


def _refetch(store: Store, ds: DatasetId, sym: str, rels: list[str], params: dict[str, Any],
             today: dt.date | None, progress: bool | None, report: VerifyReport) -> None:
    """Remove ``rels`` (damaged files of one symbol), forget its coverage, fetch it again."""
    manifest = store._manifest
    held = manifest.intervals(ds, sym)
    ranges = merge([*held["final"], *held["open"]])
    for rel in rels:
        (store.root / rel).unlink(missing_ok=True)
        manifest.drop_file(ds, rel)
    manifest.drop_symbol(ds, sym)
    manifest.save()
    symbols = None if sym == NO_SYMBOL else sym
    minute = _io.by_year(ds)
    for lo, hi in ([(None, None)] if minute else ranges):
        try:
            args = store._check_sync(ds.endpoint, symbols, lo, hi, ds.timeframe, today, params)
            store._run_sync(*args, progress=progress, strict=True)
        except SyncError as exc:
            report.failures += [str(f) for f in exc.report.failures]
            continue
        span = "the service's latest 30 days" if minute else f"{lo}..{hi}"
        report.repaired += [f"{rel}: fetched again ({span})" for rel in rels]
