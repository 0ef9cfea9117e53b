"""What the storages share at the bottom of their imports: the failure of a conditional write
(a file created only if absent, an object written only if unchanged), a durable rename,
whether a process runs and what a writer asks to hold."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from marketframe.exceptions import StoreCorrupted
from marketframe.store import _io
from marketframe.store._dataset import DatasetId


@dataclass(frozen=True)
class Writer:
    """What a writer asks a storage to hold (:meth:`Storage.writer_lock`): ``symbols`` of
    ``ds`` (None: the whole store), waiting up to ``timeout`` seconds, leases that last ``ttl``;
    ``writing`` names what will write (None: a check, which may run on a read-only store)."""

    ds: DatasetId | None
    symbols: Sequence[str] | None
    timeout: float
    ttl: float
    writing: str | None


class _PreconditionFailed(Exception):
    """A conditional write lost: the file or object exists, or changed since it was read."""


def fsync_dir(path: Path) -> None:
    """Make a rename inside ``path`` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (or exists and is another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Storage(Protocol):
    """What the store asks of the place its files live. Paths are relative to the root. The
    storages subclass it, sharing the calls it implements (:meth:`read_file`)."""

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
        """One recorded Parquet file, checked: its size and content hash against its record
        ``rec`` (or a pending version of it), without one every page's checksum (parsed from
        memory: on a local directory a third of ``pq.read_table(path)``'s cost for the small
        files of daily data, no dataset discovery). Damage raises :class:`StoreCorrupted`."""
        try:
            data = self.read(rel)
        except FileNotFoundError:
            raise StoreCorrupted(
                self.path(rel), "is missing (the store's log records it)", hint
            ) from None
        return _io.parse_checked(data, lambda: self.path(rel), rec, hint, columns)

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
