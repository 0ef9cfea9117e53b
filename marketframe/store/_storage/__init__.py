"""Where a store's files live: a local directory (:mod:`._local`), or an object store reached
through fsspec (:mod:`._object`); :func:`storage_for` picks one from ``Store(path)``.

Every path the store uses is relative to its root (``dataset=.../sym=2330/part-0.parquet``).
Both storages answer the calls of :class:`Storage`, and each decides what a writer holds
(:meth:`Storage.writer_lock`): one file lock on a local directory, a lease per symbol on an
object store, where writers of different symbols run at once.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from marketframe.store import _io
from marketframe.store._storage._base import Writer, _PreconditionFailed, fsync_dir
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


class Storage(Protocol):
    """What the store asks of the place its files live. Paths are relative to the root."""

    url: str  #: the root as it may be shown (never a credential)
    remote: bool  #: an object store (a PUT replaces an object whole; no directories)

    def path(self, rel: str) -> Any:
        """Where ``rel`` is, as errors show it."""

    def read(self, rel: str) -> bytes:
        """The file's bytes (:class:`FileNotFoundError` if it is absent)."""

    def read_file(
        self,
        rel: str,
        rec: Mapping[str, Any] | None,
        hint: str = "",
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """A recorded Parquet file, checked against its record (``StoreCorrupted``)."""

    def stage(
        self, rel: str, data: bytes | memoryview, *, durable: bool = True
    ) -> tuple[Any, dict[str, Any]]:
        """Make ``data`` ready to replace ``rel``; the stamp its record keeps.
        ``durable=False``: not flushed yet (:meth:`settle`)."""

    def publish(self, staged: Any, rel: str) -> None:
        """Put a staged file in place, atomically."""

    def discard(self, staged: Any) -> None:
        """Forget a staged file that was not published."""

    def rewrite(self, rel: str, data: bytes, *, durable: bool = True) -> dict[str, Any]:
        """Write ``rel`` in place (a file nothing refers to meanwhile); its stamp.
        ``durable=False``: not flushed yet (:meth:`settle`)."""

    def settle(self, staged: Sequence[tuple[str, str]], written: Sequence[str]) -> None:
        """Make files written with ``durable=False`` durable, and put the staged ones
        (``(temporary file, path)`` pairs, relative to the root) in place, durably."""

    def unchanged(self, rel: str, rec: Mapping[str, Any]) -> bool:
        """The cheap check: the file is there as recorded (size, time or ETag)."""

    def restamp(self, rel: str) -> dict[str, Any]:
        """The stamp of the file as it is now."""

    def exists(self, rel: str) -> bool: ...

    def stat(self, rel: str) -> tuple[int, dt.datetime] | None:
        """The file's size and when it was last written, or None when absent."""

    def delete(self, rel: str) -> None:
        """Remove ``rel`` if it exists."""

    def clean_temporary(self) -> int:
        """Remove what a killed writer left half-written; how many."""

    def is_empty(self) -> bool: ...

    def create(self, rel: str, data: bytes) -> None:
        """Write ``rel`` whole if it does not exist, else :class:`_PreconditionFailed`."""

    def replace(self, rel: str, data: bytes) -> None:
        """Write ``rel`` whole, atomically, whether or not it exists."""

    def names(self, folder: str) -> list[str]:
        """The names of the files directly in ``folder``."""

    def files(self, folder: str) -> list[str]:
        """Relative paths of every file under ``folder``."""

    def keep(self, rel: str, to: str) -> bool:
        """Keep ``rel``'s bytes at ``to`` too (before ``rel`` is replaced)."""

    def move(self, rel: str, to: str) -> bool:
        """Move ``rel`` to ``to``."""

    def sync_dirs(self, rels: Sequence[str]) -> None:
        """Make renames and deletions of these files durable."""

    def writer_lock(self, writer: Writer) -> AbstractContextManager[Any]:
        """What ``writer`` holds while it writes."""


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
