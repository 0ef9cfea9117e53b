"""The store's point-in-time universe: a daily archive of the tickers list, and for the days
before it a reconstruction from the stored daily candles (``Store.universe``).

The service's tickers list answers for today only. ``store.sync("universe")`` records the
day's list, every board and type, as one file a day, recorded in the store's log like every
other file (verified, kept by snapshots and backups)::

    <root>/dataset=universe/params=archive/<YYYY-MM-DD>.parquet   (the service's session date)

A day's row: ``date, symbol, name, type, etf, exchange, market, status, source``. ``status`` is
``SUSPENDED`` for a symbol the list's ``isHalted`` filter names, else ``NORMAL``; a symbol
the list no longer holds is not listed (the service's ticker then says ``TERMINATED``).
``etf``: an equity whose code begins with ``00`` (the exchanges' numbering of ETFs).

``store.universe(as_of=D)`` answers the newest archived day on or before ``D``. For a day
before the archive it reconstructs the list from the stored daily candles
(``stock.historical.candles``, timeframe ``D``): a symbol is listed from its first stored bar;
one whose bars end before the end of its synced range (and which the archive's first day does
not list) is taken as delisted after its last bar; a session without a bar between is a
suspension. Each row says where it came from in ``source``: ``archive`` or ``reconstructed``.
See docs/universe.md.
"""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from marketframe._time import taipei_today
from marketframe.endpoints import spelled, to_date
from marketframe.exceptions import InvalidParams, NotSynced
from marketframe.store import _io
from marketframe.store._dataset import NO_SYMBOL, UNIVERSE, resolve
from marketframe.store._parts import Parts
from marketframe.store._report import Failure, SyncReport
from marketframe.store._sync._batch import Batch, Unit
from marketframe.store._upsert import Written

#: the name ``Store.sync`` takes for the archive
ENDPOINT = "universe"
#: what the archive's writers lock (a dataset of its own, without symbols)
DATASET = UNIVERSE
TICKERS = "stock.intraday.tickers"
CANDLES = "stock.historical.candles"
#: the boards the archive asks for, and the listed types of each (the emerging board lists
#: equities only)
LISTED_MARKETS = ("TSE", "OTC", "ESB")
LISTED = {"TSE": ("EQUITY", "INDEX", "WARRANT"), "OTC": ("EQUITY", "INDEX", "WARRANT")}
#: what ``type=`` accepts: the service's types, and ``ETF`` (the equities that are ETFs)
TYPES = ("EQUITY", "ETF", "INDEX", "WARRANT")
#: what ``board=`` accepts: an exchange, or a market of one
EXCHANGES = ("TWSE", "TPEx")
BOARDS = (*EXCHANGES, *LISTED_MARKETS)

_TYPES: dict[str, pa.DataType] = {"date": pa.date32(), "etf": pa.bool_()}
_NAMES = ("date", "symbol", "name", "type", "etf", "exchange", "market", "status", "source")
SCHEMA = pa.schema([pa.field(k, _TYPES.get(k, pa.string())) for k in _NAMES])


def check(as_of: Any, board: Any, type_: Any) -> tuple[dt.date, str | None, str | None]:
    """The arguments of ``Store.universe``, checked before anything is read or sent."""
    where = "Store.universe"
    day = taipei_today() if as_of is None else to_date(where, "as_of", as_of)
    return day, _spelled(where, "board", board, BOARDS), _spelled(where, "type", type_, TYPES)


