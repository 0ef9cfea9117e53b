"""yfinance habits over :func:`marketframe.download`, Taiwan-correct.

A thin layer: ``period=`` and ``interval=`` become ``start``/``end``/``timeframe``; Yahoo's
``.TW``/``.TWO`` suffixes are dropped (the board checked against the ticker's market);
``adjust=True`` means ``"all"``; ``layout="wide"`` (or yfinance's ``group_by``) turns the
long frame into one column per (field, symbol); an unknown symbol's error names the closest
symbol of the ticker list. Nothing here sends a request of its own but the ticker look-ups
of a suffix check and of a did-you-mean, through the same client. See docs/migration.md,
"Coming from yfinance".
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from marketframe.download._check import BOARD_ENDPOINT
from marketframe.endpoints import EARLIEST, MARKETS
from marketframe.exceptions import BatchError, InvalidParams, SymbolNotFound, did_you_mean

if TYPE_CHECKING:
    from marketframe.client import Client

#: yfinance's periods that mean something here ("1d"/"5d": the last 1 or 5 sessions)
PERIODS: tuple[str, ...] = ("1d", "5d", "1mo", "3mo", "6mo", "1y", "2y", "5y", "10y", "ytd", "max")
_MONTHS = {"1mo": 1, "3mo": 3, "6mo": 6, "1y": 12, "2y": 24, "5y": 60, "10y": 120}
#: yfinance interval -> the service's timeframe
INTERVALS: Mapping[str, str] = {
    "1m": "1",
    "3m": "3",
    "5m": "5",
    "10m": "10",
    "15m": "15",
    "30m": "30",
    "60m": "60",
    "1h": "60",
    "1d": "D",
    "1wk": "W",
    "1mo": "M",
}
#: yfinance intervals the service has no candles for -> what to use instead (the closest
#: spelling would be wrong: '3mo' is not '3m', three minutes)
NOT_OFFERED: Mapping[str, str] = {
    "2m": "'1m' or '3m'",
    "90m": "'60m' (or '1h')",
    "5d": "'1wk' (or '1d')",
    "3mo": "'1mo' and resample the monthly candles to quarters",
}
#: Yahoo's suffix -> the boards it stands for (.TW: the TWSE; .TWO: the TPEx, OTC and emerging)
SUFFIXES: Mapping[str, tuple[str, ...]] = {"TW": ("TSE",), "TWO": ("OTC", "ESB")}
#: Yahoo's index symbols -> the service's (the TAIEX, the TPEx index)
INDICES: Mapping[str, str] = {"^TWII": "IX0001", "^TWOII": "IX0043"}
#: the wide layout's fields, in yfinance's order, when the frame has them
WIDE_FIELDS = ("open", "high", "low", "close", "volume")
LAYOUTS = ("long", "wide")
GROUP_BY = ("column", "ticker")


def months_before(day: dt.date, months: int) -> dt.date:
    """The same day ``months`` calendar months earlier (the month's last day if shorter)."""
    y, m = divmod(day.year * 12 + day.month - 1 - months, 12)
    m += 1
    return dt.date(y, m, min(day.day, calendar.monthrange(y, m)[1]))


@dataclasses.dataclass(frozen=True)
class Resolved:
    """What the yfinance words say in the service's: the range (as given, or the period's),
    the timeframe and the adjustment, and what to keep of the answer."""

    start: object
    end: object
    timeframe: str
    adjust: object  # checked later, with the other arguments (``download.check``)
    #: how many of the latest sessions to keep (``period="1d"``/``"5d"``), else None
    sessions: int | None = None
    #: the first day to keep of minute candles (which come without a range), else None
    since: dt.date | None = None


def resolve(
    start: object,
    end: object,
    timeframe: str | None,
    period: str | None,
    interval: str | None,
    adjust: object,
    today: dt.date,
) -> Resolved:
    """start, end, timeframe and adjust from the yfinance words (:class:`Resolved`).
    Conflicts raise InvalidParams before any request."""
    if adjust is True:
        adjust = "all"
    elif adjust is False:
        adjust = None
    if interval is not None:
        if timeframe is not None:
            raise InvalidParams(
                "download",
                "interval",
                f"({interval!r}) and timeframe ({timeframe!r}) both given",
                "one of them: interval= (yfinance's words) or timeframe=",
            )
        if interval not in INTERVALS:
            instead = NOT_OFFERED.get(str(interval))
            why = (
                f" (the service has no such candles; use {instead})"
                if instead
                else _hint(str(interval), INTERVALS)
            )
            raise InvalidParams(
                "download", "interval", f"is {interval!r}{why}", ", ".join(INTERVALS)
            )
        timeframe = INTERVALS[interval]
    timeframe = timeframe or "D"
    minute = timeframe not in ("D", "W", "M")
    out = Resolved(start, end, timeframe, adjust)
    if period is None:
        return out
    if start is not None or end is not None:
        raise InvalidParams(
            "download",
            "period",
            f"({period!r}) cannot be combined with start/end",
            "period= alone (it ends today), or start=/end=",
        )
    if period not in PERIODS:
        raise InvalidParams(
            "download", "period", f"is {period!r}{_hint(str(period), PERIODS)}", ", ".join(PERIODS)
        )
    if period in ("1d", "5d"):
        sessions = int(period[0])
        if minute:
            return dataclasses.replace(out, sessions=sessions)
        # enough calendar days to hold the sessions, then the last N kept
        start = today - dt.timedelta(days=7 * sessions + 10)
        return dataclasses.replace(out, start=start, sessions=sessions)
    first = (
        dt.date(today.year, 1, 1)
        if period == "ytd"
        else EARLIEST["stock"]
        if period == "max"
        else months_before(today, _MONTHS[period])
    )
    if minute:
        if period not in ("1mo", "ytd") or first < today - dt.timedelta(days=31):
            raise InvalidParams(
                "download",
                "period",
                f"({period!r}) reaches past the latest 30 days, all the minute candles the "
                "service keeps",
                "1d, 5d or 1mo with a minute interval (or interval='1d' for longer)",
            )
        return dataclasses.replace(out, since=first)
    return dataclasses.replace(out, start=first)


def _hint(word: str, choices: Iterable[str]) -> str:
    return did_you_mean(word, list(choices))


def split_suffixes(
    symbols: Any, where: str = "download", name: str = "symbols"
) -> tuple[Any, dict[str, tuple[str, str]]]:
    """Symbols with Yahoo's ``.TW``/``.TWO`` dropped, and {bare: (as given, suffix)}; a
    Yahoo index symbol (``^TWII``) is refused, naming the service's (``IX0001``)."""
    if isinstance(symbols, str):
        bare, one = split_suffixes([symbols], where, name)
        return bare[0], one
    if not isinstance(symbols, Sequence):
        return symbols, {}
    out: list[Any] = []
    found: dict[str, tuple[str, str]] = {}
    for s in symbols:
        if isinstance(s, str) and s.startswith("^"):
            known = INDICES.get(s.upper())
            raise InvalidParams(
                where,
                name,
                f"has value {s!r}, a Yahoo index symbol",
                (f"{known!r} (its symbol here); other " if known else "")
                + "indices: client.stock.intraday.tickers(type='INDEX', market='TSE' or 'OTC')",
            )
        if isinstance(s, str):
            base, dot, suffix = s.rpartition(".")
            if dot and base and suffix.upper() in SUFFIXES:
                found[base] = (s, suffix.upper())
                s = base
        out.append(s)
    return out, found


def check_boards(client: Client[Any], found: Mapping[str, tuple[str, str]]) -> None:
    """Each suffixed symbol's board checked against its ticker's market (one ticker request
    each): ``2330.TWO`` is refused, naming ``2330.TW``."""
    for bare, (given, suffix) in found.items():
        try:
            row = client.fetch_table("stock.intraday.ticker", symbol=bare)
        except SymbolNotFound:
            continue  # unknown altogether: the download's own error (with a did-you-mean)
        markets = row.column("market").to_pylist() if "market" in row.column_names else []
        market = markets[0] if markets else None
        if market is not None and market not in SUFFIXES[suffix]:
            right = next((k for k, v in SUFFIXES.items() if market in v), None)
            raise InvalidParams(
                "download",
                "symbols",
                f"{given!r}: {bare} is listed on {market}, not on "
                f"{'/'.join(SUFFIXES[suffix])} as .{suffix} says",
                f"{bare}.{right} or just {bare!r}" if right else repr(bare),
            )


def known_symbols(client: Client[Any]) -> list[str]:
    """Every stock and index symbol of the ticker lists (for a did-you-mean)."""
    out: list[str] = []
    for kind in ("EQUITY", "INDEX"):
        for market in MARKETS:
            try:
                table = client.fetch_table(BOARD_ENDPOINT, type=kind, market=market)
            except Exception:  # noqa: BLE001 - a hint only: a board that fails is skipped
                continue
            out += [str(s) for s in table.column("symbol").to_pylist()]
    return list(dict.fromkeys(out))


def with_suggestions(client: Client[Any], exc: BatchError) -> BatchError:
    """``exc`` with each unknown symbol's error naming the closest known symbol."""
    unknown = {s: e for s, e in exc.errors.items() if isinstance(e, SymbolNotFound)}
    if not unknown:
        return exc
    choices = known_symbols(client)
    errors = dict(exc.errors)
    for sym, err in unknown.items():
        errors[sym] = suggested(err, _hint(sym, choices))
    total = len(errors) + _count(exc.frame)
    return BatchError(exc.endpoint, exc.frame, errors, max(total, len(errors)))


def suggested(err: SymbolNotFound, hint: str) -> SymbolNotFound:
    """A copy of ``err`` whose message carries ``hint`` ("; did you mean '2330'?")."""
    new = SymbolNotFound.__new__(type(err))
    new.suggestion = hint
    SymbolNotFound.__init__(
        new,
        err.service_message,
        status=err.status,
        endpoint=err.endpoint,
        params=err.params,
        retry_after=err.retry_after,
        plan=err.plan,
    )
    return new


def _count(frame: Any) -> int:
    """Symbols in a partial frame (for the "k of n symbols failed" count)."""
    if frame is None:
        return 0
    try:
        col = frame["symbol"] if not hasattr(frame, "column") else frame.column("symbol")
        values = col.to_pylist() if hasattr(col, "to_pylist") else list(col)
        return len(set(values))
    except Exception:  # noqa: BLE001 - a count for a message only
        return 0


def keep_recent(table: Any, sessions: int | None, since: dt.date | None) -> Any:
    """Arrow rows of the last ``sessions`` dates of each symbol, or from ``since`` on."""
    if table is None or table.num_rows == 0 or (sessions is None and since is None):
        return table
    day = (
        pc.cast(table.column("date"), pa.timestamp("us")) if "date" in table.column_names else None
    )
    if day is None:
        return table
    day = pc.cast(pc.floor_temporal(day, unit="day"), pa.date32())
    if since is not None:
        return table.filter(pc.greater_equal(day, pa.scalar(since, pa.date32())))
    syms = table.column("symbol").to_pylist()
    days = day.to_pylist()
    last: dict[str, list[dt.date]] = {}
    for s, d in zip(syms, days, strict=True):
        last.setdefault(s, []).append(d)
    n = sessions or 1
    cut = {s: sorted(set(ds))[-n:][0] for s, ds in last.items()}
    keep = [d >= cut[s] for s, d in zip(syms, days, strict=True)]
    return table.filter(pa.array(keep))


def check_layout(layout: str, group_by: str | None, backend: str) -> str:
    if layout not in LAYOUTS:
        raise InvalidParams("download", "layout", f"is {layout!r}", ", ".join(LAYOUTS))
    if group_by is not None:
        if group_by not in GROUP_BY:
            raise InvalidParams("download", "group_by", f"is {group_by!r}", ", ".join(GROUP_BY))
        layout = "wide"
    if layout == "wide" and backend == "arrow":
        raise InvalidParams(
            "download", "layout", "'wide' is a pandas or polars layout", "backend pandas or polars"
        )
    return layout


def wide(frame: Any, backend: str, group_by: str | None) -> Any:
    """The long frame as one row per date and one column per (field, symbol): pandas
    columns a MultiIndex (field, symbol), or (symbol, field) with ``group_by="ticker"``, as
    yfinance lays them out; polars columns ``close_2330`` (field by field), or ``2330_close``
    (symbol by symbol) with ``group_by="ticker"``. One dtype per field: prices float64, volume
    a nullable Int64 (a symbol without a bar on a date has a missing value)."""
    time_col = "date"
    if backend == "polars":
        import polars as pl  # an optional extra: loaded when asked for

        fields = [f for f in WIDE_FIELDS if f in frame.columns]
        syms = list(dict.fromkeys(frame["symbol"].cast(pl.Utf8).to_list()))
        out = frame.with_columns(pl.col("symbol").cast(pl.Utf8)).pivot(
            on="symbol", index=time_col, values=fields
        )
        if len(fields) == 1:  # polars names a lone value's columns by the symbol only
            out = out.rename({c: f"{fields[0]}_{c}" for c in out.columns if c != time_col})
        if group_by == "ticker":
            pairs = [(s, f) for s in syms for f in fields]
            out = out.select(time_col, *(pl.col(f"{f}_{s}").alias(f"{s}_{f}") for s, f in pairs))
        return out.sort(time_col)

    fields = [f for f in WIDE_FIELDS if f in frame.columns]
    sym = frame["symbol"].astype(str)
    order = list(dict.fromkeys(sym))
    parts = {}
    for f in fields:
        p = frame.assign(symbol=sym).pivot(index=time_col, columns="symbol", values=f)
        p = p.reindex(columns=order)
        parts[f] = p.astype("Int64" if f == "volume" else "float64")
    out = pd.concat(parts, axis=1, names=["field", "symbol"]).sort_index()
    if group_by == "ticker":
        out = out.swaplevel(0, 1, axis=1).sort_index(axis=1, level=0, sort_remaining=False)
        out = out.reindex(columns=pd.MultiIndex.from_product([order, fields]))
        out.columns.names = ["symbol", "field"]
    return out
