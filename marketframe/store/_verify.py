"""``Store.verify``: find damaged, missing or replaced files and a damaged manifest; repair.

A check reads every file the manifest records and compares it with its record (size, content
hash, row count) and parses it (a file that matches its hash has the page checksums it was
written with: see :func:`._io.parse_checked`). A repair restores a damaged manifest from the
previous generation (``_manifest.prev.json``), removes each damaged file, forgets what its
symbol held and fetches that range again; minute data comes back only as far as the service
still has it (the latest 30 days).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from marketframe.endpoints import ENDPOINTS, merge
from marketframe.exceptions import StoreCorrupted, SyncError
from marketframe.store import _io, _upsert
from marketframe.store._dataset import NO_SYMBOL, DatasetId
from marketframe.store._log._document import MANIFEST, PREVIOUS, VERSION, parse_bytes
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
    manifest = parts.log
    manifest.reload()
    report = VerifyReport(str(parts.root))
    if manifest.damage is not None:
        report.problems.append(f"{MANIFEST}: {manifest.damage}")
        if not repair:
            return report
        storage = parts.storage
        try:
            data, problem = parse_bytes(storage.read(PREVIOUS))
        except FileNotFoundError:
            data, problem = {}, "cannot be read (No such file or directory)"
        old = _version_1(manifest.path) if isinstance(storage, LocalStorage) else None
        if old is not None and isinstance(storage, LocalStorage):
            data = migrate(storage, old)
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
            problem = check_file(parts.storage, rel, rec)
            if problem is not None:
                report.problems.append(f"{rel}: {problem}")
                sym, _ = _io.where(rel)
                damaged.setdefault((ds, sym or NO_SYMBOL), []).append(rel)
    if repair and damaged:
        for (ds, sym), rels in damaged.items():
            _refetch(parts, ds, sym, rels, values[ds], today, progress, report)
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
    manifest = parts.log
    held = manifest.intervals(ds, sym)
    ranges = merge([*held["final"], *held["open"]])
    # a local store is locked as a whole already; an object store's repair takes the lease
    # of the one symbol it rewrites
    with parts.locked(ds, [sym]) if parts.storage.remote else nullcontext():
        for rel in rels:
            parts.storage.delete(rel)
            manifest.drop_file(ds, rel)
        manifest.drop_symbol(ds, sym)
        manifest.save()
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
        span = "the service's latest 30 days" if minute else f"{lo}..{hi}"
        report.repaired += [f"{rel}: fetched again ({span})" for rel in rels]


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


def migrate(storage: LocalStorage, old: dict[str, Any]) -> dict[str, Any]:
    """A layout-1 store (``timeframe=``/``symbol=`` directories, dictionary columns, no file
    records) moved to the current layout: every file rewritten in its dataset's physical
    schema with page checksums, recorded, and the old directories removed."""
    from marketframe.endpoints import get

    root = storage.root
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
            target = (new_dir / rel).relative_to(root).as_posix()
            table = pq.read_table(f, partitioning=None)
            payload, rec, _ = _upsert.prepare(table, keys, {})
            tmp, stamp = storage.stage(target, payload)
            storage.publish(tmp, target)
            files[target] = {**rec.as_dict(), **stamp}
            if f != root / target:
                f.unlink()
        if ds.timeframe and old_dir.is_dir() and not any(old_dir.rglob("*.parquet")):
            shutil.rmtree(old_dir)
        data["datasets"][key] = {**d, "files": files}
    return data
