"""Token file store and token sets.

One JSON file per platform holds the client registration and the current tokens. The file is
created with mode 0600 inside a 0700 directory, written atomically (temporary file, fsync,
``os.replace``) and guarded by an inter-process lock, so a notebook and a terminal refreshing
at the same moment cannot lose a rotated refresh token.

Location: ``$MARKETFRAME_ACADEMY_HOME`` if set, else ``$XDG_CONFIG_HOME/marketframe/academy``,
else ``~/.config/marketframe/academy``; the file name is a hash of the platform URL.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from marketframe.academy._http import log
from marketframe.exceptions import TokenStoreError, hold_secret

__all__ = ["HOME_ENV", "TokenSet", "TokenStore", "default_home"]


HOME_ENV = "MARKETFRAME_ACADEMY_HOME"
FILE_MODE = 0o600
DIR_MODE = 0o700
FORMAT_VERSION = 1
LOGIN_AGAIN = "`marketframe academy login` (or `marketframe.academy.login(url)`)"
T = TypeVar("T")


def _malformed(path: Path, what: str) -> TokenStoreError:
    return TokenStoreError(
        f"token file {path} is malformed ({what})",
        hint=f"delete it and log in again: {LOGIN_AGAIN}",
    )


def default_home() -> Path:
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "marketframe" / "academy"


@dataclass(frozen=True)
class TokenSet:
    """Tokens from one token response. Secrets are never shown by ``repr``."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    id_token: str | None = field(default=None, repr=False)
    scope: str = ""
    resource: str | None = None
    obtained_at: float = 0.0
    #: what the login asked for; a resource-bound token's ``scope`` holds only the API scopes
    requested_scope: str = ""

    def __post_init__(self) -> None:
        hold_secret(self.access_token, self.refresh_token, self.id_token)

    @property
    def scopes(self) -> frozenset[str]:
        return frozenset(self.scope.split())

    def expires_in(self, now: float | None = None) -> float | None:
        if self.expires_at is None:
            return None
        return self.expires_at - (time.time() if now is None else now)

    def expiring(self, skew: float, now: float | None = None) -> bool:
        """Whether the access token is expired or will be within ``skew`` seconds."""
        left = self.expires_in(now)
        return left is not None and left <= skew

    @classmethod
    def from_response(
        cls,
        body: Mapping[str, Any],
        *,
        resource: str | None,
        requested_scope: str = "",
        previous: TokenSet | None = None,
        now: float | None = None,
    ) -> TokenSet:
        """Build from a token endpoint response.

        A refresh response may omit ``refresh_token`` (keep the old one, RFC 6749 section 6)
        and ``scope`` (it is then the requested one, section 5.1).
        """
        now = time.time() if now is None else now
        access = body.get("access_token")
        if not isinstance(access, str) or not access:
            raise TokenStoreError(
                "the token response has no access_token",
                hint="the platform answered oddly; try logging in again",
            )
        expires_at: float | None = None
        if body.get("expires_at") is not None:
            expires_at = float(body["expires_at"])
        elif body.get("expires_in") is not None:
            expires_at = now + float(body["expires_in"])
        refresh = body.get("refresh_token") or (previous.refresh_token if previous else None)
        scope = body.get("scope")
        if not isinstance(scope, str):
            scope = requested_scope or (previous.scope if previous else "")
        id_token = body.get("id_token") or (previous.id_token if previous else None)
        requested = requested_scope or (previous.requested_scope if previous else "")
        return cls(
            access_token=access,
            token_type=str(body.get("token_type") or "Bearer"),
            expires_at=expires_at,
            refresh_token=refresh,
            id_token=id_token,
            scope=scope,
            resource=resource,
            obtained_at=now,
            requested_scope=requested,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TokenSet:
        """From the token file; a missing or mistyped field raises ``KeyError``/``TypeError``."""
        access = data["access_token"]
        if not isinstance(access, str) or not access:
            raise TypeError("access_token must be a non-empty string")
        for name in ("refresh_token", "id_token", "resource"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise TypeError(f"{name} must be a string")
        expires_at = data.get("expires_at")
        return cls(
            access_token=access,
            token_type=str(data.get("token_type") or "Bearer"),
            expires_at=None if expires_at is None else _number(expires_at, "expires_at"),
            refresh_token=data.get("refresh_token"),
            id_token=data.get("id_token"),
            scope=str(data.get("scope") or ""),
            resource=data.get("resource"),
            obtained_at=_number(data.get("obtained_at") or 0.0, "obtained_at"),
            requested_scope=str(data.get("requested_scope") or ""),
        )


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number")
    return float(value)


class TokenStore:
    """The private JSON file of one platform: ``{"registration": ..., "tokens": ...}``."""

    def __init__(self, platform_url: str, home: str | os.PathLike[str] | None = None) -> None:
        self.platform_url = platform_url
        self.home = Path(home).expanduser() if home is not None else default_home()
        digest = hashlib.sha256(platform_url.encode()).hexdigest()[:16]
        self.path = self.home / f"{digest}.json"
        self._lock = FileLock(str(self.path) + ".lock", timeout=30)

    def __repr__(self) -> str:
        return f"TokenStore({str(self.path)!r})"

    # --- file plumbing ----------------------------------------------------------------------

    def _ensure_home(self) -> None:
        """Create the directory 0700, or check an existing one is private enough.

        A directory others may write to (group or world writable) is refused: whoever can
        write there can replace the token file. One that others may only read is tightened
        to 0700 with a warning. A directory of another user is refused.
        """
        try:
            self.home.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            st = self.home.stat()
        except OSError as exc:
            raise TokenStoreError(f"cannot create {self.home}: {exc.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise TokenStoreError(f"{self.home} is not a directory")
        if st.st_uid != os.geteuid():
            raise TokenStoreError(
                f"{self.home} belongs to another user; refusing to keep tokens there"
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o022:
            raise TokenStoreError(
                f"{self.home} is writable by others (mode {mode:04o}); refusing to keep "
                "tokens there",
                hint=f"restrict it (`chmod 700 {self.home}`) or point "
                f"{HOME_ENV} (or --home) to a private directory",
            )
        if mode & 0o077:
            log.warning(
                "token directory %s was readable by others; restricting it to 0700", self.home
            )
            try:
                os.chmod(self.home, DIR_MODE)
            except OSError as exc:
                raise TokenStoreError(f"cannot restrict {self.home}: {exc.strerror}") from None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the inter-process lock (reentrant within a thread)."""
        self._ensure_home()
        with self._lock:
            yield

    def read(self) -> dict[str, Any]:
        """The file's content (``{}`` when there is none).

        The file is opened without following a symlink and must belong to this user; a file
        others could read is restricted to 0600 through the open descriptor.
        """
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise TokenStoreError(
                    f"token file {self.path} is a symbolic link; refusing to follow it",
                    hint=f"remove the link and log in again: {LOGIN_AGAIN}",
                ) from None
            raise TokenStoreError(
                f"cannot read token file {self.path}: {exc.strerror}",
                hint=f"check its owner and permissions, or remove it and log in again: "
                f"{LOGIN_AGAIN}",
            ) from None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                raise TokenStoreError(
                    f"token file {self.path} is not a regular file of this user; refusing it",
                    hint=f"remove it and log in again: {LOGIN_AGAIN}",
                )
            if stat.S_IMODE(st.st_mode) & 0o077:
                log.warning(
                    "token file %s was readable by others; restricting it to 0600", self.path
                )
                os.fchmod(fd, FILE_MODE)
            try:
                data = json.loads(fh.read().decode("utf-8"))
            except (OSError, ValueError) as exc:
                raise _malformed(self.path, type(exc).__name__) from None
        if not isinstance(data, dict):
            raise _malformed(self.path, "not a JSON object")
        return data

    def write(self, data: Mapping[str, Any]) -> None:
        self._ensure_home()
        payload = dict(data)
        payload["version"] = FORMAT_VERSION
        payload["platform_url"] = self.platform_url
        text = json.dumps(payload, indent=2, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.home)
        try:
            os.fchmod(fd, FILE_MODE)  # mkstemp already uses 0600; be explicit
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise TokenStoreError(f"cannot write token file {self.path}: {exc.strerror}") from None

    def update(self, **changes: Any) -> dict[str, Any]:
        """Read, apply ``changes`` (a value of ``None`` removes the key), write; under the lock."""
        with self.locked():
            data = self.read()
            for key, value in changes.items():
                if value is None:
                    data.pop(key, None)
                else:
                    data[key] = value
            self.write(data)
            return data

    # --- typed access -----------------------------------------------------------------------

    def tokens(self) -> TokenSet | None:
        return self.section("tokens", TokenSet.from_dict)

    def section(self, name: str, parse: Callable[[Mapping[str, Any]], T]) -> T | None:
        """One part of the file (``tokens``, ``registration``) parsed by ``parse``; content
        that does not parse is a :class:`TokenStoreError` saying how to log in again."""
        raw = self.read().get(name)
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise _malformed(self.path, f"{name} is not an object")
        try:
            return parse(raw)
        except (KeyError, TypeError, ValueError) as exc:
            raise _malformed(self.path, f"{name}: {type(exc).__name__}") from None

    def save_tokens(self, tokens: TokenSet | None) -> None:
        self.update(tokens=tokens.to_dict() if tokens is not None else None)

    def delete(self) -> None:
        with self.locked():
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
