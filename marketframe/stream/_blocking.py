"""``Stream``: the async client run on a background event loop, for scripts and notebooks.

Every method blocks until the async one finishes on the loop thread. Rows are converted to
Arrow in the calling thread (the loop thread only reads the socket), so reading and converting
overlap.
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    Literal,
    ParamSpec,
    TypeVar,
    Unpack,
    overload,
)

import pandas as pd
import pyarrow as pa

from marketframe._http.credential import Credential
from marketframe._typing import Arrow, Backend, FrameT, Pandas, Polars
from marketframe.convert import to_frame
from marketframe.stream._client import AsyncStream
from marketframe.stream._frames import Batch
from marketframe.stream._ledger import Gap
from marketframe.stream._live import LiveIndicators, check_arguments
from marketframe.stream._protocol import Subscription
from marketframe.stream._reading import Wait
from marketframe.stream._stats import StreamStats

if TYPE_CHECKING:
    import polars as pl

    from marketframe.indicators.stateful import IndicatorSpec

T = TypeVar("T")
P = ParamSpec("P")


def _blocking(
    method: Callable[Concatenate[AsyncStream, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[Stream[Any], P], T]:
    """A method of ``Stream`` made from ``AsyncStream``'s: the same call (its signature and
    its doc), run on the stream's loop until it finishes."""

    @functools.wraps(method)
    def call(self: Stream[Any], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._call(method(self._async, *args, **kwargs))

    call.__qualname__ = f"Stream.{method.__name__}"
    return call


def _passed_on(
    method: Callable[Concatenate[AsyncStream, P], T],
) -> Callable[Concatenate[Stream[Any], P], T]:
    """A method of ``Stream`` that is ``AsyncStream``'s (its signature and its doc), called
    on the stream it wraps (nothing to wait for)."""

    @functools.wraps(method)
    def call(self: Stream[Any], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return method(self._async, *args, **kwargs)

    call.__qualname__ = f"Stream.{method.__name__}"
    return call


class Stream(Generic[FrameT]):
    """A blocking stream (``with client.stream() as s:``); see docs/streaming.md.

    Generic in the frame type of its ``backend`` (``Stream[pandas.DataFrame]`` by default)."""

    @overload
    def __init__(
        self: Stream[pd.DataFrame],
        api_key: str | Credential | None,
        url: str,
        *,
        backend: Literal["pandas"] = "pandas",
        **options: Any,
    ) -> None: ...

    @overload
    def __init__(
        self: Stream[pl.DataFrame],
        api_key: str | Credential | None,
        url: str,
        *,
        backend: Literal["polars"],
        **options: Any,
    ) -> None: ...

    @overload
    def __init__(
        self: Stream[pa.Table],
        api_key: str | Credential | None,
        url: str,
        *,
        backend: Literal["arrow"],
        **options: Any,
    ) -> None: ...

    def __init__(self, api_key: str | Credential | None, url: str, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="marketframe-stream", daemon=True
        )
        self._thread.start()
        try:
            self._async: AsyncStream = self._call(_make(api_key, url, options))
        except BaseException:
            self._stop_loop()
            raise

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        fut: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(timeout)
        except BaseException:
            fut.cancel()
            raise

    # -- lifecycle --------------------------------------------------------------------------

    def connect(self) -> Stream[FrameT]:
        try:
            self._call(self._async.connect())
        except BaseException:
            self._stop_loop()
            raise
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            try:
                self._call(self._async.close())
            finally:
                self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> Stream[FrameT]:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._async).replace("AsyncStream", "Stream", 1)

    # -- requests ---------------------------------------------------------------------------

    subscribe = _blocking(AsyncStream.subscribe)

    @property
    def market(self) -> str:
        """The product streamed: ``stock`` or ``futopt``."""
        return self._async.market

    unsubscribe = _blocking(AsyncStream.unsubscribe)
    subscriptions = _blocking(AsyncStream.subscriptions)

    @property
    def subscribed(self) -> list[Subscription]:
        return self._async.subscribed

    ping = _blocking(AsyncStream.ping)
    wait_backfills = _blocking(AsyncStream.wait_backfills)

    @property
    def stats(self) -> StreamStats:
        stats: StreamStats = self._async.stats
        return stats

    @property
    def gaps(self) -> list[Gap]:
        return self._async.gaps

    @property
    def malformed(self) -> list[str]:
        """The latest frames skipped because they could not be read (reason: text)."""
        return self._snapshot(self._async.malformed)

    @property
    def quarantine(self) -> list[tuple[str, dict[str, Any], str]]:
        """The latest rows set aside because they could not be converted:
        (channel, raw row, why)."""
        return self._snapshot(self._async.quarantine)

    def _snapshot(self, items: Iterable[T]) -> list[T]:
        """A copy made on the loop thread (which appends to ``items``) while it runs."""
        if not self._thread.is_alive():
            return list(items)

        async def copy() -> list[T]:
            return list(items)

        return self._call(copy())

    @property
    def last_heartbeat(self) -> int | None:
        return self._async.last_heartbeat

    # -- live indicators ---------------------------------------------------------------------

    def indicators(
        self,
        symbols: str | Sequence[str],
        timeframe: str = "1",
        spec: Sequence[IndicatorSpec | str] = ("sma", "rsi", "kdj", "macd", "bbands"),
        *,
        warmup: Any = None,
        warmup_bars: int = 300,
        checkpoint: str | Path | None = None,
        save_every: float = 10.0,
        extend_checkpoint: bool = False,
        peek: bool = True,
        idle: float | None = None,
        backend: Backend | None = None,
    ) -> Iterator[Any]:
        """Live indicators: subscribe to ``symbols``' trades, build ``timeframe``-minute bars
        and yield, per batch of trades, a frame (``backend``: the stream's; ``"arrow"``: a
        ``pyarrow.Table``) of ``symbol, time`` (bar start), OHLCV, one column per output of
        each ``spec`` (an indicator name, a spec, or a list of them), ``is_final`` and
        ``revised`` (see :class:`marketframe.stream.LiveIndicators`). ``warmup``: a
        ``Store`` (its stored candles) or a ``Client`` (today's intraday candles), the last
        ``warmup_bars`` bars per symbol. ``checkpoint``: a file the engine is saved to (at
        most every ``save_every`` seconds, and when the stream ends) and resumed from when
        it exists (a restarted process continues equal to one that never stopped; trades
        seen again are skipped). A checkpoint of other symbols, specs or timeframe is
        refused, naming what differs; ``extend_checkpoint=True`` adds the call's new
        symbols and specs to it (they start without history). Ends after ``idle`` seconds
        without data (``None``: when the stream ends), closing the forming bars."""
        args = (symbols, timeframe, spec, warmup, warmup_bars, checkpoint, idle, backend)
        syms, tf, specs = check_arguments(*args, save_every, extend_checkpoint)
        path = Path(checkpoint) if checkpoint is not None else None
        # made now: a spec's or a checkpoint's mistake is an error of this call, not of the
        # first next()
        if path is not None and path.exists():
            eng = LiveIndicators.load(path).fits(
                syms, specs, tf, extend=extend_checkpoint, where="Stream.indicators", path=path
            )
            warm = None
        else:
            eng = LiveIndicators(syms, specs, timeframe=tf)
            warm = (warmup, str(tf), warmup_bars) if warmup is not None else None
        return self._live(eng, syms, path, float(save_every), peek, idle, backend, warm)

    def _live(
        self,
        eng: LiveIndicators,
        syms: list[str],
        path: Path | None,
        save_every: float,
        peek: bool,
        idle: float | None,
        backend: Backend | None,
        warm: tuple[Any, str, int] | None,
    ) -> Iterator[Any]:
        """The generator of :meth:`indicators`: warm-up (``warm``: the source, timeframe and
        bars, or None), subscription and the loop; the checkpoint saved after a batch when
        ``save_every`` seconds have passed since the last save (the first batch's too)."""
        if warm is not None:
            candles = _warm_candles(warm[0], syms, warm[1], warm[2])
            if len(candles):
                eng.warm(candles)
        self.subscribe("trades", syms)
        out = backend or self._async.backend
        saved = -math.inf
        for batch in self.batches(idle=idle):
            if batch.channel != "trades" or batch.odd_lot:
                continue
            rows = eng.feed(batch.to_pandas(), peek=peek)
            if path is not None and time.monotonic() - saved >= save_every:
                eng.save(path)
                saved = time.monotonic()
            if len(rows):
                yield _convert(rows, out)
        rows = eng.flush()
        if path is not None:
            eng.save(path)
        if len(rows):
            yield _convert(rows, out)

    # -- reading ----------------------------------------------------------------------------

    record = _passed_on(AsyncStream.record)

    def next_batch(self, timeout: float | None = None) -> Batch | None:
        """The next batch, or ``None`` after ``timeout`` s without data / once closed."""
        taken = self._call(self._async._take(timeout))
        return None if taken is None else self._async._deliver(*taken)

    def batches(self, *, idle: float | None = None) -> Iterator[Batch]:
        """Batches as they come; ends after ``idle`` seconds without data (``None``: only
        when the stream ends)."""
        while True:
            batch = self.next_batch(idle)
            if batch is None:
                return
            yield batch

    __iter__ = batches

    def frames(
        self, *, backend: str | None = None, idle: float | None = None
    ) -> Iterator[tuple[str, Any]]:
        """``(channel, frame)`` per batch, in ``backend`` (pandas, polars or arrow)."""
        for batch in self.batches(idle=idle):
            yield batch.channel, to_frame(batch.table, backend or self._async.backend)

    @overload
    def read(self, channel: str, *, backend: None = None, **wait: Unpack[Wait]) -> FrameT: ...
    @overload
    def read(self, channel: str, *, backend: Pandas, **wait: Unpack[Wait]) -> pd.DataFrame: ...
    @overload
    def read(self, channel: str, *, backend: Polars, **wait: Unpack[Wait]) -> pl.DataFrame: ...
    @overload
    def read(self, channel: str, *, backend: Arrow, **wait: Unpack[Wait]) -> pa.Table: ...

    def read(self, channel: str, *, backend: Backend | None = None, **wait: Unpack[Wait]) -> Any:
        """Everything of ``channel`` until ``idle`` s pass without data (or ``timeout`` in
        all), as one frame. Batches of other channels are recorded (if recording) and
        discarded: :meth:`AsyncStream.read`, run on the stream's loop."""
        return self._call(self._async.read(channel, backend=backend, **wait))


def _warm_candles(source: Any, symbols: Sequence[str], timeframe: str, bars: int) -> pd.DataFrame:
    """The last ``bars`` candles of each symbol from a ``Store`` (its stored
    ``stock.historical.candles`` of ``timeframe``) or a ``Client`` (today's intraday candles)."""
    frames = []
    if hasattr(source, "read_derived"):  # a Store
        df = source.read("stock.historical.candles", list(symbols), timeframe=timeframe)
        frames.append(df)
    else:
        for sym in symbols:
            frames.append(
                source.stock.intraday.candles(symbol=sym, timeframe=timeframe, backend="pandas")
            )
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if not len(df):
        return df
    df["symbol"] = df["symbol"].astype(str)
    df = df.sort_values(["symbol", "date"], kind="stable")
    return df.groupby("symbol", sort=False).tail(bars)


def _convert(rows: Any, backend: str) -> Any:
    """The engine's pandas rows in ``backend``."""
    if backend == "pandas":
        return rows
    table = pa.Table.from_pandas(rows, preserve_index=False)
    return table if backend == "arrow" else to_frame(table, backend)


async def _make(api_key: str | Credential | None, url: str, options: dict[str, Any]) -> AsyncStream:
    return AsyncStream(api_key, url, **options)  # created on the loop that will run it
