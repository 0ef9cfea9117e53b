"""The HTTP cache: requests-cache's sqlite backend, partitioned by credential, private on disk.

* Every cache key starts with a keyed hash (HMAC-SHA256, with a random secret kept next to the
  cache file) of the request's credential (its kind and value: an API key, a bearer token or
  an SDK token, :mod:`marketframe._http.credential`), so a stored answer only ever goes back to the
  credential that fetched it: a basic key never gets an advanced key's snapshot, a bearer token
  never gets an API key's answer, a wrong credential never gets anything. The credential
  itself is never stored (its header is also redacted from the stored request).
* Only 200 answers are stored: 401/403/429 and errors are never cached.
* The cache file, its sqlite side files and the secret are 0600; the default cache directory
  (and any directory created for a cache) is 0700.
"""

from __future__ import annotations

import datetime as dt
import hmac
import os
import secrets
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import requests

from marketframe import calendar
from marketframe._time import TAIPEI
from marketframe.endpoints import FRESHNESS, MINUTE_TIMEFRAMES, Endpoint
from marketframe.exceptions import InvalidParams

KEY_HEADER = "X-API-KEY"
#: every header that can carry a credential (:data:`marketframe._http.credential.HEADERS`)
CREDENTIAL_HEADERS = (KEY_HEADER, "Authorization", "X-SDK-TOKEN")
_SECRET_SUFFIX = ".secret"


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/marketframe/http_cache.sqlite`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "marketframe" / "http_cache.sqlite"


def _private_dir(path: Path, *, ours: bool) -> None:
    """Create ``path`` as 0700; an existing directory is tightened only when it is ours (the
    default cache directory), never a directory the user chose for other files too."""
    if not path.exists():
        path.mkdir(parents=True, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)  # mkdir's mode is reduced by the umask
    elif ours:
        os.chmod(path, 0o700)


def _private_file(path: Path) -> None:
    """Create ``path`` (if missing) readable by the user only; tighten it if it exists."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


def _new_secret(file: Path, *, replace: bool) -> None:
    """Write 32 random bytes to a private temporary file, then move it into place: linked
    (the first process wins) or, for a damaged secret, replacing it."""
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".secret-")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(32))
        if replace:
            os.replace(tmp, file)
        else:
            os.link(tmp, file)
    except FileExistsError:
        pass  # another process made it first: everyone reads that one
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _secret(path: Path) -> bytes:
    """The cache's HMAC secret: 32 random bytes in ``<cache>.secret`` (0600), made once.
    Concurrent processes never read a partial secret; a damaged one is replaced (the entries
    it keyed are then simply never found again)."""
    file = path.with_name(path.name + _SECRET_SUFFIX)
    if not file.exists():
        _new_secret(file, replace=False)
    os.chmod(file, 0o600)
    data = file.read_bytes()
    if len(data) < 32:
        _new_secret(file, replace=True)
        data = file.read_bytes()
    return data


def _credential_of(headers: Any) -> str:
    """The credential a request carries, as one string: the API key alone (as before, so the
    entries of existing caches are still found), else each credential header as ``name\nvalue``
    (a key never has a line break, so no two credentials give the same string)."""
    parts = []
    for name in CREDENTIAL_HEADERS:
        value = headers.get(name)
        if value is None:
            continue
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        parts.append(value if name == KEY_HEADER else f"{name}\n{value}")
    return "\n".join(parts)


def credential_key_fn(secret: bytes) -> Callable[..., str]:
    """A requests-cache ``key_fn``: HMAC of the request's credential + the normal request key."""
    from requests_cache import create_key  # heavy (about 0.1 s): a cached client's only

    def key_fn(request: Any, **kwargs: Any) -> str:
        credential = _credential_of(request.headers)
        tag = hmac.new(secret, credential.encode(), "sha256").hexdigest()[:32]
        return f"{tag}-{create_key(request, **kwargs)}"

    return key_fn


def cached_session(cache: bool | Path) -> tuple[requests.Session, Path | None]:
    """A plain session (``cache=False``) or a private, per-credential cached one."""
    if cache is False:
        return requests.Session(), None
    import requests_cache  # heavy (about 0.1 s): loaded by the first cached client

    default = default_cache_path()
    path = default if cache is True else Path(cache).expanduser()
    _private_dir(path.parent, ours=path.parent == default.parent)
    _private_file(path)  # sqlite's -journal/-wal files copy the database file's mode
    session = requests_cache.CachedSession(
        str(path),
        backend="sqlite",
        expire_after=60,
        allowable_codes=(200,),
        allowable_methods=("GET",),
        # redacts the credential from the stored request headers (the cache key has its HMAC)
        ignored_parameters=[
            *CREDENTIAL_HEADERS,
            *(h.lower() for h in CREDENTIAL_HEADERS),
            "X-Api-Key",
            "X-Sdk-Token",
        ],
        match_headers=False,
        stale_if_error=False,
        key_fn=credential_key_fn(_secret(path)),
    )
    return session, path


#: ``expire_after`` of an answer that never changes
NEVER_EXPIRE = -1


def expire_after(ep: Endpoint, values: Mapping[str, Any], now: dt.datetime | None = None) -> int:
    """Cache lifetime (seconds, or -1 for never) of one request, from the endpoint's class."""
    now = now or dt.datetime.now(TAIPEI)
    fixed = FRESHNESS[ep.freshness]
    if fixed is not None:
        return fixed
    if ep.freshness == "historical":
        end = values.get(ep.date_range[1]) if ep.date_range else None
        minute = values.get("timeframe") in MINUTE_TIMEFRAMES
        if end is not None and not minute and end < now.date():
            return NEVER_EXPIRE  # a range of past days never changes
        return 60
    # reference data: until the next trading day's 08:00 in Taipei
    nxt = _next_trading_8am(now)
    return max(1, int((nxt - now).total_seconds()))


def _next_trading_8am(now: dt.datetime) -> dt.datetime:
    """08:00 (Taipei) of the first trading day whose 08:00 is after ``now``: across weekends
    and holidays by :mod:`marketframe.calendar`; outside its coverage, the next day's 08:00."""
    now = now.astimezone(TAIPEI)
    try:
        opens = calendar.next_open(now)
        nxt = dt.datetime.combine(opens.date(), dt.time(8), TAIPEI)
        if nxt <= now:  # 08:00-09:00 of a trading day: that day's 08:00 has passed
            nxt = dt.datetime.combine(calendar.next_open(opens).date(), dt.time(8), TAIPEI)
        return nxt
    except InvalidParams:
        nxt = (now + dt.timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
        return nxt - dt.timedelta(days=1) if now.hour < 8 else nxt
