"""``Client``: the endpoint tree, many symbols at once, and the lower-level ``fetch``.

The tree (``client.stock.intraday.quote``) is built from :data:`ENDPOINTS`; every leaf calls
:meth:`Client.load` with its dotted name, so there is no per-endpoint code.
"""

from __future__ import annotations

import inspect
import os
import threading
import warnings
import weakref
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

import pyarrow as pa

from marketframe import _options, _params, adjust
from marketframe._calls import Call, Node
from marketframe._http import credential as _credential
from marketframe._http.transport import DEFAULT_DEADLINE, Response, Transport
from marketframe._typing import Backend, ClientOptions, FrameT
from marketframe.convert import (
    BACKENDS,
    build,
    check_backend,
    concat,
    oldest_first,
    parse,
    to_frame,
)
from marketframe.endpoints import ENDPOINTS, Endpoint, get
from marketframe.exceptions import (
    BatchError,
    InvalidParams,
    MarketframeError,
)

if TYPE_CHECKING:
    from typing import Unpack

    import pandas as pd
    import polars as pl

    from marketframe._tree import Tree as _TreeBase  # the typed endpoint tree (generated)
    from marketframe.stream import AsyncStream, Stream
else:
    _TreeBase = Generic  # at run time the tree is built from ENDPOINTS in Client.__init__

DEFAULT_BASE_URL = "https://api.fugle.tw/marketdata/v1.0"
#: endpoints whose rows come in pages (``offset``/``limit``; the service's default page is
#: the latest 50 rows): without ``limit=`` or ``offset=`` every page of the day is fetched
PAGED = frozenset({"stock.intraday.trades", "futopt.intraday.trades"})
#: rows asked for per page (a service that sends fewer is followed by its own count)
PAGE = 1000
ENV_KEY = _credential.ENV["api_key"]
__all__ = ["BACKENDS", "Client", "ClientStats", "Fetched"]


@dataclass
class Fetched:
    """A table, the metadata of the responses it came from (one per symbol) and their
    envelopes (each body's fields other than its ``data`` rows, parsed once)."""

    table: pa.Table
    responses: list[Response]
    envelopes: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ClientStats:
    """A snapshot of a client's counters (``client.stats()``)."""

    requests: int = 0  # requests sent over the network (retries included)
    cache_hits: int = 0
    retries: int = 0
    paced_seconds: float = 0.0
    statuses: Mapping[int, int] = field(default_factory=dict)  # responses by HTTP status

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __getitem__(self, key: str) -> Any:
        """``stats()["requests"]`` (the dict of earlier versions): use ``.requests``."""
        warnings.warn(
            f'client.stats()["{key}"] is deprecated: use client.stats().{key}',
            DeprecationWarning,
            stacklevel=2,
        )
        return self.as_dict()[key]


