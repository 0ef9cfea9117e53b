"""Derived datasets: the files a run replaced, retired once the log no longer records them
(:func:`retire`), and the files a killed run left (written, never recorded), removed by the
next run before it starts (:func:`remove_strays`).

Finding them means listing a derived dataset's every directory (a symbol and year each: tens
of thousands in a large store) on every run, though a run is rarely killed. On a local store
a run that finishes leaves a marker, ``_clean``, in each derived dataset's directory (readers
skip ``_`` files); the next run removes it durably before any task writes, and lists the
dataset only when it is missing: after a killed run, or a store written before the marker.
An object store is always listed (its writers hold leases per symbol, not one lock).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from marketframe.store import _io
from marketframe.store._compute._statefile import SLOTS
from marketframe.store._dataset import DatasetId
from marketframe.store._log import Log
from marketframe.store._storage import Storage, fsync_dir

CLEAN = "_clean"


def remove_strays(storage: Any, log: Any, ids: Sequence[DatasetId]) -> int:
    """Files under the derived datasets the log does not record (a killed run's): gone.
    Call under the store's lock, before any task of the run writes."""
    n = 0
    for ds in ids:
        base = _io.dataset_rel(ds)
        if storage.remote:
            found = storage.files(base)
        else:
            top = os.path.join(storage.root, base)
            mark = os.path.join(top, CLEAN)
            if os.path.exists(mark):
                os.unlink(mark)
                fsync_dir(Path(top))  # gone for good before this run writes a file
                continue
            # os.walk: a tenth of Path.rglob's cost per directory
            found = [
                f"{base}{d[len(top) :]}/{name}".replace(os.sep, "/")
                for d, _, names in os.walk(top)
                for name in names
            ]
        keep = set(log.files(ds))
        for rel in found:
            if rel.rsplit("/", 1)[-1] in SLOTS:
                continue  # a state slot: the named one, or the spare a run rewrites in place
            if "/_state-" in rel:  # a state from before the slots: kept while named
                st = log.noted(ds, _io.where(rel)[0] or "", "state")
                if st and st[0] == rel:
                    continue
            if rel not in keep:
                storage.delete(rel)
                n += 1
    return n


def mark_clean(storage: Any, ids: Sequence[DatasetId]) -> None:
    """After a run that finished (its files recorded, the replaced ones deleted): the
    marker that spares the next run the listing. Not fsynced: lost, it costs one listing."""
    if storage.remote:
        return
    for ds in ids:
        top = _io.dataset_dir(storage.root, ds)
        if top.is_dir():
            (top / CLEAN).touch()


def retire(
    storage: Storage, log: Log, gone: Sequence[tuple[DatasetId, str, Mapping[str, Any] | None]]
) -> None:
    """Files a commit replaced, out of the dataset directories: a part moved under
    ``_versions/`` (an earlier generation or a snapshot may read it), anything else deleted.
    A file the commit records again (a part rewritten with the same content has the same
    name) is left where it is: only what no longer stands in the current generation moves."""
    moved: list[str] = []
    for ds, rel, rec in gone:
        if log.file(ds, rel) is not None:
            continue
        symbol = _io.where(rel)[0]
        state = log.noted(ds, symbol, "state") if symbol is not None else None
        if state and state[0] == rel:  # the state the symbol's entry names
            continue
        digest = None if rec is None else rec.get("hash")
        if digest is not None and rel.endswith(".parquet"):
            to = _io.version_path(str(digest), rel)
            if storage.move(rel, to):
                log.kept(str(digest), rel)
                moved += [rel, to]
        else:
            storage.delete(rel)
    storage.sync_dirs(moved)
