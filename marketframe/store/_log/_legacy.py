"""Stores written by earlier versions: one ``_manifest.json`` (layout 2, its previous
generation ``_manifest.prev.json``), or layout 1 (``timeframe=``/``symbol=`` directories).

A layout-2 store opens as it is: its manifest is read as the state at generation 0, and the
first commit upgrades it in place (the state written as the log's checkpoint 0, then the
manifest replaced by a stub that earlier versions refuse instead of writing beside the log).
A damaged manifest is restored by a repair from its previous generation; layout 1 is
migrated by a repair (every file rewritten and recorded).
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import orjson
import pyarrow.parquet as pq

from marketframe.store import _io, _upsert
from marketframe.store._dataset import DatasetId
from marketframe.store._log._document import Doc, check, fresh
from marketframe.store._storage import LocalStorage, Storage

MANIFEST = "_manifest.json"
PREVIOUS = "_manifest.prev.json"  # the generation before the last save of layout 2
#: what ``_manifest.json`` holds once the store is upgraded: layout 2 code reads version 3
#: and refuses the store ("written by another marketframe version") instead of writing it
STUB = {
    "version": 3,
    "datasets": {},
    "note": "this store keeps its state in _log/ (written by a newer marketframe)",
}


def parse(raw: bytes) -> tuple[Doc | None, str | None]:
    """A layout-2 manifest's bytes as a state and None; None and None for the stub of an
    upgraded store; or None and what is wrong with them."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"is damaged ({type(exc).__name__}: {exc})"
    if isinstance(data, dict) and data.get("version") == STUB["version"]:
        return None, None
    problem = check(data)
    if problem is not None:
        return None, problem
    if data.get("version") != 2:
        return None, (
            f"has layout version {data.get('version')!r}, not 2 or 3 (written by another "
            "marketframe version)"
        )
    data["version"] = fresh()["version"]
    data.setdefault("versions", {})
    return data, None


def read(storage: Storage) -> tuple[Doc | None, str | None]:
    """The layout-2 manifest of ``storage`` (see :func:`parse`); None, None when absent."""
    try:
        raw = storage.read(MANIFEST)
    except FileNotFoundError:
        return None, None
    return parse(raw)


def read_previous(storage: Storage) -> tuple[Doc | None, str | None]:
    """The previous generation of a layout-2 manifest, for a repair."""
    try:
        raw = storage.read(PREVIOUS)
    except FileNotFoundError:
        return None, "cannot be read (No such file or directory)"
    return parse(raw)


def retire(storage: Storage) -> None:
    """After the upgrade: the stub in place of the manifest, the previous generation gone."""
    storage.replace(MANIFEST, orjson.dumps(STUB, option=orjson.OPT_INDENT_2))
    storage.delete(PREVIOUS)


def version_1(storage: LocalStorage) -> dict[str, Any] | None:
    """The manifest of a local store if it is an intact one of layout 1."""
    try:
        data = json.loads(storage.read(MANIFEST).decode("utf-8"))
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
    data: dict[str, Any] = fresh()
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
