"""``marketframe.download``: candles of any number of symbols over any range, in one call.

The range is split into windows of under one year (the store's window rule), the windows of
every symbol are fetched concurrently through one :class:`~marketframe.Client` (its pacer and
retries shared by all), and the answer is one long frame sorted by symbol, then time (oldest
first). With ``store=`` the windows go through :meth:`Store.sync` instead (only what the
store lacks is fetched) and the frame is :meth:`Store.read`'s. See ``docs/loaders.md``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from marketframe.convert import check_backend, concat, to_frame
from marketframe.endpoints import MARKETS, get
from marketframe.exceptions import BatchError, InvalidParams, MarketframeError

if TYPE_CHECKING:
    from marketframe.client import Client
    from marketframe.store import Store

ENDPOINT = "stock.historical.candles"
#: windows from which ``progress=None`` shows a bar (on a terminal or in a notebook)
LONG_WORK = 20
#: the ticker type a board name expands to
BOARD_TYPE = "EQUITY"


def download(
    symbols: str | Sequence[str],
    start: Any = None,
    end: Any = None,
    *,
    timeframe: str = "D",
    adjust: str | None = None,
    fields: str | Sequence[str] | None = None,
    backend: str = "pandas",
    store: Store | str | os.PathLike[str] | None = None,
    client: Client | None = None,
    progress: bool | None = None,
) -> Any:
    """Historical candles of ``symbols`` from ``start`` to ``end`` as one long frame.

    ``symbols``: a symbol (``"2330"``), a list of them, or a board name (one of ``TSE``,
    ``OTC``, ``ESB``, ``TIB``, ``PSB``, alone or in the list) meaning every equity listed on
    it (from the tickers endpoint). ``start``/``end`` (inclusive; ``'YYYY-MM-DD'``, a date or a
    datetime): ``end`` defaults to today in Asia/Taipei and ``start`` to one year before
    ``end``; days before the service's first date (2010-01-01; indices 2015-01-01) hold no
    rows. ``timeframe``: ``D``, ``W``, ``M`` or a minute timeframe (minute candles cover
    only the latest 30 days: leave ``start``/``end`` unset). ``fields``: the price fields to
    ask for (default all). ``adjust``: ``None`` (prices as traded), ``"splits"`` or ``"all"``
    (also dividends), computed locally from the corporate actions (``docs/adjusted.md``).
    ``backend``: ``pandas``, ``polars`` or ``arrow``.

    ``store``: a :class:`~marketframe.Store` or a directory; what it lacks is synced into it,
    then the frame is read from it. ``client``: the client to use; by default, the same rule
    as the ``marketframe`` commands: the real service when ``MARKETFRAME_API_KEY`` is set,
    else an embedded sandbox (announced on stderr), closed when the call returns.
    ``progress``: a bar over the windows (None: on long work, 20 windows or more, when
    stderr is a terminal or a notebook).

    Rows are sorted by symbol, then time (oldest first); pandas dates are ``datetime64[us]``.
    Bad arguments raise :class:`~marketframe.InvalidParams` before any request. If some
    symbols fail, :class:`~marketframe.BatchError` carries the frame of the others
    (``.frame``) and each failure (``.errors``); a failed symbol never appears in part.
    """
    args = check(symbols, start, end, timeframe, adjust, fields, backend, store)
    with _session(client, store) as (session, st):
        syms = _expand(session, args["symbols"])
        if st is not None:
            table, errors = _via_store(st, syms, args, progress)
        else:
            table, errors = _fetch(session, syms, args, progress)
        if args["adjust"] is not None and table is not None:  # once, on every symbol's rows
            from marketframe.adjust import adjust_table

            table = adjust_table(session, table, args["adjust"])
    if errors:
        raise BatchError(
            "download", to_frame(table, backend) if table is not None else None, errors, len(syms)
        )
    return to_frame(table, backend)


# -- arguments ------------------------------------------------------------------------------


def check(
    symbols: Any,
    start: Any,
    end: Any,
    timeframe: Any,
    adjust: Any,
    fields: Any,
    backend: Any,
    store: Any,
) -> dict[str, Any]:
    """Every argument checked and normalised (InvalidParams before any request)."""
    from marketframe import adjust as adjusting
    from marketframe._time import taipei_today
    from marketframe.store._sync import check_range, check_symbols, resolve

    check_backend("download", backend)
    mode = adjusting.check("download", adjust, {"timeframe": timeframe})
    if store is not None and not _is_store(store) and not isinstance(store, str | os.PathLike):
        raise InvalidParams(
            "download",
            "store",
            f"has value {store!r}",
            "a marketframe.Store, a directory path, or None",
        )
    params = {"fields": fields} if fields is not None else {}
    try:
        spec = resolve(ENDPOINT, str(timeframe), params)
        items = check_symbols(spec, symbols)
        lo = hi = None
        if not spec.minute:
            today = taipei_today()
            hi_default = _date("end", end) if end is not None else today
            if start is None:
                start = hi_default - dt.timedelta(days=364)
            lo, hi = check_range(spec, start, hi_default, today)  # type: ignore[misc]
        else:
            check_range(spec, start, end, taipei_today())
    except InvalidParams as exc:  # the store's checks, named after this call
        raise _renamed(exc) from None
    return {
        "spec": spec,
        "symbols": items,
        "start": lo,
        "end": hi,
        "fields": fields,
        "adjust": mode,
    }


def _renamed(exc: InvalidParams) -> InvalidParams:
    """``exc`` as raised by ``download`` (its message names the call the user made)."""
    head = f"{exc.endpoint}: parameter {exc.param!r} "
    problem = str(exc).removeprefix(head)
    if exc.allowed:
        problem = problem.removesuffix(f"; allowed: {exc.allowed}")
    return InvalidParams("download", exc.param, problem, exc.allowed)


def _date(name: str, value: Any) -> dt.date:
    from marketframe._params import to_date

    return to_date("download", name, value)


def _is_store(obj: Any) -> bool:
    from marketframe.store import Store

    return isinstance(obj, Store)


@contextmanager
def _session(client: Client | None, store: Any) -> Iterator[tuple[Any, Store | None]]:
    """The client (the given one, the store's, or the commands' rule) and the store."""
    from marketframe.store import Store

    if _is_store(store):
        yield store.client if client is None else client, store
        return
    if client is not None:
        yield client, (Store(store, client) if store is not None else None)
        return
    from marketframe._connect import connect

    with connect(backend="arrow", cache=False) as session:
        yield session, (Store(store, session) if store is not None else None)


def _expand(client: Any, items: list[str]) -> list[str]:
    """Board names -> the equities listed on them (the tickers endpoint); duplicates dropped."""
    out: list[str] = []
    for item in items:
        if item in MARKETS:
            table = client.fetch_table("stock.intraday.tickers", type=BOARD_TYPE, market=item)
            out += table.column("symbol").to_pylist()
        else:
            out.append(item)
    return list(dict.fromkeys(out))


# -- fetching -------------------------------------------------------------------------------


def _requests(args: dict[str, Any], symbol: str) -> list[dict[str, Any]]:
    """The under-one-year windows of one symbol as request parameters."""
    from marketframe._windows import plan

    spec = args["spec"]
    base: dict[str, Any] = {"symbol": symbol, "timeframe": spec.ds.timeframe, "sort": "asc"}
    if args["fields"] is not None:
        base["fields"] = args["fields"]
    if spec.minute:
        return [base]
    windows, _ = plan((args["start"], args["end"]), [], symbol)
    return [{**base, "from_": lo, "to": hi} for lo, hi in windows]


def _fetch(
    client: Any, symbols: list[str], args: dict[str, Any], progress: bool | None
) -> tuple[pa.Table | None, dict[str, BaseException]]:
    from marketframe import _params
    from marketframe.store._sync import _completed, _progress

    ep = get(ENDPOINT)
    jobs = [
        (s, i, _params.validate(ep, req))
        for s in symbols
        for i, req in enumerate(_requests(args, s))
    ]
    parts: dict[str, dict[int, pa.Table]] = {s: {} for s in symbols}
    errors: dict[str, BaseException] = {}
    # None: a bar on long work only, where stderr is a terminal or a notebook
    shown = progress if progress is not None or len(jobs) >= LONG_WORK else False
    bar = _progress(len(jobs), "download", shown)
    workers = int(getattr(client, "max_workers", 8) or 8)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="marketframe-download")
    try:
        futures: dict[Future[Any], Any] = {
            pool.submit(client.fetch_table, ENDPOINT, **req): (s, i) for s, i, req in jobs
        }
        for fut in _completed(futures):  # type: ignore[arg-type]
            sym, i = futures[fut]
            try:
                parts[sym][i] = fut.result()
            except MarketframeError as exc:
                errors.setdefault(sym, exc)
            if bar is not None:
                bar.update(1)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        if bar is not None:
            bar.close()
    tables = [parts[s][i] for s in sorted(symbols) if s not in errors for i in sorted(parts[s])]
    if not tables:
        return (None if errors else _empty(args)), errors
    return concat(tables), errors


def _empty(args: dict[str, Any]) -> pa.Table:
    return get(ENDPOINT).schema.arrow(minute=args["spec"].minute).empty_table()


def _via_store(
    st: Store, symbols: list[str], args: dict[str, Any], progress: bool | None
) -> tuple[pa.Table | None, dict[str, BaseException]]:
    from marketframe.store import SyncError

    spec = args["spec"]
    params = {"fields": args["fields"]} if args["fields"] is not None else {}
    errors: dict[str, BaseException] = {}
    try:
        st.sync(
            ENDPOINT,
            symbols,
            args["start"],
            args["end"],
            spec.ds.timeframe,
            progress=progress,
            **params,
        )
    except SyncError as exc:
        for failure in exc.report.failures:
            if failure.symbol is not None and failure.symbol not in errors:
                errors[failure.symbol] = SyncError(exc.report)
    ok = sorted(s for s in symbols if s not in errors)
    if not ok:
        return None, errors
    table = st.read(
        ENDPOINT, ok, args["start"], args["end"], spec.ds.timeframe, backend="arrow", **params
    )
    return table, errors
