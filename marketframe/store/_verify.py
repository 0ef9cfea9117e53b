"""``Store.verify``: find damaged, missing or replaced files and a damaged manifest; repair.

A check reads every file the manifest records and compares it with its record (size, content
hash, row count) and parses it (a file that matches its hash has the page checksums it was
written with: see :func:`._io.parse_checked`). A repair restores a damaged manifest from the
previous generation (``_manifest.prev.json``), removes each damaged file, forgets what its
symbol held and fetches that range again; minute data comes back only as far as the service
still has it (the latest 30 days). A damaged part of a derived dataset is computed again
from its source (the dataset's recorded values name the source, the spec and the
adjustment), after the sources' own repairs. What cannot be repaired is a failure of the
report, never an exception.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from marketframe._windows import merge
from marketframe.endpoints import ENDPOINTS
from marketframe.exceptions import (
    MarketframeError,
    StoreCorrupted,
    StoreLocked,
    StoreReadOnly,
    SyncError,
)
from marketframe.store import _io, _upsert
from marketframe.store._log._document import (
    MANIFEST,
    NO_SYMBOL,
    PREVIOUS,
    VERSION,
    DatasetId,
    parse_bytes,
)
from marketframe.store._report import VerifyReport
from marketframe.store._sync._call import check_args, run_checked

if TYPE_CHECKING:
    from marketframe.store import Store


@contextmanager
def locked(path: Path, timeout: float, writing: str | None = None) -> Iterator[None]:
    """The store's inter-process lock; :class:`StoreLocked` when ``timeout`` runs out. On a
    read-only directory the lock file cannot be made: what would write (``writing``) is
    refused with :class:`StoreReadOnly`; a check runs without it (nothing can write there)."""
    import errno

    from filelock import FileLock, Timeout

    lock = FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise StoreLocked(path.parent, timeout) from None
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        if writing is not None:
            raise StoreReadOnly(path.parent, writing, exc.strerror or "not writable") from None
        yield
        return
    try:
        yield
    finally:
        lock.release()


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
    store: Store, repair: bool, *, today: dt.date | None, progress: bool | None
) -> VerifyReport:
    """Check (and with ``repair`` fix) the store; called under the store's lock."""
    manifest = store._manifest
    manifest.reload()
    report = VerifyReport(str(store.root))
    if manifest.damage is not None:
        report.problems.append(f"{MANIFEST}: {manifest.damage}")
        if not repair:
            return report
        storage = store._storage
        try:
            data, problem = parse_bytes(storage.read(PREVIOUS))
        except FileNotFoundError:
            data, problem = {}, "cannot be read (No such file or directory)"
        old = None if storage.remote else _version_1(manifest.path)
        if old is not None:
            data = migrate(store.root, old)
            report.repaired.append(
                f"{MANIFEST}: layout 1 migrated to {VERSION} "
                "(directories tf=/sym=, files rewritten and recorded)"
            )
        elif problem is None:
            report.repaired.append(f"{MANIFEST}: restored from {PREVIOUS}")
        else:
            data = {"version": VERSION, "datasets": {}}
            report.repaired.append(
                f"{MANIFEST}: started afresh ({PREVIOUS} {problem}); "
                "sync again what the store should hold"
            )
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
            problem = check_file(store._storage, rel, rec)
            if problem is not None:
                report.problems.append(f"{rel}: {problem}")
                sym, _ = _io.where(rel)
                damaged.setdefault((ds, sym or NO_SYMBOL), []).append(rel)
    if repair and damaged:
        derived = {k: v for k, v in damaged.items() if k[0].endpoint.startswith("derived.")}
        for (ds, sym), rels in damaged.items():  # the sources first: derived data reads them
            if (ds, sym) not in derived:
                _refetch(store, ds, sym, rels, values[ds], today, progress, report)
        for (ds, sym), rels in derived.items():
            _recompute(store, ds, sym, rels, values, report)
    return report


