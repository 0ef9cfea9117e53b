"""What an object store's URLs, settings and failures mean, below
:class:`~._object.ObjectStorage`: a URL as it may be shown (never ``user:password@``), the
filesystem settings of a URL and ``storage_options``, the credentials among those options
(kept apart from what may be shown or sent), and a failure told apart as the network,
missing credentials or a failed write condition (not an answer the caller handles).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from marketframe.exceptions import (
    ConfigurationError,
    InvalidParams,
    MarketframeWarning,
    StoreUnavailable,
)


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


#: the ``storage_options`` (and the keys of their nested dicts, as s3fs's ``client_kwargs``)
#: that are credentials: never in a compute task, a repr or a pickle
CREDENTIALS = frozenset(
    {
        "key",
        "secret",
        "token",
        "username",
        "password",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "account_key",
        "sas_token",
        "connection_string",
        "client_secret",
    }
)


def withhold_credentials(
    options: Mapping[str, Any] | None,
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``storage_options`` without their credentials, and the credentials alone (nested
    dicts kept as nested dicts): :func:`with_credentials` puts them back together."""
    if not options:
        return (dict(options) if options is not None else None), {}
    public: dict[str, Any] = {}
    secret: dict[str, Any] = {}
    for name, value in options.items():
        if name in CREDENTIALS:
            secret[name] = value
        elif isinstance(value, Mapping):
            inner_public, inner_secret = withhold_credentials(value)
            public[name] = inner_public
            if inner_secret:
                secret[name] = inner_secret
        else:
            public[name] = value
    return public, secret


def with_credentials(
    options: Mapping[str, Any] | None, secret: Mapping[str, Any]
) -> dict[str, Any] | None:
    """``options`` with the credentials ``secret`` (of :func:`withhold_credentials`) back."""
    if not secret:
        return dict(options) if options is not None else None
    out = dict(options or {})
    for name, value in secret.items():
        inner = out.get(name)
        out[name] = with_credentials(inner, value) if isinstance(value, Mapping) else value
    return out


def credential_names(secret: Mapping[str, Any], prefix: str = "") -> tuple[str, ...]:
    """The names of the credentials ``secret`` holds (``client_kwargs.aws_secret_access_key``),
    never their values."""
    names: list[str] = []
    for name, value in secret.items():
        if isinstance(value, Mapping):
            names += credential_names(value, f"{prefix}{name}.")
        else:
            names.append(prefix + name)
    return tuple(sorted(names))


def network_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the network or the store failing (not an answer the caller
    handles: a missing object, access refused, a failed condition)."""
    if isinstance(exc, FileNotFoundError | PermissionError) or precondition(exc):
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


def no_credentials(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def describe(exc: BaseException) -> str:
    """A network error in one line, never a credential (botocore messages hold URLs only)."""
    text = " ".join(str(exc).split()) or "no detail"
    return f"{type(exc).__name__}: {shown_url(text) if '://' in text else text}"[:300]


def precondition(exc: BaseException) -> bool:
    """Whether ``exc`` (as s3fs translates it) is a failed If-Match / If-None-Match: 412, or
    409 ConditionalRequestConflict (two conditional writes at once). Read from the server's
    answer (botocore's ``response``, kept as the translated error's cause) and its error
    codes, never from bare numbers in the text: a network error's message holds the URL,
    and a bucket, key or symbol may contain "412"."""
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == "_PreconditionFailed":
            return True
        answer = getattr(seen, "response", None)
        if isinstance(answer, dict):
            code = str((answer.get("Error") or {}).get("Code", ""))
            status = (answer.get("ResponseMetadata") or {}).get("HTTPStatusCode")
            if code in _CONDITION_CODES or status == 412:
                return True
        text = str(seen)
        if any(s in text for s in _CONDITION_CODES[:2]) or _CONDITION_TEXT in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


#: the error codes of a failed condition (and "412": botocore's code for a bodiless 412)
_CONDITION_CODES = ("PreconditionFailed", "ConditionalRequestConflict", "412")
_CONDITION_TEXT = "At least one of the pre-conditions"


#: the default deadline of one object-store operation (one GET, PUT, HEAD or listing, its
#: retries included), in seconds: ``Store(timeout=...)`` or ``storage_options={"timeout": ...}``
DEFAULT_TIMEOUT = 60.0
#: connect and read timeouts of one HTTP attempt (botocore's defaults are 60 s each, with up
#: to 5 attempts: a silent endpoint held a read for ~7 minutes)
CONNECT_TIMEOUT, READ_TIMEOUT, ATTEMPTS = 5.0, 20.0, 3


def settings(
    url: str, storage_options: Mapping[str, Any] | None, timeout: float | None
) -> tuple[str, str, dict[str, Any], float]:
    """The filesystem settings of an object store: ``url`` without inline credentials, its
    protocol, the fsspec options (credentials from the URL moved into them, with a warning;
    S3's timeouts and retries bounded) and the deadline of one operation."""
    opts = dict(storage_options or {})
    shown = shown_url(url)
    url, user, password = split_credentials(url)
    protocol = url.split("://", 1)[0]
    if user is not None or password is not None:
        warnings.warn(
            f"{shown}: the store URL holds credentials; they are used but never "
            "shown. Give them through the environment (AWS_ACCESS_KEY_ID / "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE) or storage_options instead: a URL "
            "ends up in shell history, logs and notebooks",
            MarketframeWarning,
            stacklevel=5,
        )
        if protocol in ("s3", "s3a"):
            opts.setdefault("key", user)
            opts.setdefault("secret", password)
        else:
            opts.setdefault("username", user)
            opts.setdefault("password", password)
    deadline = float(opts.pop("timeout", timeout or DEFAULT_TIMEOUT))
    if not (deadline > 0 and deadline != float("inf")):
        raise InvalidParams("Store", "timeout", f"has value {deadline!r}", "seconds > 0 (finite)")
    if protocol in ("s3", "s3a"):
        # every HEAD must see the latest object (leases, log): no listing cache
        opts.setdefault("use_listings_cache", False)
        opts.setdefault("skip_instance_cache", True)
        config = dict(opts.get("config_kwargs") or {})
        config.setdefault("connect_timeout", min(CONNECT_TIMEOUT, deadline))
        config.setdefault("read_timeout", min(READ_TIMEOUT, deadline))
        config.setdefault("retries", {"max_attempts": ATTEMPTS, "mode": "standard"})
        opts["config_kwargs"] = config
    return url, protocol, opts, deadline


def call(
    what: str, url: str, fs: Any, deadline: float, fn: Callable[..., Any], *args: Any, **kw: Any
) -> Any:
    """``fn(*args, **kw)`` of the filesystem ``fs`` within ``deadline`` seconds: a coroutine
    function of an async filesystem runs on its loop while this thread waits in short
    slices (Ctrl-C is seen at once); a network failure or the deadline raise
    :class:`StoreUnavailable` naming ``what``, missing credentials a ``ConfigurationError``."""
    try:
        if not asyncio.iscoroutinefunction(fn):
            return fn(*args, **kw)
        fut = asyncio.run_coroutine_threadsafe(fn(*args, **kw), fs.loop)
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
        if no_credentials(exc):
            raise ConfigurationError(
                f"{url}: no credentials for the object store were found",
                hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), "
                "or pass storage_options={'key': ..., 'secret': ...}",
            ) from None
        if network_error(exc):
            raise StoreUnavailable(what, describe(exc)) from None
        raise
