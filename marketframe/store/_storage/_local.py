"""A store directory on this machine (the default): each file is written as an fsynced
temporary file renamed into place (a reader sees the old file or the new one, never a torn
one; a process killed mid-write leaves only a hidden ``.tmp`` file that readers skip and the
next writer removes); its record holds its modification time for the cheap "unchanged"
check of a sync. Writers take one file lock, ``.lock`` in the root."""

from __future__ import annotations

import ctypes
import datetime as dt
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from marketframe.exceptions import InvalidParams, StoreLocked, StoreReadOnly
from marketframe.store import _io
from marketframe.store._storage._base import Storage, Writer, _PreconditionFailed, fsync_dir

#: the lock file of a local store, in its root
LOCK = ".lock"


#: bytes a write() call hands the kernel at most. Parts of a few megabytes written in one
#: call each cost two to three times the kernel time of the same bytes in 1 MiB calls
#: (measured on Linux 6.18, ext4 with large page-cache folios): a 3,000-symbol compute's
#: kernel time fell from 0.6-0.8 s to 0.2-0.35 s of its 2.5-3 s
_SLICE = 1 << 20


class LocalStorage(Storage):
    """A store directory on this machine (the default)."""

    remote = False

    def __init__(self, root: Path):
        self.root = root
        self.url = str(root)
        # the root as a string with its separator: the paths of the calls a compute makes
        # for every file (read, stage, rewrite, settle, unchanged) are joined as strings,
        # a third of the Python time a symbol costs when they were joined as Path objects
        self._top = os.path.join(self.url, "")

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> bytes:
        with open(self._top + rel, "rb") as f:
            return f.read()

    def stage(
        self, rel: str, data: bytes | memoryview, *, durable: bool = True
    ) -> tuple[Any, dict[str, Any]]:
        """Write ``data`` to a hidden, fsynced temporary file beside ``rel``; returns it and
        the stamp its record keeps (the modification time, kept by the rename).
        ``durable=False``: not fsynced; :meth:`settle` makes it durable and puts it in place."""
        folder, _, name = (self._top + rel).rpartition("/")
        tmp = f"{folder}/{_hidden(name)}"
        try:
            f = open(tmp, "wb")
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            f = open(tmp, "wb")
        with f:
            view = memoryview(data)
            for at in range(0, len(view), _SLICE):
                f.write(view[at : at + _SLICE])
            f.flush()  # the time of the last write, not of the close
            if durable:
                os.fsync(f.fileno())
            mtime = os.fstat(f.fileno()).st_mtime_ns
        return Path(tmp), {"mtime_ns": mtime}

    def publish(self, staged: Any, rel: str) -> None:
        """Rename a staged file over ``rel`` and fsync the directory: a reader sees the old
        file or the new one, and a power cut loses neither."""
        path = self.root / rel
        os.replace(staged, path)
        fsync_dir(path.parent)

    def rewrite(self, rel: str, data: bytes, *, durable: bool = True) -> dict[str, Any]:
        """Write ``data`` over ``rel`` in place and make it durable. Not atomic: only for a
        file nothing refers to while it is written (a derived state's spare slot, see
        :mod:`marketframe.store._compute._statefile`). No new file, no rename, nothing
        deleted: a filesystem that skips recently freed inodes when it makes a file (ext4
        without a journal) scans past every file a run deleted, on every file it creates.
        Not truncated either: at the same size (states are padded to whole pages) only the
        data is flushed (``fdatasync``), no inode, and no block is freed and allocated again
        (0.17 -> 0.1 ms of CPU, 0.4 -> 0.2 ms of wall time for a 40 KB state here).
        ``durable=False``: nothing flushed; :meth:`settle` makes it durable."""
        path = self._top + rel
        try:
            f, created = open(path, "r+b"), False  # not truncated
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            f, created = open(path, "w+b"), True
        with f:
            same = os.fstat(f.fileno()).st_size == len(data)
            f.write(data)
            if not same:
                f.truncate()  # at the end of the new bytes
            f.flush()
            if durable:
                (_datasync if same else os.fsync)(f.fileno())
            mtime = os.fstat(f.fileno()).st_mtime_ns
        if created and durable:
            fsync_dir(Path(path).parent)
        return {"mtime_ns": mtime}

    def settle(self, staged: Sequence[tuple[str, str]], written: Sequence[str]) -> None:
        """The group commit of files written without a flush: ``staged`` (pairs of the
        temporary file :meth:`stage` made with ``durable=False``, relative to the root, and
        where it goes) and ``written`` (files :meth:`rewrite` wrote with ``durable=False``)
        made durable, then the staged ones renamed into place, durably. Where the system can
        flush one filesystem at once (Linux ``syncfs``), two calls do it for any number of
        files, before and after the renames; elsewhere each file and then each directory is
        fsynced. A reader never sees a file before it is whole and durable."""
        if not staged and not written:
            return
        whole = _syncfs(self.root)
        if not whole:
            for rel in [s for s, _ in staged] + list(written):
                fd = os.open(self._top + rel, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        for tmp, rel in staged:
            os.replace(self._top + tmp, self._top + rel)
        # the renames, and the directories of new files
        if not (whole and _syncfs(self.root)):
            self.sync_dirs([rel for _, rel in staged] + list(written))

    def discard(self, staged: Any) -> None:
        staged.unlink(missing_ok=True)

    def unchanged(self, rel: str, rec: Mapping[str, Any]) -> bool:
        """The cheap check of sync: the file is there with a recorded size and modification
        time (a restored, copied or rewritten file has another; a read checks the hash)."""
        try:
            st = os.stat(self._top + rel)
        except FileNotFoundError:
            return False
        return any(
            v.get("size") == st.st_size and v.get("mtime_ns") == st.st_mtime_ns
            for v in _io.accepted(rec)
        )

    def restamp(self, rel: str) -> dict[str, Any]:
        return {"mtime_ns": (self.root / rel).stat().st_mtime_ns}

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()

    def stat(self, rel: str) -> tuple[int, dt.datetime] | None:
        """The file's size and when it was last written, linked or renamed (the later of
        its modification and change times: a version kept by a link keeps its old
        modification time), or None."""
        try:
            st = (self.root / rel).stat()
        except FileNotFoundError:
            return None
        when = dt.datetime.fromtimestamp(max(st.st_mtime, st.st_ctime), dt.UTC)
        return st.st_size, when

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def clean_temporary(self) -> int:
        """Remove temporary files left by a killed writer (call under the store lock)."""
        n = 0
        for p in self.root.rglob(".*.tmp"):
            p.unlink(missing_ok=True)
            n += 1
        return n

    def is_empty(self) -> bool:
        """Nothing in the directory, or no directory yet (made by the first write)."""
        try:
            return not any(self.root.iterdir())
        except FileNotFoundError:
            return True

    # -- the log's calls: files created once, listings, versions kept -----------------------

    def create(self, rel: str, data: bytes) -> None:
        """Write ``rel`` durably if it does not exist, else :class:`_PreconditionFailed`. The
        bytes are staged and fsynced first, then linked into place (a link fails if the
        name exists): the file appears whole or not at all, whatever kills the writer."""
        path = self.root / rel
        tmp, _ = self.stage(rel, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise _PreconditionFailed(rel) from None
        finally:
            tmp.unlink(missing_ok=True)
        fsync_dir(path.parent)

    def replace(self, rel: str, data: bytes) -> None:
        """Write ``rel`` atomically, whether or not it exists."""
        tmp, _ = self.stage(rel, data)
        self.publish(tmp, rel)

    def names(self, folder: str) -> list[str]:
        """The names of the files directly in ``folder`` (none if it does not exist)."""
        try:
            with os.scandir(self.root / folder) as it:
                return [e.name for e in it if e.is_file()]
        except FileNotFoundError:
            return []

    def files(self, folder: str) -> list[str]:
        """Relative paths of every file under ``folder``, recursively."""
        top = os.path.join(self.root, folder)
        return [
            f"{folder}{d[len(top) :]}/{name}".replace(os.sep, "/")
            for d, _, names in os.walk(top)  # a tenth of Path.rglob's cost per directory
            for name in names
        ]

    def keep(self, rel: str, to: str) -> bool:
        """Keep ``rel``'s current bytes at ``to`` as well (a hard link: no copy) before
        ``rel`` is replaced; False if ``rel`` does not exist. An existing ``to`` (the same
        content kept before: a version is named by its hash) is kept if it still holds
        the bytes its name says; one damaged since is replaced by ``rel``'s bytes. Bit rot
        passes the cheap check of the file in place, so its damaged bytes can be kept;
        the file written again as it was, then replaced, must not leave that damaged copy
        the version's only one (a snapshot pinning it would become unreadable).
        Durable once :meth:`sync_dirs` of ``to`` returns (one directory fsync for many)."""
        if not self._place(os.link, rel, to):
            return False
        src, dst = self.root / rel, self.root / to
        if os.path.samefile(src, dst):
            return True
        name = to.rsplit("/", 1)[-1]
        data = self.read(to)
        if _io.matches(data, {"size": len(data), "hash": name}):
            return True
        tmp = dst.with_name(_hidden(dst.name))
        os.link(src, tmp)
        os.replace(tmp, dst)
        return True

    def move(self, rel: str, to: str) -> bool:
        """Move ``rel`` to ``to`` (a rename); False if ``rel`` does not exist. Durable once
        :meth:`sync_dirs` of both returns."""
        return self._place(os.replace, rel, to)

    def _place(self, how: Callable[[Path, Path], None], rel: str, to: str) -> bool:
        dst = self.root / to
        try:
            how(self.root / rel, dst)
        except FileNotFoundError:
            if not dst.parent.is_dir() and (self.root / rel).exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                return self._place(how, rel, to)
            return False
        except FileExistsError:  # a link to a name already kept
            return True
        return True

    def sync_dirs(self, rels: Sequence[str]) -> None:
        """Make the renames and deletions of these files' directories durable, once each."""
        for d in sorted({(self.root / r).parent for r in rels}):
            fsync_dir(d)

    # -- writers ----------------------------------------------------------------------------

    def writer_lock(self, writer: Writer) -> AbstractContextManager[None]:
        """The lock a writer of this store holds: one file lock for the whole directory,
        whatever it writes (its dataset, symbols and ``ttl`` are the object store's). The
        first writer of a new store creates its directory."""
        if writer.writing is not None and not self.root.is_dir():
            made(self.root)
        return locked(self.root / LOCK, writer.timeout, writer.writing)


@contextmanager
def locked(path: Path, timeout: float, writing: str | None = None) -> Iterator[None]:
    """The store's inter-process lock; :class:`StoreLocked` when ``timeout`` runs out. On a
    read-only directory the lock file cannot be made: what would write (``writing``) is
    refused with :class:`StoreReadOnly`; a check runs without it (nothing can write there)."""
    import errno

    from filelock import FileLock, Timeout

    lock = FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise StoreLocked(path.parent, timeout) from None
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        if writing is not None:
            raise StoreReadOnly(path.parent, writing, exc.strerror or "not writable") from None
        yield
        return
    try:
        yield
    finally:
        lock.release()


def directory(path: str | os.PathLike[str]) -> Path:
    """The store directory: ``~`` expanded, refused if it is not a directory or cannot
    become one. A missing directory is not created here but by the first write (the writer's
    lock), so a store opened and refused for bad arguments, or only read, leaves nothing."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidParams("Store", "path", f"has value {path!r}", "a directory path")
    if not os.fspath(path).strip():  # Path("") is the current directory: never a store by typo
        raise InvalidParams("Store", "path", "is empty", "a directory path")
    root = Path(path).expanduser()
    at = root
    while not at.exists() and at != at.parent:
        at = at.parent  # the nearest existing ancestor: it must be a directory
    if not at.is_dir():
        what = "is a file, not a directory" if at == root else f"is inside the file {str(at)!r}"
        raise InvalidParams(
            "Store", "path", f"{str(root)!r} {what}", "a directory path (new or holding a store)"
        )
    if at != root and not os.access(at, os.W_OK | os.X_OK):
        raise InvalidParams(
            "Store",
            "path",
            f"{str(root)!r} cannot be created: {str(at)!r} is not writable",
            "a writable directory path",
        )
    return root


def made(root: Path) -> None:
    """Create the store directory ``root`` (and its missing parents) for a first write."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParams(
            "Store",
            "path",
            f"{str(root)!r} cannot be created: {exc.strerror}",
            "a writable directory path",
        ) from None


def _hidden(name: str) -> str:
    """The hidden temporary name a writer stages ``name`` under (readers skip it)."""
    return f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"


# only the data (an overwrite at the same size needs no inode flushed); fsync where the
# platform has no fdatasync (macOS, Windows)
_datasync = getattr(os, "fdatasync", os.fsync)


def _libc_syncfs() -> Callable[[int], int] | None:
    """Linux's ``syncfs(fd)`` (every dirty page and inode of one filesystem flushed, in one
    call), or None where the C library has none."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
    return fn


_SYNCFS = _libc_syncfs() if os.name == "posix" else None


def _syncfs(root: Path) -> bool:
    """Flush the filesystem holding ``root`` whole; False where that cannot be done or
    fails (then each file is fsynced instead, and an error of those is raised: nothing is
    recorded after it)."""
    if _SYNCFS is None:
        return False
    fd = os.open(root, os.O_RDONLY)
    try:
        return _SYNCFS(fd) == 0
    finally:
        os.close(fd)
