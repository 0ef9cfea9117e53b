"""``client.stream(...)``: the WebSocket side of :class:`~marketframe.Client`, a part it
hands its credential, origin and backend (the REST client imports this module, never the
reverse)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Literal, overload

from marketframe._http.credential import Credential
from marketframe._typing import Backend, FrameT

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from marketframe.stream import AsyncStream, Stream


class Streams(Generic[FrameT]):
    """``client.stream``: opens streams with a client's credential, at its origin, in its
    backend, with the client (``rest``) for backfills."""

    def __init__(self, credential: Credential, base_url: str, backend: Backend, rest: Any) -> None:
        self._credential = credential
        self._base_url = base_url
        self._backend = backend
        self._rest = rest

    @overload
    def __call__(
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
    def __call__(
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
    def __call__(
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
    def __call__(
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
    def __call__(
        self,
        *,
        async_: Literal[True],
        url: str | None = None,
        backfill: bool = False,
        market: str | None = None,
        version: str | None = None,
        **options: Any,
    ) -> AsyncStream: ...

    def __call__(
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
        # the stream and aiohttp (about 0.1 s) load with the first stream, not with every client
        from marketframe.stream import AsyncStream, Stream, ws_url

        if options.get("options") is None:  # a StreamOptions object carries its own backend
            options.setdefault("backend", self._backend)
        kind = AsyncStream if async_ else Stream
        address = ws_url(self._base_url, market or "stock", version)  # checks both
        # market None: the product of ``url`` (``.../futopt/streaming``), else stock
        return kind(
            self._credential,
            url or address,
            rest=self._rest,
            backfill=backfill,
            market=market,
            **options,
        )