def _refetch(
    store: Store,
    ds: DatasetId,
    sym: str,
    rels: list[str],
    params: dict[str, Any],
    today: dt.date | None,
    progress: bool | None,
    report: VerifyReport,
) -> None:
    """Remove ``rels`` (damaged files of one symbol), forget its coverage, fetch it again."""
    if ds.endpoint not in ENDPOINTS:  # a store written by a later version
        report.failures += [f"{rel}: {ds.endpoint} is no endpoint of this version" for rel in rels]
        return
    manifest = store._manifest
    held = manifest.intervals(ds, sym)
    ranges = merge([*held["final"], *held["open"]])
    with store._locked(ds, [sym]) if store._storage.remote else nullcontext():
        for rel in rels:
            store._storage.delete(rel)
            manifest.drop_file(ds, rel)
        manifest.drop_symbol(ds, sym)
        manifest.save()
    symbols = None if sym == NO_SYMBOL else sym
    minute = _io.by_year(ds) and ENDPOINTS[ds.endpoint].minute_range != "checked"
    for lo, hi in [(None, None)] if minute else ranges:
        try:
            args = check_args(ds.endpoint, symbols, lo, hi, ds.timeframe, today, params)
            with store._locked(ds, [sym]) if store._storage.remote else nullcontext():
                run_checked(store, *args, progress=progress, strict=True)
        except SyncError as exc:
            report.failures += [str(f) for f in exc.report.failures]
            continue
        except MarketframeError as exc:  # the store locked, unreachable, refused...
            report.failures += [f"{rel}: not fetched again ({exc})" for rel in rels]
            continue
        span = "the service's latest 30 days" if minute else f"{lo}..{hi}"
        report.repaired += [f"{rel}: fetched again ({span})" for rel in rels]


def _recompute(
    store: Store,
    ds: DatasetId,
    sym: str,
    rels: list[str],
    values: dict[DatasetId, dict[str, Any]],
    report: VerifyReport,
) -> None:
    """Remove ``rels`` (damaged parts of a derived dataset's symbol) and forget its state,
    then compute the symbol again in full from its source, as the dataset's values record
    it (the source dataset, the spec, the adjustment)."""
    from marketframe.indicators.stateful import IndicatorSpec
    from marketframe.store import _compute

    own = values[ds]
    source = next((d for d in values if d.key == own.get("source")), None)
    try:
        spec = IndicatorSpec.from_json(own["spec"])
        adjust = own.get("adjust")
        same = source is not None and _compute.derived_id(source, spec, adjust) == ds
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
    remote = store._storage.remote
    manifest = store._manifest
    try:
        with store._locked(ds, [sym]) if remote else nullcontext():
            for rel in rels:
                store._storage.delete(rel)
                manifest.drop_file(ds, rel)
            manifest.note(ds, sym, "state", None)  # computed again from its first bar
            manifest.save()
        _compute.compute(
            store,
            source.endpoint,
            spec,
            [sym],
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


def _version_1(path: Path) -> dict[str, Any] | None:
    """The manifest at ``path`` if it is an intact one of layout 1."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    ok = (
        isinstance(data, dict)
        and data.get("version") == 1
        and isinstance(data.get("datasets"), dict)
    )
    return data if ok else None


def migrate(root: Path, old: dict[str, Any]) -> dict[str, Any]:
    """A layout-1 store (``timeframe=``/``symbol=`` directories, dictionary columns, no file
    records) moved to the current layout: every file rewritten in its dataset's physical
    schema with page checksums, recorded, and the old directories removed."""
    from marketframe.endpoints import get

    data: dict[str, Any] = {"version": VERSION, "datasets": {}}
    for key, d in old["datasets"].items():
        ds = DatasetId(d["endpoint"], d["params"], d.get("timeframe"))
        base = root / f"dataset={ds.endpoint}" / f"params={ds.params}"
        old_dir = base / f"timeframe={ds.timeframe}" if ds.timeframe else base
        new_dir = _io.dataset_dir(root, ds)
        keys = list(get(ds.endpoint).keys)
        files: dict[str, Any] = {}
        found = (
            sorted(old_dir.glob("symbol=*/**/part-0.parquet"))
            if ds.timeframe
            else [p for p in [old_dir / _io.PART] if p.exists()]
        )
        for f in found:
            rel = f.relative_to(old_dir).as_posix().replace("symbol=", f"{_io.SYM_KEY}=", 1)
            target = new_dir / rel
            table = pq.read_table(f, partitioning=None)
            payload, rec, _ = _upsert.prepare(table, keys, {})
            tmp, mtime = _io.stage(payload, target)
            _io.publish(tmp, target)
            files[target.relative_to(root).as_posix()] = {**rec.as_dict(), "mtime_ns": mtime}
            if f != target:
                f.unlink()
        if ds.timeframe and old_dir.is_dir() and not any(old_dir.rglob("*.parquet")):
            shutil.rmtree(old_dir)
        data["datasets"][key] = {**d, "files": files}
    return data
