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

from marketframe.exceptions import InvalidParams, StoreCorrupted, StoreUnavailable
from marketframe.store import _io
from marketframe.store._base import _PreconditionFailed


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


#: the default deadline of one object-store operation (one GET, PUT, HEAD or listing, its
#: retries included), in seconds: ``Store(timeout=...)`` or ``storage_options={"timeout": ...}``
DEFAULT_TIMEOUT = 60.0
#: connect and read timeouts of one HTTP attempt (botocore's defaults are 60 s each, with up
#: to 5 attempts: a silent endpoint held a read for ~7 minutes)
CONNECT_TIMEOUT, READ_TIMEOUT, ATTEMPTS = 5.0, 20.0, 3
S3FS_RETRIES = 2  # s3fs's retry loop around botocore's (its default: 5)


def shown_url(url: str) -> str:
    """``url`` as errors, reprs and logs show it: no ``user:password@``, no query."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url.split("?", 1)[0]
    rest = rest.split("?", 1)[0].split("#", 1)[0]
    netloc, slash, path = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    return f"{scheme}://{netloc}{slash}{path}"


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without inline ``user:password@``, and the user and password it held."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    if not sep or "@" not in netloc:
        return url, None, None
    userinfo, _, host = netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return f"{scheme}://{host}{slash}{path}", user or None, password or None


def _network_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the network or the store failing (not an answer the caller
    handles: a missing object, access refused, a failed condition)."""
    if isinstance(exc, FileNotFoundError | PermissionError) or _precondition(exc):
        return False
    if isinstance(exc, OSError | TimeoutError):  # ConnectionError, s3fs's translated 5xx
        return True
    names = {t.__name__ for t in type(exc).__mro__}
    return bool(
        names
        & {
            "BotoCoreError",  # EndpointConnectionError, ConnectionClosedError, ReadTimeout...
            "ClientError",  # aiohttp's base error (botocore's answers arrive as OSError)
            "FSTimeoutError",
            "IncompleteRead",
        }
    )


class ObjectStorage:
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
        import fsspec

        opts = dict(storage_options or {})
        self.url = shown_url(url)  # refined below; never holds credentials
        url, user, password = split_credentials(url)
        protocol = url.split("://", 1)[0]
        if user is not None or password is not None:
            import warnings

            from marketframe.exceptions import MarketframeWarning

            warnings.warn(
                f"{self.url}: the store URL holds credentials; they are used but never "
                "shown. Give them through the environment (AWS_ACCESS_KEY_ID / "
                "AWS_SECRET_ACCESS_KEY, AWS_PROFILE) or storage_options instead: a URL "
                "ends up in shell history, logs and notebooks",
                MarketframeWarning,
                stacklevel=4,
            )
            if protocol in ("s3", "s3a"):
                opts.setdefault("key", user)
                opts.setdefault("secret", password)
            else:
                opts.setdefault("username", user)
                opts.setdefault("password", password)
        self.timeout = float(opts.pop("timeout", timeout or DEFAULT_TIMEOUT))
        if not (self.timeout > 0 and self.timeout != float("inf")):
            raise InvalidParams(
                "Store", "timeout", f"has value {self.timeout!r}", "seconds > 0 (finite)"
            )
        self.s3 = protocol in ("s3", "s3a")
        if self.s3:
            # every HEAD must see the latest object (leases, manifest): no listing cache
            opts.setdefault("use_listings_cache", False)
            opts.setdefault("skip_instance_cache", True)
            config = dict(opts.get("config_kwargs") or {})
            config.setdefault("connect_timeout", min(CONNECT_TIMEOUT, self.timeout))
            config.setdefault("read_timeout", min(READ_TIMEOUT, self.timeout))
            config.setdefault("retries", {"max_attempts": ATTEMPTS, "mode": "standard"})
            opts["config_kwargs"] = config
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
        self.base = base.rstrip("/")
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
        """``fn(*args, **kw)`` within the deadline: a coroutine function of an async
        filesystem runs on its loop while this thread waits in short slices (Ctrl-C is
        seen at once); a network failure or the deadline raise :class:`StoreUnavailable`."""
        import asyncio
        import concurrent.futures
        import time

        deadline = kw.pop("_deadline", None) or self.timeout
        try:
            if not asyncio.iscoroutinefunction(fn):
                return fn(*args, **kw)
            fut = asyncio.run_coroutine_threadsafe(fn(*args, **kw), self.fs.loop)
            end = time.monotonic() + deadline
            try:
                while True:
                    left = end - time.monotonic()
                    if left <= 0:
                        fut.cancel()
                        raise StoreUnavailable(
                            what, f"no answer within {deadline:g} s (the store's timeout)"
                        )
                    try:
                        return fut.result(timeout=min(0.25, left))
                    except concurrent.futures.TimeoutError:
                        if fut.done():
                            raise
                        continue
            except BaseException:
                fut.cancel()
                raise
        except StoreUnavailable:
            raise
        except Exception as exc:
            if _no_credentials(exc):
                from marketframe.exceptions import ConfigurationError

                raise ConfigurationError(
                    f"{self.url}: no credentials for the object store were found",
                    hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), "
                    "or pass storage_options={'key': ..., 'secret': ...}",
                ) from None
            if _network_error(exc):
                raise StoreUnavailable(what, _describe(exc)) from None
            raise

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
        self._do(self._op("PUT", rel), self._async("pipe_file"), self.key(rel), staged)

    def discard(self, staged: Any) -> None:
        pass

    def info(self, rel: str) -> dict[str, Any] | None:
        try:
            return dict(self._do(self._op("HEAD", rel), self._async("info"), self.key(rel)))
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
            if _precondition(exc):
                raise _PreconditionFailed(rel) from None
            raise
        return str(resp.get("ETag", md5(data))).strip('"')

    def copy(self, src: str, dst: str) -> None:
        """A server-side copy (S3 CopyObject: no bytes through this machine)."""
        try:
            self._do(self._op("COPY", src), self._async("copy"), self.key(src), self.key(dst))
        except FileNotFoundError:
            pass

    def list(self, rel: str) -> list[str]:
        """Relative paths of the objects under the folder ``rel`` (recursively)."""
        try:
            found = self._do(self._op("LIST", rel), self._async("find"), self.key(rel))
        except FileNotFoundError:
            return []
        n = len(self.base) + 1
        return [p[n:] for p in found]

    def _bucket(self) -> str:
        return self.base.split("/", 1)[0]

    def _obj(self, rel: str) -> str:
        rest = self.base.split("/", 1)[1] if "/" in self.base else ""
        return f"{rest}/{rel}" if rest else rel


def _no_credentials(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _describe(exc: BaseException) -> str:
    """A network error in one line, never a credential (botocore messages hold URLs only)."""
    text = " ".join(str(exc).split()) or "no detail"
    return f"{type(exc).__name__}: {shown_url(text) if '://' in text else text}"[:300]


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
    timeout: float | None = None,
) -> LocalStorage | ObjectStorage:
    """The storage of ``Store(path)``: a URL with a scheme (other than ``file``) is an object
    store; anything else is a local directory."""
    if isinstance(path, str) and "://" in path and not path.startswith("file://"):
        return ObjectStorage(path, storage_options, timeout)
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://") :]
    return LocalStorage(local_root(path))
