"""What the storages share at the bottom of their imports: the failure of a conditional write
(a file created only if absent, an object written only if unchanged), a durable rename and
whether a process runs."""

from __future__ import annotations

import os
from pathlib import Path


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
