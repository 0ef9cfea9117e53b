"""What the storages share at the bottom of their imports: the failure of a conditional write
(a file created only if absent, an object written only if unchanged), a durable rename,
whether a process runs and what a writer asks to hold."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
