"""Where a store's files live: a local directory, or an object store reached through fsspec.

Every path the store uses is relative to its root (``dataset=.../sym=2330/part-0.parquet``).
:class:`LocalStorage` keeps the local behaviour (fsynced temporary file renamed into place).
:class:`ObjectStorage` is any fsspec filesystem (``s3://``, ``gs://``, ``memory://``...):
an object PUT is atomic (a reader sees the old object or the new one), so a partition is
"staged" in memory and published by one PUT; the manifest records it as pending first, as on
disk. Objects have no modification time worth keeping, so a file's record holds the MD5 of its
bytes, which is the ETag S3 servers give a single-part upload: the cheap "unchanged" check of a
sync is one HEAD per file.

Conditional writes (``If-None-Match: *`` and ``If-Match: <etag>`` on PUT) back the leases and
the manifest's compare-and-swap on S3 (see :mod:`marketframe.store._lease`). Credentials are
never held here: fsspec/botocore read them from the standard AWS environment variables,
profile or instance role, or from ``storage_options`` passed by the caller, which are never
shown (``url`` is the bucket and prefix only).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from marketframe.exceptions import InvalidParams
from marketframe.store import _io
from marketframe.store._base import _PreconditionFailed
from marketframe.store._report import StoreCorrupted


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

    def read_file(self, rel: str, rec: Mapping[str, Any] | None, hint: str = "") -> pa.Table:
        return _io.read_file(self.root / rel, rec, repair_hint=hint)

    def stage(self, rel: str, data: bytes) -> tuple[Any, dict[str, Any]]:
        tmp, mtime = _io.stage(data, self.root / rel)
        return tmp, {"mtime_ns": mtime}

    def publish(self, staged: Any, rel: str) -> None:
        _io.publish(staged, self.root / rel)

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


def md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


class ObjectStorage:
    """A store under ``url`` on an fsspec filesystem (S3 and S3-compatible servers first)."""

    remote = True

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None):
        import fsspec

        opts = dict(storage_options or {})
        protocol = url.split("://", 1)[0]
        self.s3 = protocol in ("s3", "s3a")
        if self.s3:
            # every HEAD must see the latest object (leases, manifest): no listing cache
            opts.setdefault("use_listings_cache", False)
            opts.setdefault("skip_instance_cache", True)
        shown = url.split("?", 1)[0]
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
        self.base = base.rstrip("/")
        self.url = f"{protocol}://{self.base}"
        self.guard: Callable[[], None] | None = None  # raises if this writer lost its leases
        self._mem_lock = threading.Lock()  # emulated conditional writes (not S3)
        if self.s3:
            bucket = self._bucket()
            try:
                there = self.fs.exists(bucket)
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
            self.fs.makedirs(self.base, exist_ok=True)

    def key(self, rel: str) -> str:
        return f"{self.base}/{rel}"

    def path(self, rel: str) -> str:
        """The object's URL, as errors show it (never credentials)."""
        return f"{self.url}/{rel}"

    # -- plain objects ----------------------------------------------------------------------

    def read(self, rel: str) -> bytes:
        return bytes(self.fs.cat_file(self.key(rel)))

    def read_file(self, rel: str, rec: Mapping[str, Any] | None, hint: str = "") -> pa.Table:
        try:
            data = self.read(rel)
        except FileNotFoundError:
            raise StoreCorrupted(
                self.path(rel), "is missing (the manifest records it)", hint
            ) from None
        return _io.parse_checked(data, self.path(rel), rec, hint)

    def stage(self, rel: str, data: bytes) -> tuple[Any, dict[str, Any]]:
        return data, {"md5": md5(data)}

    def publish(self, staged: Any, rel: str) -> None:
        if self.guard is not None:
            self.guard()
        self.fs.pipe_file(self.key(rel), staged)

    def discard(self, staged: Any) -> None:
        pass

    def info(self, rel: str) -> dict[str, Any] | None:
        try:
            return dict(self.fs.info(self.key(rel)))
        except FileNotFoundError:
            return None

    def unchanged(self, rel: str, rec: Mapping[str, Any]) -> bool:
        info = self.info(rel)
        if info is None:
            return False
        tag = str(info.get("ETag") or info.get("etag") or "").strip('"')
        return any(
            v.get("size") == info.get("size") and v.get("md5") == tag for v in _io._versions(rec)
        )

    def restamp(self, rel: str) -> dict[str, Any]:
        return {"md5": md5(self.read(rel))}

    def exists(self, rel: str) -> bool:
        return self.info(rel) is not None

    def delete(self, rel: str) -> None:
        try:
            self.fs.rm_file(self.key(rel))
        except FileNotFoundError:
            pass

    def clean_temporary(self) -> int:
        return 0  # a PUT is atomic: a killed writer leaves no partial object

    def is_empty(self) -> bool:
        try:
            return not self.fs.ls(self.base, detail=False)
        except FileNotFoundError:
            return True

    # -- conditional writes (leases, the manifest) ------------------------------------------

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """The object and its version token (ETag), or None when absent."""
        if not self.s3:
            with self._mem_lock:
                try:
                    data = self.read(rel)
                except FileNotFoundError:
                    return None
                return data, md5(data)
        try:
            resp = self.fs.call_s3("get_object", Bucket=self._bucket(), Key=self._obj(rel))
        except FileNotFoundError:
            return None
        body = resp["Body"]
        data = _read_body(self.fs, body)
        return data, str(resp["ETag"]).strip('"')

    def put_if(self, rel: str, data: bytes, token: str | None) -> str:
        """Write ``data`` if the object is absent (``token`` None) or still has ``token``;
        returns the new token, raises :class:`_PreconditionFailed` when the condition fails."""
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
            resp = self.fs.call_s3(
                "put_object", Bucket=self._bucket(), Key=self._obj(rel), Body=data, **cond
            )
        except (OSError, ValueError) as exc:
            if _precondition(exc):
                raise _PreconditionFailed(rel) from None
            raise
        return str(resp.get("ETag", md5(data))).strip('"')

    def copy(self, src: str, dst: str) -> None:
        """A server-side copy (S3 CopyObject: no bytes through this machine)."""
        try:
            self.fs.copy(self.key(src), self.key(dst))
        except FileNotFoundError:
            pass

    def list(self, rel: str) -> list[str]:
        """Relative paths of the objects under the folder ``rel`` (recursively)."""
        try:
            found = self.fs.find(self.key(rel))
        except FileNotFoundError:
            return []
        n = len(self.base) + 1
        return [p[n:] for p in found]

    def _bucket(self) -> str:
        return self.base.split("/", 1)[0]

    def _obj(self, rel: str) -> str:
        rest = self.base.split("/", 1)[1] if "/" in self.base else ""
        return f"{rest}/{rel}" if rest else rel


def _read_body(fs: Any, body: Any) -> bytes:
    """Read an aiobotocore streaming body on fsspec's event loop."""
    from fsspec.asyn import sync

    async def read() -> bytes:
        async with body as b:
            return bytes(await b.read())

    return bytes(sync(fs.loop, read))


def _precondition(exc: BaseException) -> bool:
    """Whether ``exc`` (as s3fs translates it) is a failed If-Match / If-None-Match: 412, or
    409 ConditionalRequestConflict (two conditional writes at once)."""
    seen: BaseException | None = exc
    while seen is not None:
        text = f"{type(seen).__name__} {seen}"
        if any(
            s in text
            for s in (
                "_PreconditionFailed",
                "412",
                "ConditionalRequestConflict",
                "At least one of the pre-conditions",
            )
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def storage_for(
    path: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None,
    local_root: Callable[[Any], Path],
) -> LocalStorage | ObjectStorage:
    """The storage of ``Store(path)``: a URL with a scheme (other than ``file``) is an object
    store; anything else is a local directory."""
    if isinstance(path, str) and "://" in path and not path.startswith("file://"):
        return ObjectStorage(path, storage_options)
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://") :]
    return LocalStorage(local_root(path))