def _spelled(where: str, name: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    """``value`` as ``allowed`` spells it, in any case (``"tpex"`` is ``"TPEx"``)."""
    if value is None:
        return None
    got = spelled(value, allowed)
    if got is None:
        raise InvalidParams(where, name, f"has value {value!r}", ", ".join(allowed))
    return got


def _is_etf(symbol: str, type_: str) -> bool:
    return type_ == "EQUITY" and symbol.startswith("00")


# -- the archive ------------------------------------------------------------------------------


def record(
    parts: Parts,
    symbols: Any,
    start: Any,
    end: Any,
    timeframe: Any,
    today: Any,
    params: dict[str, Any],
) -> SyncReport:
    """``store.sync("universe")``: fetch today's lists (every listed type and board, and the
    halted ones) and write them as the archive's file of the service's day."""
    where = "Store.sync"
    given = (("symbols", symbols), ("start", start), ("end", end), ("timeframe", timeframe))
    for name, value in (*given, ("today", today)):
        if value is not None:
            raise InvalidParams(
                where, name, f"is not accepted for {ENDPOINT!r}: it records today's list", "None"
            )
    if params:
        raise InvalidParams(
            where, sorted(params)[0], f"is not accepted for {ENDPOINT!r}", "no parameters"
        )
    report = SyncReport(DATASET.key)
    client = parts.client
    asks: list[tuple[str, str, bool]] = [
        (t, m, False) for m in LISTED_MARKETS for t in LISTED.get(m, ("EQUITY",))
    ]
    asks += [("EQUITY", m, True) for m in LISTED_MARKETS]
    jobs = [
        client.prepare(TICKERS, refresh=True, type=t, market=m, **({"isHalted": True} if h else {}))
        for t, m, h in asks
    ]
    before = client.stats()
    answers = client.send_all(jobs)
    after = client.stats()
    report.requests = after.requests - before.requests
    report.retries = after.retries - before.retries
    tables: list[tuple[str, str, pa.Table]] = []
    halted: set[str] = set()
    for (t, m, h), got in zip(asks, answers, strict=True):
        if got.error is not None:
            report.failures.append(
                Failure(None, None, None, f"{type(got.error).__name__}: {got.error}")
            )
            continue
        assert got.result is not None
        table = got.result.table
        report.rows_received += table.num_rows
        if h:
            halted.update(str(s) for s in table.column("symbol").to_pylist())
        else:
            tables.append((t, m, table))
    if report.failures:  # a day's list is recorded whole or not at all
        return report
    days = [d for _, _, tb in tables for d in tb.column("date").to_pylist() if d is not None]
    day = max(days) if days else taipei_today()
    rows: dict[str, list[Any]] = {k: [] for k in SCHEMA.names}
    for t, _, tb in tables:
        for row in tb.select(["symbol", "name", "exchange", "market"]).to_pylist():
            sym = str(row["symbol"])
            for k, v in (
                ("date", day),
                ("symbol", sym),
                ("name", row["name"]),
                ("type", t),
                ("etf", _is_etf(sym, t)),
                ("exchange", row["exchange"]),
                ("market", row["market"]),
                ("status", "SUSPENDED" if sym in halted and t == "EQUITY" else "NORMAL"),
                ("source", "archive"),
            ):
                rows[k].append(v)
    out = pa.table(rows, schema=SCHEMA)
    data = _io.serialize(out)  # as every file of the store
    rel = _rel(day)
    with parts.locked(DATASET, [NO_SYMBOL], writing=f"sync {ENDPOINT}"):
        parts.caught_up()  # another process may have recorded the day while we fetched
        # one commit of the log, as a sync's: pending, published (a day recorded again keeps
        # the version it replaces for snapshots), then held
        staged, stamp = parts.storage.stage(rel, data)
        rec = {**Written(len(data), out.num_rows, _io.digest(data)).as_dict(), **stamp}
        batch = Batch(parts.storage, parts.log, f"sync {ENDPOINT}")
        batch.add(Unit(DATASET, {}, [(staged, rel, rec)], [(NO_SYMBOL, (day, day), day, False)]))
        batch.close()
    report.rows_written = out.num_rows
    report.windows_fetched = 1
    return report


def _rel(day: dt.date) -> str:
    """Where the archive keeps ``day``'s list, relative to the store's root."""
    return f"{_io.dataset_rel(DATASET)}/{day.isoformat()}.parquet"


def archived(log: Any) -> dict[dt.date, tuple[str, dict[str, Any]]]:
    """The days the archive holds (the log's records of them, as of ``log``), by day."""
    out: dict[dt.date, tuple[str, dict[str, Any]]] = {}
    for rel, rec in log.files(DATASET).items():
        if "hash" in rec:  # pending only: staged, never recorded as held
            out[dt.date.fromisoformat(rel.rsplit("/", 1)[-1].removesuffix(".parquet"))] = (rel, rec)
    return dict(sorted(out.items()))


def _archived(parts: Parts, got: tuple[str, dict[str, Any]]) -> pa.Table:
    rel, rec = got
    return parts.storage.read_file(rel, rec, parts.fix).cast(SCHEMA)


# -- the answer -------------------------------------------------------------------------------


def universe(parts: Parts, as_of: dt.date, board: str | None, type_: str | None) -> pa.Table:
    """The rows of ``Store.universe``: the archive's day on or before ``as_of``, else the
    reconstruction; filtered on ``board`` and ``type_``, sorted by symbol."""
    log = parts.view(None, "Store.universe")  # the log as it is now, reloaded once
    log.check()
    days = archived(log)
    held = [d for d in days if d <= as_of]
    if held:
        table = _archived(parts, days[held[-1]])
    else:
        first = _archived(parts, next(iter(days.values()))) if days else None
        table = _reconstructed(parts, as_of, first)
    if board is not None:
        column = "exchange" if board in EXCHANGES else "market"
        table = table.filter(pc.equal(table.column(column), pa.scalar(board)))
    if type_ == "ETF":
        table = table.filter(table.column("etf"))
    elif type_ is not None:
        table = table.filter(pc.equal(table.column("type"), pa.scalar(type_)))
    return table.sort_by("symbol")


def _last_session(day: dt.date) -> dt.date | None:
    """The last trading day on or before ``day`` (None before the calendar's first)."""
    from marketframe import calendar  # exchange_calendars loads only for a reconstruction

    with warnings.catch_warnings():  # a provisional year: the days known are enough here
        warnings.simplefilter("ignore")
        got = calendar.sessions_in_range(day - dt.timedelta(days=30), day)
    return got[-1].date() if len(got) else None


def _sessions(lo: dt.date, hi: dt.date) -> np.ndarray:
    """The sessions from ``lo`` to ``hi``, as days."""
    from marketframe import calendar

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = calendar.sessions_in_range(lo, hi)
    return np.asarray(got.values.astype("datetime64[D]"))


#: the daily bars' columns a reconstruction reads
_BAR_FIELDS: list[pa.Field[Any]] = [
    pa.field("symbol", pa.string()),
    pa.field("date", pa.date32()),
    pa.field("type", pa.string()),
    pa.field("exchange", pa.string()),
    pa.field("market", pa.string()),
]
_BAR_SCHEMA = pa.schema(_BAR_FIELDS)


class _Bars:
    """What a reconstruction needs of the stored daily bars, made once a log generation
    (a backtest that asks for one day after another reads the bars once, not once a day):
    the bars' five columns sorted by symbol then date, each symbol's rows
    (``starts``/``stops``) and last bar, its last synced day, and the sessions after the
    earliest last bar."""

    def __init__(self, parts: Parts, log: Any):
        ds = resolve(CANDLES, "D", {}).ds
        self.ends: dict[str, dt.date] = {}
        for sym in log.symbols(ds):
            spans = [iv[1] for ivs in log.intervals(ds, sym).values() for iv in ivs]
            if spans:
                self.ends[sym] = max(spans)
        cols = list(_BAR_SCHEMA.names)
        read = [
            parts.storage.read_file(rel, rec, parts.fix, cols).select(cols).cast(_BAR_SCHEMA)
            for rel, rec in _io.recorded(log.files(ds), None, None, ds)
        ]
        read = [t for t in read if t.num_rows]
        self.table = (
            pa.concat_tables(read).sort_by([("symbol", "ascending"), ("date", "ascending")])
            if read
            else _BAR_SCHEMA.empty_table()
        )
        symbols = np.asarray(self.table.column("symbol").to_numpy(zero_copy_only=False), str)
        self.symbols = symbols
        self.dates = (
            self.table.column("date").to_numpy(zero_copy_only=False).astype("datetime64[D]")
        )
        cut = np.flatnonzero(symbols[1:] != symbols[:-1]) + 1
        self.starts, self.stops = np.r_[0, cut], np.r_[cut, len(symbols)]
        self.lasts = self.dates[self.stops - 1] if len(symbols) else self.dates[:0]
        self.held = self.dates[:0]
        if len(symbols) and self.ends:
            since = (self.lasts.min() + np.timedelta64(1, "D")).item()
            until = max(self.ends.values())
            if since <= until:
                self.held = _sessions(since, until)


def _bars(parts: Parts) -> _Bars:
    """The daily bars of the store's current generation (kept while it is current)."""
    log = parts.log
    memo = parts.memo.get("universe.bars")
    if memo is None or memo[0] != log.generation:
        memo = parts.memo["universe.bars"] = (log.generation, _Bars(parts, log))
    bars: _Bars = memo[1]
    return bars


def _reconstructed(parts: Parts, as_of: dt.date, first: pa.Table | None) -> pa.Table:
    """The list on the last session on or before ``as_of``, from the stored daily bars."""
    got = _bars(parts)
    ends = got.ends
    if not ends:
        raise NotSynced(
            "the universe",
            [(as_of.isoformat(), None, None)],
            "store.sync('universe') (records the list from today on) or "
            f"store.sync({CANDLES!r}, symbols, start) (a reconstruction from the bars)",
        )
    day = _last_session(as_of)
    rows: dict[str, list[Any]] = {k: [] for k in SCHEMA.names}
    if day is None or not got.table.num_rows:
        return pa.table(rows, schema=SCHEMA)
    # what the archive's first day lists is still listed then: a gap before is a suspension
    later = {} if first is None else {r["symbol"]: r for r in first.to_pylist()}
    bars, symbols, dates, held = got.table, got.symbols, got.dates, got.held
    starts, stops, lasts = got.starts, got.stops, got.lasts
    d = np.datetime64(day, "D")
    known: list[int] = []
    for lo, hi, last in zip(starts, stops, lasts, strict=True):
        sym = str(symbols[lo])
        if dates[lo] > d:
            continue  # not listed yet
        end = np.datetime64(ends[sym], "D")
        missed = np.searchsorted(held, end, "right") - np.searchsorted(held, last, "right")
        if d > last and sym not in later and missed > 0:
            continue  # its bars end before the end of its synced range: delisted
        known.append(lo + int(np.searchsorted(dates[lo:hi], d, "right")) - 1)  # last bar <= day
    taken = bars.take(known)
    syms = taken.column("symbol").to_pylist()
    types = taken.column("type").to_pylist()
    rows["date"] = [day] * len(known)
    rows["symbol"] = syms
    rows["name"] = [later[s]["name"] if s in later else None for s in syms]
    rows["type"] = types
    rows["etf"] = [_is_etf(str(s), str(t)) for s, t in zip(syms, types, strict=True)]
    rows["exchange"] = taken.column("exchange").to_pylist()
    rows["market"] = taken.column("market").to_pylist()
    rows["status"] = ["NORMAL" if x == d else "SUSPENDED" for x in dates[known]]
    rows["source"] = ["reconstructed"] * len(known)
    return pa.table(rows, schema=SCHEMA)
