"""A store on an object store reached through fsspec (``s3://``, ``gs://``, ``memory://``...).

An object PUT is atomic (a reader sees the old object or the new one), so a partition is
"staged" in memory and published by one PUT; the log records it as pending first, as on
disk. Objects have no modification time worth keeping, so a file's record holds the MD5 of its
bytes, which is the ETag S3 servers give a single-part upload: the cheap "unchanged" check of a
sync is one HEAD per file.

Conditional writes (``If-None-Match: *`` and ``If-Match: <etag>`` on PUT) back the leases and
the log's compare-and-swap on S3 (see :mod:`._lease`). Credentials are never held here:
fsspec/botocore read them from the standard AWS environment variables, profile or instance
role, or from ``storage_options`` passed by the caller, which are never shown (``url`` is the
bucket and prefix only).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from marketframe.exceptions import InvalidParams, require_extra
from marketframe.store import _io
from marketframe.store._storage._base import Storage, Writer, _PreconditionFailed
from marketframe.store._storage._lease import leased
from marketframe.store._storage._remote import (
    call,
    precondition,
    settings,
    shown_url,
)


def md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


S3FS_RETRIES = 2  # s3fs's retry loop around botocore's (its default: 5)


class ObjectStorage(Storage):
    """A store under ``url`` on an fsspec filesystem (S3 and S3-compatible servers first).

    Every operation on an object store has a deadline (``timeout`` seconds, retries
    included) and connect / read timeouts per attempt; a network failure or a deadline
    raises :class:`StoreUnavailable` naming the operation. A wait can always be interrupted
    (Ctrl-C): the calling thread never blocks for longer than a quarter second at a time.
    """

    remote = True

    def __init__(
        self,
        url: str,
        storage_options: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ):
        require_extra("fsspec", "Store")  # an object-store URL: the s3 extra
        import fsspec

        url, protocol, opts, self.timeout = settings(url, storage_options, timeout)
        self.url = shown_url(url)  # refined below; never holds credentials
        self.s3 = protocol in ("s3", "s3a")
        shown = self.url
        try:
            self.fs, base = fsspec.core.url_to_fs(url, **opts)
        except ImportError as exc:
            raise InvalidParams(
                "Store",
                "path",
                f"{shown!r} needs a filesystem package that is not installed ({exc.name or exc})",
                "pip install 'marketframe[s3]' (s3fs) for s3:// URLs",
            ) from None
        except (ValueError, TypeError) as exc:
            raise InvalidParams(
                "Store",
                "path",
                f"{shown!r} is not a usable filesystem URL ({type(exc).__name__})",
                "a directory, or an fsspec URL such as s3://bucket/prefix "
                "(storage_options for its settings)",
            ) from None
        if self.s3:
            self.fs.retries = S3FS_RETRIES  # s3fs's own retries, on top of botocore's
        self.base: str = base.rstrip("/")
        self.url = shown_url(f"{protocol}://{self.base}")
        self.guard: Callable[[], None] | None = None  # raises if this writer lost its leases
        self.leases: Any = None  # the Leases of the sync under way (object stores)
        self._mem_lock = threading.Lock()  # emulated conditional writes (not S3)
        if self.s3:
            bucket = self._bucket()
            try:  # not fs.exists: it answers False for every failure (no credentials too)
                self._do(
                    f"HEAD {protocol}://{bucket}", self.fs._call_s3, "head_bucket", Bucket=bucket
                )
                there = True
            except FileNotFoundError:
                there = False
            except PermissionError:
                there = True  # listing buckets may be refused where the prefix is allowed
            if not there:  # a typo must not become a new bucket
                raise InvalidParams(
                    "Store",
                    "path",
                    f"bucket {bucket!r} does not exist (or these credentials cannot see it)",
                    "an existing bucket; credentials from the AWS environment variables or profile",
                )
        else:
            self._do(f"MKDIR {self.url}", self.fs.makedirs, self.base, exist_ok=True)

    # -- every call: a deadline, typed errors ------------------------------------------------

    def _do(self, what: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """``fn(*args, **kw)`` within the store's deadline (``_deadline=`` another): see
        :func:`._remote.call`."""
        deadline = kw.pop("_deadline", None) or self.timeout
        return call(what, self.url, self.fs, deadline, fn, *args, **kw)

    def _op(self, verb: str, rel: str) -> str:
        return f"{verb} {self.path(rel)}"

    def key(self, rel: str) -> str:
        return f"{self.base}/{rel}"

    def path(self, rel: str) -> str:
        """The object's URL, as errors show it (never credentials)."""
        return f"{self.url}/{rel}"

    def _async(self, name: str) -> Callable[..., Any]:
        """The filesystem's coroutine method ``_name`` when it has one, else the plain one."""
        if getattr(self.fs, "async_impl", False) and hasattr(self.fs, f"_{name}"):
            return getattr(self.fs, f"_{name}")  # type: ignore[no-any-return]
        return getattr(self.fs, name)  # type: ignore[no-any-return]

    # -- plain objects ----------------------------------------------------------------------

    def read(self, rel: str) -> bytes:
        return bytes(self._do(self._op("GET", rel), self._async("cat_file"), self.key(rel)))

    def stage(
        self, rel: str, data: bytes | memoryview, *, durable: bool = True
    ) -> tuple[Any, dict[str, Any]]:
        data = bytes(data)  # held until the PUT: never a view of a buffer reused meanwhile
        return data, {"md5": md5(data)}

    def publish(self, staged: Any, rel: str) -> None:
        if self.guard is not None:
            self.guard()
        self._do(self._op("PUT", rel), self._async("pipe_file"), self.key(rel), staged)

    def rewrite(self, rel: str, data: bytes, *, durable: bool = True) -> dict[str, Any]:
        staged, stamp = self.stage(rel, data)  # a PUT replaces an object atomically
        self.publish(staged, rel)
        return stamp

    def settle(self, staged: Sequence[tuple[str, str]], written: Sequence[str]) -> None:
        """Nothing to do: an object is durable when its PUT returns, and writers of an object
        store publish their files themselves (a staged object is bytes in their memory)."""

    def discard(self, staged: Any) -> None:
        pass

    def info(self, rel: str) -> dict[str, Any] | None:
        try:
            return dict(self._do(self._op("HEAD", rel), self._async("info"), self.key(rel)))
        except FileNotFoundError:
            return None

    def unchanged(
        self, rel: str, rec: Mapping[str, Any], info: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether the object has a recorded size and ETag (``info``: what a listing said
        of it, else one HEAD)."""
        info = self.info(rel) if info is None else info
        if info is None:
            return False
        tag = str(info.get("ETag") or info.get("etag") or "").strip('"')
        return any(
            v.get("size") == info.get("size") and v.get("md5") == tag for v in _io.accepted(rec)
        )

    def restamp(self, rel: str) -> dict[str, Any]:
        return {"md5": md5(self.read(rel))}

    def exists(self, rel: str) -> bool:
        return self.info(rel) is not None

    def stat(self, rel: str) -> tuple[int, dt.datetime] | None:
        """The object's size and when it was written (a copy is a new write), or None."""
        info = self.info(rel)
        if info is None:
            return None
        when = info.get("LastModified") or info.get("last_modified") or info.get("mtime")
        if not isinstance(when, dt.datetime):
            when = dt.datetime.now(dt.UTC)  # unknown: taken as new, never removed by age
        return int(info.get("size", 0)), when

    def delete(self, rel: str) -> None:
        try:
            self._do(self._op("DELETE", rel), self._async("rm_file"), self.key(rel))
        except FileNotFoundError:
            pass

    def clean_temporary(self) -> int:
        return 0  # a PUT is atomic: a killed writer leaves no partial object

    def is_empty(self) -> bool:
        try:
            found = self._do(self._op("LIST", ""), self._async("ls"), self.base, detail=False)
        except FileNotFoundError:
            return True
        return not found

    # -- conditional writes (leases, the log) ------------------------------------------

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """The object and its version token (ETag), or None when absent."""
        if not self.s3:
            with self._mem_lock:
                try:
                    data = self.read(rel)
                except FileNotFoundError:
                    return None
                return data, md5(data)

        async def get() -> tuple[bytes, str]:
            resp = await self.fs._call_s3("get_object", Bucket=self._bucket(), Key=self._obj(rel))
            async with resp["Body"] as b:
                data = bytes(await b.read())
            return data, str(resp["ETag"]).strip('"')

        try:
            return self._do(self._op("GET", rel), get)  # type: ignore[no-any-return]
        except FileNotFoundError:
            return None

    def put_if(
        self, rel: str, data: bytes, token: str | None, deadline: float | None = None
    ) -> str:
        """Write ``data`` if the object is absent (``token`` None) or still has ``token``;
        returns the new token, raises :class:`_PreconditionFailed` when the condition fails.
        A reply lost on the way may turn into a failed condition on the retry (the write
        landed): callers that can tell their own write (leases: the owner id) check."""
        if not self.s3:  # emulated: atomic within one process only (memory://, tests)
            with self._mem_lock:
                try:
                    now = md5(self.read(rel))
                except FileNotFoundError:
                    now = None
                if now != token:
                    raise _PreconditionFailed(rel)
                self.fs.pipe_file(self.key(rel), data)
                return md5(data)
        cond = {"IfNoneMatch": "*"} if token is None else {"IfMatch": f'"{token}"'}
        try:
            resp = self._do(
                self._op("PUT", rel),
                self.fs._call_s3,
                "put_object",
                Bucket=self._bucket(),
                Key=self._obj(rel),
                Body=data,
                _deadline=deadline,
                **cond,
            )
        except (OSError, ValueError) as exc:
            if precondition(exc):
                raise _PreconditionFailed(rel) from None
            raise
        return str(resp.get("ETag", md5(data))).strip('"')

    def copy(self, src: str, dst: str) -> None:
        """A server-side copy (S3 CopyObject: no bytes through this machine)."""
        try:
            self._do(self._op("COPY", src), self._async("copy"), self.key(src), self.key(dst))
        except FileNotFoundError:
            pass

    # -- the log's calls: objects created once, listings, versions kept ---------------------

    def create(self, rel: str, data: bytes) -> None:
        """PUT ``rel`` only if it does not exist (``If-None-Match: *``), else
        :class:`_PreconditionFailed`. A reply lost after the PUT landed turns into a failed
        condition on the retry: callers tell their own object by its content."""
        self.put_if(rel, data, None)

    def replace(self, rel: str, data: bytes) -> None:
        """PUT ``rel`` whether or not it exists (a PUT replaces an object atomically)."""
        self._do(self._op("PUT", rel), self._async("pipe_file"), self.key(rel), data)

    def names(self, folder: str) -> list[str]:
        """The names of the objects directly in ``folder``."""
        return [p.rsplit("/", 1)[-1] for p in self.files(folder) if "/" not in p[len(folder) + 1 :]]

    def files(self, folder: str) -> list[str]:
        """Relative paths of the objects under ``folder``, recursively."""
        try:
            found = self._do(self._op("LIST", folder), self._async("find"), self.key(folder))
        except FileNotFoundError:
            return []
        n = len(self.base) + 1
        return [p[n:] for p in found]

    def keep(self, rel: str, to: str) -> bool:
        """Keep ``rel``'s current bytes at ``to`` as well before ``rel`` is replaced (a
        server-side copy); False if ``rel`` does not exist. ``to`` is named by its content,
        so copying over an existing one changes nothing."""
        try:
            self._do(self._op("COPY", rel), self._async("copy"), self.key(rel), self.key(to))
        except FileNotFoundError:
            return False
        return True

    def move(self, rel: str, to: str) -> bool:
        """Move ``rel`` to ``to`` (a copy, then a delete); False if ``rel`` does not exist."""
        if not self.keep(rel, to):
            return False
        self.delete(rel)
        return True

    def sync_dirs(self, rels: Sequence[str]) -> None:
        pass  # an object store has no directories to make durable

    # -- writers ----------------------------------------------------------------------------

    def writer_lock(self, writer: Writer) -> AbstractContextManager[Any]:
        """The leases a writer holds: one per symbol of its dataset (writers of different
        symbols run at once; see :mod:`._lease`); nothing for a check of the whole store."""
        if writer.ds is None or not writer.symbols:
            return nullcontext()
        return leased(self, writer.ds, writer.symbols, writer.timeout, writer.ttl)

    def stamps(self, rel: str) -> dict[str, dict[str, Any]]:
        """The objects under the folder ``rel`` (recursively) with their size and ETag: one
        listing where a HEAD per object would be a request each."""
        try:
            found = self._do(self._op("LIST", rel), self._async("find"), self.key(rel), detail=True)
        except FileNotFoundError:
            return {}
        n = len(self.base) + 1
        return {p[n:]: dict(v) for p, v in found.items()}

    def _bucket(self) -> str:
        return self.base.split("/", 1)[0]

    def _obj(self, rel: str) -> str:
        rest = self.base.split("/", 1)[1] if "/" in self.base else ""
        return f"{rest}/{rel}" if rest else rel
