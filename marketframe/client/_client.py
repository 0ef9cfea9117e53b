"""``Client``: the endpoint tree, many symbols at once, and the lower-level ``fetch``.

The tree (``client.stock.intraday.quote``) is built from :data:`ENDPOINTS`; every leaf calls
:meth:`Client.load` with its dotted name, so there is no per-endpoint code.
"""

from __future__ import annotations

import datetime as dt
import inspect
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

import pyarrow as pa

from marketframe import _checks, adjust
from marketframe._http import credential as _credential
from marketframe._http.fanout import Budget, Fanout, Outcome
from marketframe._http.request import Prepared, prepare
from marketframe._http.transport import DEFAULT_DEADLINE, Response, Transport
from marketframe._time import session_date, taipei_today
from marketframe._typing import Backend, ClientOptions, FrameT
from marketframe.client import _results
from marketframe.client._calls import grow
from marketframe.client._results import ClientStats, Fetched
from marketframe.client._streams import Streams
from marketframe.convert import BACKENDS, check_backend, to_frame
from marketframe.endpoints import get, say_if_answer_closed, vocabulary
from marketframe.exceptions import BatchError, InvalidParams

if TYPE_CHECKING:
    from typing import Unpack

    import pandas as pd
    import polars as pl

    from marketframe.client._tree import Tree as _TreeBase  # the typed endpoint tree (generated)
else:
    _TreeBase = Generic  # at run time the tree is built from ENDPOINTS in Client.__init__

