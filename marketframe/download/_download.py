"""``marketframe.download``: candles of any number of symbols over any range, in one call.

The range is split into windows of under one year (the store's window rule), the windows of
every symbol are fetched concurrently through one :class:`~marketframe.Client` (its pacer and
retries shared by all), and the answer is one long frame: the symbols in the order asked (as
the loaders and ``Store.read`` give them), each oldest first. With ``store=`` the windows go
through :meth:`Store.sync` instead (only what the store lacks is fetched) and the frame is
:meth:`Store.read`'s. See ``docs/loaders.md``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, overload

import pyarrow as pa

from marketframe._progress import progress_bar
from marketframe._time import taipei_today
from marketframe._typing import DayLike
from marketframe.convert import concat, to_frame
from marketframe.download import _keywords, _universe, _yf
from marketframe.download._check import BOARD_ENDPOINT, BOARD_TYPE, ENDPOINT, Arguments, check
from marketframe.endpoints import (
    MARKETS,
    get,
    plan,
    say_if_closed,
)
from marketframe.exceptions import BatchError, SyncError

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from marketframe._http.fanout import Outcome
    from marketframe._http.request import Prepared
    from marketframe._http.transport import Response
    from marketframe.client import Client
    from marketframe.store import Store

#: windows from which ``progress=None`` shows a bar (on a terminal or in a notebook)
LONG_WORK = 20


class Options(TypedDict, total=False):
    """The keyword options of :func:`download` besides ``backend`` (for type checkers)."""

    period: str | None
    interval: str | None
    timeframe: str | None
    adjust: str | bool | None
    fields: str | Sequence[str] | None
    layout: str
    group_by: str | None
    store: Store | str | os.PathLike[str] | None
    universe: Any  # a frame of Store.universe, or a day (with store=)
    client: Client[Any] | None
    progress: bool | None
    # yfinance's words of the same meaning (docs/migration.md)
    tickers: str | Sequence[str]
    auto_adjust: bool
    threads: bool | int


#: every keyword :func:`download` takes (an unknown one is refused naming the closest)
KEYWORDS: tuple[str, ...] = ("symbols", "start", "end", "backend", *Options.__annotations__)


@overload
def download(
    symbols: str | Sequence[str] | None = None,
    start: DayLike | None = None,
    end: DayLike | None = None,
    *,
    backend: Literal["pandas"] = "pandas",
    **options: Unpack[Options],
) -> pd.DataFrame: ...


@overload
def download(
    symbols: str | Sequence[str] | None = None,
    start: DayLike | None = None,
    end: DayLike | None = None,
    *,
    backend: Literal["polars"],
    **options: Unpack[Options],
) -> pl.DataFrame: ...


@overload
def download(
    symbols: str | Sequence[str] | None = None,
    start: DayLike | None = None,
    end: DayLike | None = None,
    *,
    backend: Literal["arrow"],
    **options: Unpack[Options],
) -> pa.Table: ...


def download(
    symbols: str | Sequence[str] | None = None,
    start: DayLike | None = None,
    end: DayLike | None = None,
    *,
    period: str | None = None,
    interval: str | None = None,
    timeframe: str | None = None,
    adjust: str | bool | None = None,
    fields: str | Sequence[str] | None = None,
    backend: str = "pandas",
    layout: str = "long",
    group_by: str | None = None,
    store: Store | str | os.PathLike[str] | None = None,
    universe: Any = None,
    client: Client[Any] | None = None,
    progress: bool | None = None,
    **yfinance: Any,
) -> Any:
    """Historical candles of ``symbols`` from ``start`` to ``end`` as one long frame.

    ``symbols``: a symbol (``"2330"``), a list of them, or a board name (one of ``TSE``,
    ``OTC``, ``ESB``, ``TIB``, ``PSB``, alone or in the list) meaning every equity listed on
    it (from the tickers endpoint). ``start``/``end`` (inclusive; ``'YYYY-MM-DD'``, a date or a
    datetime): ``end`` defaults to today in Asia/Taipei and ``start`` to one year before
    ``end``; days before the service's first date (2010-01-01; indices 2015-01-01) hold no
    rows. ``timeframe``: ``D``, ``W``, ``M`` or a minute timeframe (minute candles cover
    only the latest 30 days: leave ``start``/``end`` unset). ``fields``: the price fields to
    ask for (default: all but ``turnover``, which the service sends only when ``fields``
    names it: without it the column is null). ``adjust``: ``None`` (prices as traded),
    ``"splits"`` or ``"all"`` (also dividends; ``True`` means ``"all"``), computed locally
    from the corporate actions (``docs/adjusted.md``).
    ``backend``: ``pandas``, ``polars`` or ``arrow``.

    ``store``: a :class:`~marketframe.Store` or a directory; what it lacks is synced into it,
    then the frame is read from it. ``client``: the client to use; by default, the same rule
    as the ``marketframe`` commands: the real service when ``MARKETFRAME_API_KEY`` is set,
    else an embedded sandbox (announced on stderr), closed when the call returns.
    ``progress``: a bar over the windows (None: on long work, 20 windows or more, when
    stderr is a terminal or a notebook).
    ``universe``: the symbols of a point-in-time universe instead of ``symbols``: a frame of
    :meth:`Store.universe` (its ``symbol`` column), or a day, meaning the equities (ETFs
    included) the store's universe lists that day (needs ``store=``; ``symbols`` may then
    name boards to keep). A member delisted later has rows up to its last session
    (docs/universe.md).

    Rows come symbol by symbol in the order asked (a board's symbols in its listing order), as
    the loaders and :meth:`Store.read` give them, each symbol oldest first; pandas dates are
    ``datetime64[us]``.
    Bad arguments raise :class:`~marketframe.InvalidParams` before any request. If some
    symbols fail, :class:`~marketframe.BatchError` carries the frame of the others
    (``.frame``) and each failure (``.errors``); a failed symbol never appears in part, and
    an unknown one's error names the closest symbol of the ticker list.

    yfinance's words (docs/migration.md, "Coming from yfinance"): ``period`` (``1d``,
    ``5d``: the last sessions; ``1mo`` ... ``10y``, ``ytd``, ``max``; ends today, not with
    ``start``/``end``), ``interval`` (``1m`` ... ``60m``/``1h``, ``1d``, ``1wk``, ``1mo``;
    not with ``timeframe``), ``adjust=True`` (``"all"``; also ``auto_adjust=True``),
    ``tickers=`` (``symbols``; ``"2330 0050"`` is a list), ``threads=`` (taken: requests
    always run concurrently), symbols with ``.TW``/``.TWO`` (dropped; the board is checked
    against the ticker's market), and ``layout="wide"`` or ``group_by="column"``/``"ticker"``:
    one row per date, a column per (field, symbol). yfinance's other keywords raise
    :class:`~marketframe.InvalidParams` naming what to write instead (``actions=True``:
    ``Ticker(symbol).actions``), an unknown keyword :class:`~marketframe.InvalidParamType`
    (a ``TypeError``) naming the closest one.
    """
    symbols, adjust = _keywords.keywords(symbols, adjust, yfinance, KEYWORDS)
    symbols = _universe.members(universe, symbols, store)
    yf = _yf.resolve(start, end, timeframe, period, interval, adjust, taipei_today())
    symbols, suffixed = _yf.split_suffixes(_keywords.symbol_list(symbols))
    layout = _yf.check_layout(layout, group_by, backend)
    args = check(symbols, yf.start, yf.end, yf.timeframe, yf.adjust, fields, backend, store)
    with _session(client, store) as (session, st):
        if suffixed:
            _yf.check_boards(session, suffixed)
        syms = _expand(session, args.symbols)
        if st is not None:
            table, errors = _via_store(st, syms, args, progress)
        else:
            table, errors = _fetch(session, syms, args, progress)
        table = _yf.keep_recent(table, yf.sessions, yf.since)
        if args.adjust is not None and table is not None:  # once, on every symbol's rows
            table = session.adjust_prices(table, args.adjust)
        if errors:
            exc = BatchError(
                "download",
                _shaped(table, backend, layout, group_by) if table is not None else None,
                errors,
                len(syms),
            )
            raise _yf.with_suggestions(session, exc)
    if args.span is not None and table.num_rows == 0:  # empty: say so if the market was shut
        say_if_closed("download", *args.span)
    return _shaped(table, backend, layout, group_by)


def _shaped(table: pa.Table, backend: str, layout: str, group_by: str | None) -> Any:
    """The frame in ``backend``, long or wide (``_yf.wide``)."""
    frame = to_frame(table, backend)
    if layout == "wide":
        return _yf.wide(frame, backend, group_by)
    return frame


@contextmanager
def _session(
    client: Client[Any] | None, store: Store | str | os.PathLike[str] | None
) -> Iterator[tuple[Client[Any], Store | None]]:
    """The client (the given one, the store's, or the commands' rule) and the store."""
    from marketframe.store import Store  # only when given one: import marketframe stays light

    if isinstance(store, Store):
        yield store.client if client is None else client, store
        return
    if client is not None:
        yield client, (Store(store, client) if store is not None else None)
        return
    # the client (requests) loads only when download makes its own
    from marketframe.client import connect

    with connect(backend="arrow", cache=False) as session:
        yield session, (Store(store, session) if store is not None else None)


def _expand(client: Client[Any], items: list[str]) -> list[str]:
    """Board names -> the equities listed on them (the tickers endpoint, every board in one
    fan-out); duplicates dropped."""
    boards = list(dict.fromkeys(item for item in items if item in MARKETS))
    jobs = [client.prepare(BOARD_ENDPOINT, type=BOARD_TYPE, market=b) for b in boards]
    listed: dict[str, list[str]] = {}
    for board, got in zip(boards, client.send_all(jobs), strict=True):
        if got.error is not None:
            raise got.error
        assert got.result is not None
        listed[board] = [str(s) for s in got.result.table.column("symbol").to_pylist()]
    out: list[str] = []
    for item in items:
        out += listed.get(item, [item])
    return list(dict.fromkeys(out))


# -- fetching -------------------------------------------------------------------------------


def _requests(client: Client[Any], args: Arguments, symbol: str) -> list[Prepared]:
    """The under-one-year windows of one symbol, prepared (checked once, encoded)."""
    base: dict[str, Any] = {"symbol": symbol, "timeframe": args.timeframe, "sort": "asc"}
    if args.fields is not None:
        base["fields"] = args.fields
    if args.span is None:  # minute candles
        return [client.prepare(ENDPOINT, **base)]
    windows, _ = plan(args.span, [], symbol)
    return [client.prepare(ENDPOINT, **base, from_=lo, to=hi) for lo, hi in windows]


def _fetch(
    client: Client[Any], symbols: list[str], args: Arguments, progress: bool | None
) -> tuple[pa.Table | None, dict[str, BaseException]]:
    """Every window of every symbol through the client's fan-out; each symbol's answers are
    typed together (``client.convert_all``) in this thread as its last one comes in, while the
    other symbols' requests are still in flight."""
    jobs = [(s, p) for s in symbols for p in _requests(client, args, s)]
    errors: dict[str, BaseException] = {}
    # None: a bar on long work only, where stderr is a terminal or a notebook
    shown = progress if progress is not None or len(jobs) >= LONG_WORK else False
    bar = progress_bar(len(jobs), "download", shown, client)
    left: dict[str, int] = {}
    for sym, _ in jobs:
        left[sym] = left.get(sym, 0) + 1
    answered: dict[str, list[tuple[int, Response]]] = {s: [] for s in symbols}
    parts: dict[str, list[pa.Table]] = {s: [] for s in symbols}

    def ended(i: int, outcome: Outcome[Response]) -> None:
        sym = jobs[i][0]
        if outcome.error is not None:
            errors.setdefault(sym, outcome.error)
        elif outcome.result is not None:
            answered[sym].append((i, outcome.result))
        left[sym] -= 1
        if left[sym] == 0 and sym not in errors:
            done = sorted(answered.pop(sym), key=lambda ir: ir[0])  # the windows in time order
            converted = client.convert_all([jobs[k][1] for k, _ in done], [r for _, r in done])
            for out in converted:
                if out.error is not None:
                    errors.setdefault(sym, out.error)
                elif out.result is not None:
                    parts[sym].append(out.result.table)
        if bar is not None:
            bar.update(1)

    try:
        client.receive_all([p for _, p in jobs], progress=ended)
    finally:
        if bar is not None:
            bar.close()
    tables = [t for s in symbols if s not in errors for t in parts[s]]  # in the order asked
    if not tables:
        return (None if errors else _empty(args)), errors
    return concat(tables), errors


def _empty(args: Arguments) -> pa.Table:
    return get(ENDPOINT).schema.arrow(minute=args.minute).empty_table()


def _via_store(
    st: Store, symbols: list[str], args: Arguments, progress: bool | None
) -> tuple[pa.Table | None, dict[str, BaseException]]:
    params: dict[str, Any] = {"fields": args.fields} if args.fields is not None else {}
    errors: dict[str, BaseException] = {}
    try:
        st.sync(
            ENDPOINT,
            symbols,
            args.start,
            args.end,
            args.timeframe,
            progress=progress,
            **params,
        )
    except SyncError as exc:
        for failure in exc.report.failures:
            if failure.symbol is not None and failure.symbol not in errors:
                errors[failure.symbol] = SyncError(exc.report)
    ok = [s for s in symbols if s not in errors]
    if not ok:
        return None, errors
    table = st.read(ENDPOINT, ok, args.start, args.end, args.timeframe, backend="arrow", **params)
    return table, errors