class Client(_TreeBase[FrameT]):
    """Typed frames from the market data service.

    The credential is exactly one of ``api_key`` (sent as ``X-API-KEY``), ``bearer_token``
    (``Authorization: Bearer``) or ``sdk_token`` (``X-SDK-TOKEN``); with none of them given, the
    one of ``MARKETFRAME_API_KEY`` / ``MARKETFRAME_BEARER_TOKEN`` / ``MARKETFRAME_SDK_TOKEN``
    that is set (none or several: :class:`ConfigurationError`, nothing sent). ``base_url`` may
    end in the version (``.../marketdata/v1.0``) or not (``.../marketdata``, as in the official
    SDK); ``client.base_url`` is the resolved one. ``backend`` is
    ``"pandas"``, ``"polars"`` or ``"arrow"``. ``cache`` is ``True`` (sqlite file in the user
    cache directory), ``False``, or a path. ``max_workers`` bounds the concurrent requests of
    a multi-symbol call. 429, 5xx and connection errors are retried ``retries`` times with
    exponential ``backoff`` (seconds), or after ``Retry-After`` when it is at most
    ``max_retry_after`` seconds (otherwise :class:`RateLimited` is raised at once).
    ``decode=True`` turns ``industry``/``security_type`` codes into names. ``deadline``
    (seconds, default 60) bounds each request in total, retries and their waits included;
    past it :class:`DeadlineExceeded` says what was tried. Every option is checked here:
    a bad one raises :class:`InvalidParams` before anything is sent.

    Without a credential, use :meth:`Client.sandbox`:
    a client bound to a local emulator of the service.

    For type checkers ``Client`` is generic in its frame type: ``Client()`` is a
    ``Client[pandas.DataFrame]``, ``Client(backend="polars")`` a ``Client[polars.DataFrame]``,
    and the endpoint tree (``marketframe/_tree.pyi``) returns that type.
    """

    @overload
    def __init__(
        self: Client[pd.DataFrame],
        api_key: str | None = None,
        *,
        backend: Literal["pandas"] = "pandas",
        **options: Unpack[ClientOptions],
    ) -> None: ...

    @overload
    def __init__(
        self: Client[pl.DataFrame],
        api_key: str | None = None,
        *,
        backend: Literal["polars"],
        **options: Unpack[ClientOptions],
    ) -> None: ...

    @overload
    def __init__(
        self: Client[pa.Table],
        api_key: str | None = None,
        *,
        backend: Literal["arrow"],
        **options: Unpack[ClientOptions],
    ) -> None: ...

    def __init__(
        self,
        api_key: str | None = None,
        *,
        bearer_token: str | None = None,
        sdk_token: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        backend: Backend = "pandas",
        cache: bool | str | os.PathLike[str] = True,
        timeout: float | tuple[float, float] = (5.0, 30.0),
        retries: int = 4,
        backoff: float = 0.25,
        max_retry_after: float = 60.0,
        max_workers: int = 8,
        decode: bool = False,
        pace: bool = True,
        deadline: float = DEFAULT_DEADLINE,
    ):
        credential = _credential.resolve(api_key, bearer_token, sdk_token)
        self.backend: Backend = check_backend("Client", backend)
        self.decode = _options.check_bool("decode", decode)
        self.max_workers = _options.check_int("max_workers", max_workers, 1)
        options = _options.check_options(
            base_url=base_url,
            cache=cache,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_retry_after=max_retry_after,
            deadline=deadline,
            pace=pace,
        )
        self._sandbox: Any = None  # the embedded sandbox of Client.sandbox()
        self._transport = Transport(
            credential=credential, pool_size=max(self.max_workers, 10), **options
        )
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        for ep in ENDPOINTS.values():
            node: Any = self
            parts = ep.name.split(".")
            for i, part in enumerate(parts[:-1]):
                if not hasattr(node, part):
                    setattr(node, part, Node(".".join(parts[: i + 1])))
                node = getattr(node, part)
            setattr(node, parts[-1], Call(self, ep))

    @overload
    @classmethod
    def sandbox(
        cls, *, backend: Literal["pandas"] = "pandas", **sandbox_options: Any
    ) -> Client[pd.DataFrame]: ...

    @overload
    @classmethod
    def sandbox(
        cls, *, backend: Literal["polars"], **sandbox_options: Any
    ) -> Client[pl.DataFrame]: ...

    @overload
    @classmethod
    def sandbox(cls, *, backend: Literal["arrow"], **sandbox_options: Any) -> Client[pa.Table]: ...

    @classmethod
    def sandbox(cls, **sandbox_options: Any) -> Client[Any]:
        """A client bound to an embedded :class:`marketframe.sandbox.Sandbox`, no key needed.

        The sandbox (a faithful local emulator of the service over a synthetic market) starts
        in this process on 127.0.0.1, serves with its advanced demo key, and stops when the
        client is closed, garbage-collected, or at interpreter exit. ``sandbox_options`` go to
        ``Sandbox`` (``seed``, ``now``, ``rate_limit``, ...), except the options of ``Client``
        itself (``backend``, ``decode``, ``cache``, ...), which go to the client; the cache is
        off unless asked for.
        """
        from marketframe.sandbox import Sandbox

        set_here = {*_credential.KINDS, "base_url"}
        client_names = set(inspect.signature(cls).parameters) - set_here
        client_options = {
            k: sandbox_options.pop(k) for k in list(sandbox_options) if k in client_names
        }
        client_options.setdefault("cache", False)
        for name in sorted(set_here):
            if name in sandbox_options:
                raise InvalidParams(
                    "Client.sandbox",
                    name,
                    "is set by the sandbox",
                    "omit it (use Client(...) for another service)",
                )
        sb = Sandbox(**sandbox_options).start()
        try:
            client: Client[Any] = cls(sb.api_key, base_url=sb.base_url, **client_options)
        except BaseException:
            sb.stop()
            raise
        client._sandbox = sb
        weakref.finalize(client, sb.stop)  # also runs at interpreter exit
        return client

    # -- public API ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def cache_path(self) -> Path | None:
        return getattr(self._transport, "cache_path", None)

    @overload
    def load(
        self, name: str, *, backend: None = None, refresh: bool = False, **params: Any
    ) -> FrameT: ...

    @overload
    def load(
        self, name: str, *, backend: Literal["pandas"], refresh: bool = False, **params: Any
    ) -> pd.DataFrame: ...

    @overload
    def load(
        self, name: str, *, backend: Literal["polars"], refresh: bool = False, **params: Any
    ) -> pl.DataFrame: ...

    @overload
    def load(
        self, name: str, *, backend: Literal["arrow"], refresh: bool = False, **params: Any
    ) -> pa.Table: ...

    def load(
        self, name: str, *, backend: Backend | None = None, refresh: bool = False, **params: Any
    ) -> Any:
        """A frame of endpoint ``name`` (e.g. ``"stock.intraday.quote"``).

        Parameters are the endpoint's (``docs/endpoints.md``) or the glossary's words
        (``docs/glossary.md``): ``start``/``end`` for any date range, ``symbols`` for many
        symbols, ``odd_lot=True`` for ``type="oddlot"``.

        ``symbol`` (or ``market`` for snapshots) may be a list: the requests run concurrently
        and the frames are concatenated. If any symbol fails, :class:`BatchError` carries the
        frame of the others (``.frame``) and each failure (``.errors``).
        ``adjust="splits"`` or ``"all"`` (historical candles) adjusts prices locally for
        corporate actions (docs/adjusted.md).
        """
        backend = check_backend(name, backend or self.backend)
        if "adjust" in params:  # historical candles adjusted locally (docs/adjusted.md)
            return adjust.load(self, name, backend, refresh, params.pop("adjust"), params)
        try:
            return to_frame(self.fetch(name, refresh=refresh, **params).table, backend)
        except BatchError as exc:
            if exc.frame is not None:
                exc.frame = to_frame(exc.frame, backend)
            raise

    def fetch_table(self, name: str, **params: Any) -> pa.Table:
        """Like :meth:`load` but returns the ``pyarrow.Table`` (schema metadata has units)."""
        return self.fetch(name, **params).table

    def fetch(self, name: str, *, refresh: bool = False, **params: Any) -> Fetched:
        """The table plus per-response metadata (status, cache hit, retries, rate limit)."""
        ep = get(name)
        params = _params.vocabulary(ep, params)  # start/end, symbols, odd_lot (glossary)
        multi = ep.multi_param
        value = params.get(multi) if multi else None
        if isinstance(value, list | tuple):
            return self._fetch_many(ep, multi, list(value), params, refresh)  # type: ignore[arg-type]
        values = _params.validate(ep, params)
        table, resp, envelope = self._fetch_one(ep, values, refresh)
        return Fetched(table, [resp], [envelope])

    @overload
    def stream(
        self,
        *,
        async_: Literal[False] = False,
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        backend: None = None,
        **options: Any,
    ) -> Stream[FrameT]: ...

    @overload
    def stream(
        self,
        *,
        async_: Literal[False] = False,
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        backend: Literal["pandas"],
        **options: Any,
    ) -> Stream[pd.DataFrame]: ...

    @overload
    def stream(
        self,
        *,
        async_: Literal[False] = False,
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        backend: Literal["polars"],
        **options: Any,
    ) -> Stream[pl.DataFrame]: ...

    @overload
    def stream(
        self,
        *,
        async_: Literal[False] = False,
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        backend: Literal["arrow"],
        **options: Any,
    ) -> Stream[pa.Table]: ...

    @overload
    def stream(
        self,
        *,
        async_: Literal[True],
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        **options: Any,
    ) -> AsyncStream: ...

    def stream(
        self,
        *,
        async_: bool = False,
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        **options: Any,
    ) -> Stream[Any] | AsyncStream:
        """A WebSocket stream with this client's credential (docs/streaming.md).

        ``with client.stream() as s:`` (blocking, for scripts and notebooks) or
        ``async with client.stream(async_=True) as s:``. ``url`` defaults to this client's
        origin + ``/marketdata/v1.0/stock/streaming``; ``market="futopt"`` streams futures
        and options from ``/marketdata/{version}/futopt/streaming`` (``version`` ``"v1.1"``
        by default as in the official SDKs, or ``"v1.0"``; a ``url`` ending in
        ``/futopt/streaming`` is a futures/options stream too). ``backfill=True`` refills
        trades missed during a reconnect from the REST trades endpoint through this client."""
        from marketframe.stream import AsyncStream, Stream, ws_url

        if options.get("options") is None:  # a StreamOptions object carries its own backend
            options.setdefault("backend", self.backend)
        kind = AsyncStream if async_ else Stream
        address = ws_url(self.base_url, market or "stock", version)  # checks both
        # market None: the product of ``url`` (``.../futopt/streaming``), else stock
        return kind(
            self._transport.credential,
            url or address,
            rest=self,
            backfill=backfill,
            market=market,
            **options,
        )

    def stats(self) -> ClientStats:
        """Requests sent, cache hits, retries, time spent pacing, and responses by status
        (a snapshot; ``stream.stats`` has the same shape: a dataclass with ``as_dict()``)."""
        return ClientStats(**self._transport.stats.as_dict())

    def units(self, name: str) -> dict[str, str]:
        """Documented units of the volume-like columns of endpoint ``name``."""
        return get(name).schema.units

    def close(self) -> None:
        """Release the connections and threads (and stop the sandbox of Client.sandbox())."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._transport.close()
        if self._sandbox is not None:
            self._sandbox.stop()

    def __enter__(self) -> Client[FrameT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r}, backend={self.backend!r})"

    # -- internals -------------------------------------------------------------------------

    def _fetch_one(
        self, ep: Endpoint, values: Mapping[str, Any], refresh: bool
    ) -> tuple[pa.Table, Response, Mapping[str, Any]]:
        if ep.name in PAGED and values.get("limit") is None and values.get("offset") is None:
            return self._fetch_pages(ep, values, refresh)
        path, query = _params.encode(ep, values)
        resp = self._transport.get(ep, path, query, values, refresh=refresh)
        parsed = parse(resp.body, ep)
        table = build(parsed, ep, values, decode=self.decode)
        return oldest_first(ep, values, table), resp, parsed.envelope

    def _fetch_pages(
        self, ep: Endpoint, values: Mapping[str, Any], refresh: bool
    ) -> tuple[pa.Table, Response, Mapping[str, Any]]:
        """Every row of a paged endpoint (the whole day's trades), page after page through
        the same request path, oldest first (``offset`` counts from the oldest row, so trades
        arriving meanwhile only add rows at the end); until a page comes back empty. The
        response and envelope returned are the first page's."""
        tables: list[pa.Table] = []
        first: tuple[Response, Mapping[str, Any]] | None = None
        offset = 0
        while True:
            page = {**values, "limit": PAGE, "offset": offset, "sort": "asc"}
            table, resp, envelope = self._fetch_one(ep, page, refresh)
            first = first or (resp, envelope)
            if table.num_rows == 0:
                break
            tables.append(table)
            offset += table.num_rows
        assert first is not None  # the loop ran at least once
        table = concat(tables) if tables else table
        if values.get("sort") == "desc":  # as asked: newest first
            table = table.take(pa.array(range(table.num_rows - 1, -1, -1)))
        return table, first[0], first[1]

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="marketframe")
            return self._pool

    def _fetch_many(
        self, ep: Endpoint, multi: str, symbols: list[Any], params: dict[str, Any], refresh: bool
    ) -> Fetched:
        if not symbols:
            raise InvalidParams(ep.name, multi, "is an empty list", "one value or a non-empty list")
        # validate every symbol's parameters before the first request
        batches = [_params.validate(ep, {**params, multi: s}) for s in symbols]
        futures = [self._executor().submit(self._fetch_one, ep, v, refresh) for v in batches]
        tables: list[pa.Table] = []
        responses: list[Response] = []
        envelopes: list[Mapping[str, Any]] = []
        errors: dict[str, BaseException] = {}
        for sym, fut in zip(symbols, futures, strict=True):
            try:
                table, resp, envelope = fut.result()
            except MarketframeError as exc:
                errors[str(sym)] = exc
                continue
            tables.append(table)
            responses.append(resp)
            envelopes.append(envelope)
        if errors:
            raise BatchError(ep.name, concat(tables) if tables else None, errors, len(symbols))
        return Fetched(concat(tables), responses, envelopes)