DEFAULT_BASE_URL = "https://api.fugle.tw/marketdata/v1.0"
ENV_KEY = _credential.ENV["api_key"]
__all__ = ["BACKENDS", "Client", "ClientStats", "Fetched", "Prepared"]


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
    (seconds, default 60) bounds each call while the service is silent: a call of one
    request or of many (a list of symbols) fails with :class:`DeadlineExceeded` once that
    long has passed without an answer, retries and their waits included (docs/loaders.md).
    Every option is checked here: a bad one raises :class:`InvalidParams` before anything is sent.

    Without a credential, use :meth:`Client.sandbox`:
    a client bound to a local emulator of the service.

    For type checkers ``Client`` is generic in its frame type: ``Client()`` is a
    ``Client[pandas.DataFrame]``, ``Client(backend="polars")`` a ``Client[polars.DataFrame]``,
    and the endpoint tree (``marketframe/client/_tree.pyi``) returns that type.
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
        self.decode = _checks.check_bool("decode", decode)
        self.max_workers = _checks.check_int("max_workers", max_workers, 1)
        options = _checks.check_options(
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
        self._fanout = Fanout(self.max_workers, options["retries"], options["deadline"])
        # answers are converted one at a time (see ``_convert``)
        self._converting = threading.Lock()
        grow(self, self.load)  # the endpoint tree: client.stock.intraday.quote, ...

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
        # the emulator (aiohttp's server, its synthetic market: about 0.1 s) loads only here
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
    def stream(self) -> Streams[FrameT]:
        """``client.stream(...)``: a WebSocket stream with this client's credential
        (:class:`~marketframe.client._streams.Streams`, docs/streaming.md)."""
        return Streams(self._transport.credential, self.base_url, self.backend, self)

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
        corporate actions (docs/adjusted.md); ``as_of`` (a date) with it uses only the actions
        that had happened by that day, the prices as a user saw them then.
        """
        backend = check_backend(name, backend or self.backend)
        mode, as_of = adjust.check_load(name, params)  # adjusted locally (docs/adjusted.md)
        try:
            fetched = self.fetch(name, refresh=refresh, **params)
        except BatchError as exc:
            if exc.frame is not None:
                frame = (
                    exc.frame if mode is None else self.adjust_prices(exc.frame, mode, None, as_of)
                )
                exc.frame = to_frame(frame, backend)
            raise
        table = fetched.table
        if mode is not None:  # up to the service's today (the envelopes') or ours if later
            dates = [d for e in fetched.envelopes if (d := session_date(e)) is not None]
            table = self.adjust_prices(table, mode, max([taipei_today(), *dates]), as_of)
        return to_frame(table, backend)

    def fetch_table(self, name: str, **params: Any) -> pa.Table:
        """Like :meth:`load` but returns the ``pyarrow.Table`` (schema metadata has units)."""
        return self.fetch(name, **params).table

    def fetch(self, name: str, *, refresh: bool = False, **params: Any) -> Fetched:
        """The table plus per-response metadata (status, cache hit, retries, rate limit)."""
        ep = get(name)
        params = vocabulary(ep, params)  # start/end, symbols, odd_lot (glossary)
        multi = ep.multi_param
        value = params.get(multi) if multi else None
        if multi is None or not isinstance(value, list | tuple):
            jobs = [self.prepare(name, refresh=refresh, **params)]
            fetched = self.send(jobs[0])
        else:
            if not value:
                raise InvalidParams(
                    ep.name, multi, "is an empty list", "one value or a non-empty list"
                )
            # every symbol's request is checked before the first one is sent
            jobs = [self.prepare(name, refresh=refresh, **{**params, multi: v}) for v in value]
            fetched = _results.gather(ep.name, jobs, self.send_all(jobs))
        if fetched.table.num_rows == 0:  # why it is empty, when the market was shut
            say_if_answer_closed(ep, jobs[0].values)
        return fetched

    # -- the one request path (download, the store and adjusted prices use it too) -----------

    def prepare(self, name: str, *, refresh: bool = False, **params: Any) -> Prepared:
        """One request of endpoint ``name``, checked and encoded once (a frozen
        :class:`Prepared`): :class:`InvalidParams` here, before anything is sent. ``params``
        take the glossary's words too; the path parameter takes one value."""
        ep = get(name)
        kind = self._transport.credential.kind
        return prepare(ep, vocabulary(ep, params), credential=kind, refresh=refresh)

    def send(self, prepared: Prepared, budget: Budget | None = None) -> Fetched:
        """Send one prepared request and convert its answer (``budget``: the deadline and
        retries it shares with a fan-out, else its own). A paged endpoint (a day's trades)
        without ``limit=``/``offset=`` is fetched page after page: the whole day."""
        if _results.paged(prepared):
            return _results.send_pages(
                prepared, lambda page: self._convert(page, self._transport.send(page, budget))
            )
        return self._convert(prepared, self._transport.send(prepared, budget))

    def _convert(self, prepared: Prepared, resp: Response) -> Fetched:
        """An answer's table, converted while no other thread of this client converts one:
        typing holds the GIL throughout (Arrow's reader of large bodies has its own threads),
        so a fan-out's workers converting together only fight for it (forced switches,
        wake-ups, cold caches); their requests stay in flight together."""
        with self._converting:
            return _results.convert(prepared, resp, self.decode)

    def send_all(
        self,
        prepared: Sequence[Prepared],
        *,
        progress: Callable[[int, Outcome[Fetched]], None] | None = None,
        workers: int | None = None,
    ) -> list[Outcome[Fetched]]:
        """Many prepared requests through the client's one fan-out: ``max_workers`` at a
        time, one pacer, one deadline and one retry budget for the call, Ctrl-C within a
        second. Each outcome (in order) holds a :class:`Fetched` or the request's error;
        ``progress(index, outcome)`` runs in the calling thread as each ends; ``workers``
        overrides ``max_workers`` for this call."""
        return self._fanout.run(prepared, self.send, progress=progress, workers=workers)

    def receive_all(
        self,
        prepared: Sequence[Prepared],
        *,
        progress: Callable[[int, Outcome[Response]], None] | None = None,
        workers: int | None = None,
    ) -> list[Outcome[Response]]:
        """:meth:`send_all` without the conversion: each outcome holds the answer (its body
        and metadata) for a caller that types many together (:meth:`convert_all`). Not for
        paged endpoints (a day's trades), whose pages :meth:`send_all` follows."""
        if any(_results.paged(p) for p in prepared):
            raise InvalidParams(
                "receive_all", "prepared", "holds a paged request", "send_all for paged requests"
            )
        return self._fanout.run(prepared, self._transport.send, progress=progress, workers=workers)

    def convert_all(
        self, prepared: Sequence[Prepared], responses: Sequence[Response]
    ) -> list[Outcome[Fetched]]:
        """The tables of answers from :meth:`receive_all` (or each one's conversion error),
        the windows of one symbol typed in one conversion (``_results.convert_many``)."""
        with self._converting:
            return _results.convert_many(prepared, responses, self.decode)

    def adjust_prices(
        self, table: pa.Table, mode: str, today: dt.date | None = None, as_of: dt.date | None = None
    ) -> pa.Table:
        """Historical candles ``table`` adjusted (``mode`` "splits" or "all",
        docs/adjusted.md) with the corporate actions fetched through this client from the
        day after its first bar up to ``today`` (default: today in Asia/Taipei, or the last
        bar's day if later), and not after ``as_of`` when given (the actions known then)."""
        day = today or taipei_today()
        return _results.adjust_prices(self.prepare, self.send_all, table, mode, day, as_of)

    def stats(self) -> ClientStats:
        """Requests sent, cache hits, retries, time spent pacing, and responses by status
        (a snapshot; ``stream.stats`` has the same shape: a dataclass with ``as_dict()``)."""
        pacer = self._transport.pacer
        limit, window, remaining = pacer.plan() if pacer is not None else (None, None, None)
        return ClientStats(
            **self._transport.stats.as_dict(),
            rate_limit=limit,
            rate_window=window,
            rate_remaining=remaining,
        )

    def units(self, name: str) -> dict[str, str]:
        """Documented units of the volume-like columns of endpoint ``name``."""
        return get(name).schema.units

    def close(self) -> None:
        """Release the connections and threads (and stop the sandbox of Client.sandbox())."""
        self._transport.close()
        if self._sandbox is not None:
            self._sandbox.stop()

    def __enter__(self) -> Client[FrameT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r}, backend={self.backend!r})"
