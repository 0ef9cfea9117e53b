"""Where a store's files live: a local directory (:mod:`._local`), or an object store reached
through fsspec (:mod:`._object`); :func:`storage_for` picks one from ``Store(path)``.

Every path the store uses is relative to its root (``dataset=.../sym=2330/part-0.parquet``).
Both storages answer the calls of :class:`Storage`, and each decides what a writer holds
(:meth:`Storage.writer_lock`): one file lock on a local directory, a lease per symbol on an
object store, where writers of different symbols run at once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from marketframe.store import _io
from marketframe.store._storage._base import Storage, Writer, _PreconditionFailed, fsync_dir
from marketframe.store._storage._local import LOCK, LocalStorage, directory
from marketframe.store._storage._object import ObjectStorage

__all__ = [
    "LOCK",
    "LocalStorage",
    "ObjectStorage",
    "Writer",
    "_PreconditionFailed",
    "Storage",
    "fsync_dir",
    "storage_for",
]


def storage_for(
    path: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None,
    timeout: float | None = None,
    *,
    make: bool = True,
) -> LocalStorage | ObjectStorage:
    """The storage of ``Store(path)``: a URL with a scheme (other than ``file``) is an object
    store; anything else is a local directory (created when ``make``)."""
    if isinstance(path, str) and "://" in path and not path.startswith("file://"):
        return ObjectStorage(path, storage_options, timeout)
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://") :]
    return LocalStorage(directory(path) if make else Path(path))


def recheck(
    storage: Storage,
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
