"""A store directory on this machine (the default): each file is written as an fsynced
temporary file renamed into place; its record holds its modification time for the cheap
"unchanged" check of a sync."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from marketframe.exceptions import InvalidParams
from marketframe.store import _io
from marketframe.store._storage._base import fsync_dir


class LocalStorage:
    """A store directory on this machine (the default)."""

    remote = False

    def __init__(self, root: Path):
        self.root = root
        self.url = str(root)

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def read_file(
        self,
        rel: str,
        rec: Mapping[str, Any] | None,
        hint: str = "",
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        return _io.read_file(self.root / rel, rec, repair_hint=hint, columns=columns)

    def stage(self, rel: str, data: bytes | memoryview) -> tuple[Any, dict[str, Any]]:
        tmp, mtime = _io.stage(data, self.root / rel)
        return tmp, {"mtime_ns": mtime}

    def publish(self, staged: Any, rel: str) -> None:
        _io.publish(staged, self.root / rel)

    def rewrite(self, rel: str, data: bytes) -> dict[str, Any]:
        """Write ``data`` over ``rel`` in place and make it durable. Not atomic: only for a
        file nothing refers to while it is written (a derived state's spare slot, see
        :mod:`._derive`). No new file, no rename, nothing deleted: a filesystem that skips
        recently freed inodes when it makes a file (ext4 without a journal) scans past
        every file a run deleted, on every file it creates. Not truncated either: at the
        same size (states are padded to whole pages) only the data is flushed
        (``fdatasync``), no inode, and no block is freed and allocated again (0.17 -> 0.1 ms
        of CPU, 0.4 -> 0.2 ms of wall time for a 40 KB state here)."""
        path = self.root / rel
        try:
            f, created = open(path, "r+b"), False  # not truncated
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            f, created = open(path, "w+b"), True
        with f:
            same = os.fstat(f.fileno()).st_size == len(data)
            f.write(data)
            if not same:
                f.truncate()  # at the end of the new bytes
            f.flush()
            (_datasync if same else os.fsync)(f.fileno())
            mtime = os.fstat(f.fileno()).st_mtime_ns
        if created:
            fsync_dir(path.parent)
        return {"mtime_ns": mtime}

    def discard(self, staged: Any) -> None:
        staged.unlink(missing_ok=True)

    def unchanged(self, rel: str, rec: Mapping[str, Any]) -> bool:
        return _io.unchanged(self.root / rel, rec)

    def restamp(self, rel: str) -> dict[str, Any]:
        return {"mtime_ns": (self.root / rel).stat().st_mtime_ns}

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def clean_temporary(self) -> int:
        return _io.clean_temporary(self.root)

    def is_empty(self) -> bool:
        return not any(self.root.iterdir())


def directory(path: str | os.PathLike[str]) -> Path:
    """The store directory: ``~`` expanded, created if missing, refused if not a directory."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidParams("Store", "path", f"has value {path!r}", "a directory path")
    if not os.fspath(path).strip():  # Path("") is the current directory: never a store by typo
        raise InvalidParams("Store", "path", "is empty", "a directory path")
    root = Path(path).expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InvalidParams(
            "Store",
            "path",
            f"{str(root)!r} is a file, not a directory",
            "a directory path (new or holding a store)",
        ) from None
    except OSError as exc:
        raise InvalidParams(
            "Store",
            "path",
            f"{str(root)!r} cannot be created: {exc.strerror}",
            "a writable directory path",
        ) from None
    if not root.is_dir():
        raise InvalidParams(
            "Store",
            "path",
            f"{str(root)!r} is not a directory",
            "a directory path (new or holding a store)",
        )
    return root


# only the data (an overwrite at the same size needs no inode flushed); fsync where the
# platform has no fdatasync (macOS, Windows)
_datasync = getattr(os, "fdatasync", os.fsync)
