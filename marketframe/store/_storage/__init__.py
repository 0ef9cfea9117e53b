"""Where a store's files live: a local directory (:mod:`._local`), or an object store reached
through fsspec (:mod:`._object`); :func:`storage_for` picks one from ``Store(path)``.

Every path the store uses is relative to its root (``dataset=.../sym=2330/part-0.parquet``).
Both storages answer the same calls (read, stage, publish, unchanged, delete...); an object
store adds the conditional writes and listings its leases and manifest need.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from marketframe.store import _io
from marketframe.store._storage._local import LocalStorage
from marketframe.store._storage._object import ObjectStorage


def storage_for(
    path: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None,
    local_root: Callable[[Any], Path],
    timeout: float | None = None,
) -> LocalStorage | ObjectStorage:
    """The storage of ``Store(path)``: a URL with a scheme (other than ``file``) is an object
    store; anything else is a local directory."""
    if isinstance(path, str) and "://" in path and not path.startswith("file://"):
        return ObjectStorage(path, storage_options, timeout)
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://") :]
    return LocalStorage(local_root(path))


def recheck(
    storage: LocalStorage | ObjectStorage,
    rel: str,
    rec: Mapping[str, Any],
    listed: Mapping[str, Mapping[str, Any]] | None = None,
) -> Mapping[str, Any] | None:
    """A recorded file checked cheaply: its size and modification time (an object store's
    ETag: from ``listed``, one listing of its folder, when given) against the record, and
    hashed only when they differ. Returns the record to keep: ``rec`` itself, or for a file
    only touched (a store copied without keeping times) ``rec`` with its new stamp; None
    when the file is missing or its content is not the recorded one."""
    if listed is not None and isinstance(storage, ObjectStorage):
        same = storage.unchanged(rel, rec, listed.get(rel, {}))
    else:
        same = storage.unchanged(rel, rec)
    if same:
        return rec
    try:
        data = storage.read(rel) if "hash" in rec else None
    except FileNotFoundError:
        return None
    if data is None or not _io.matches(data, rec):
        return None
    if rec.get("size") != len(data):
        return rec  # the bytes of its pending replacement: kept as recorded
    return {**{k: v for k, v in rec.items() if k != "pending"}, **storage.restamp(rel)}
