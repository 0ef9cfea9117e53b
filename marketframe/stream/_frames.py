"""Streamed ``data`` messages -> Arrow tables, with the REST loaders' column definitions.

Each channel's schema is derived from :data:`marketframe.schemas.SCHEMAS` (the one place where
dtypes are decided): an ``aggregates`` row has exactly the columns of a REST quote
(``stock_quote``), a ``trades`` row those of a REST trade plus every trade flag and
``backfilled``; ``candles`` are REST intraday candles, ``books`` the quote's book levels. The
envelope columns of the REST schemas (``symbol``, ``type``, ...) are read from each message,
since a batch mixes symbols. Conversion goes through :func:`marketframe.convert.rows_to_table`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from marketframe.convert import Channel, rows_to_table, to_pandas, to_polars
from marketframe.exceptions import MarketframeError
from marketframe.schemas import SCHEMAS, Col, Schema, book, col, many, snake, trade_obj

_FLAGS = (
    "isLimitDownPrice isLimitUpPrice isLimitDownBid isLimitUpBid isLimitDownAsk "
    "isLimitUpAsk isLimitDownHalt isLimitUpHalt isTrial isDelayedOpen isDelayedClose "
    "isContinuous isOpen isClose"
).split()


def _rowwise(cols: list[Col] | tuple[Col, ...], drop: frozenset[str] = frozenset()) -> list[Col]:
    """The REST columns, read from each row (envelope -> row; request parameters dropped)."""
    return [
        replace(c, envelope=False, param=None)
        for c in cols
        if c.name not in drop and c.param is None
    ]


def _flag(name: str) -> Col:
    return Col(snake(name), (name,), "flag")


_BOOK = [
    replace(c, envelope=False)
    for c in SCHEMAS["stock_quote"].columns
    if c.path[0] in ("bids", "asks")
]


_HEAD = _rowwise(
    [
        c
        for c in SCHEMAS["stock_quote"].columns
        if c.name in ("type", "exchange", "market", "symbol")
    ]
)
_TRADES_REST = SCHEMAS["stock_trades"]
_trade_cols = _rowwise(_TRADES_REST.columns, drop=frozenset({"date"}))
_trade_cols += [_flag(f) for f in _FLAGS if snake(f) not in {c.name for c in _trade_cols}]
_trade_cols.append(Col("backfilled", ("backfilled",), "flag"))

#: channel -> schema of its rows (in the order of the spec)
STREAM_SCHEMAS: dict[str, Schema] = {
    "trades": Schema(tuple(_trade_cols), rows=True),
    "candles": Schema(tuple(_rowwise(SCHEMAS["stock_intraday_candles"].columns)), rows=True),
    "books": Schema((*_HEAD, *_BOOK, Col("time", ("time",), "time_us", required=True)), rows=True),
    "aggregates": Schema(tuple(_rowwise(SCHEMAS["stock_quote"].columns)), rows=True),
    "indices": Schema(
        (
            Col("symbol", ("symbol",), "str", required=True),
            Col("type", ("type",), "cat"),
            Col("exchange", ("exchange",), "cat"),
            Col("index", ("index",), "float"),
            Col("time", ("time",), "time_us", required=True),
        ),
        rows=True,
    ),
}
CHANNELS: tuple[str, ...] = tuple(STREAM_SCHEMAS)

# --- futures and options (``/futopt/streaming``, docs/streaming.md) -------------------------
# A ``trades`` frame holds a list of trades: it becomes one row per trade (the frame's
# symbol/type/... on each, ``serial``: the trade's own serial string (v1.1) as sent, padding
# kept; ``frame_serial``: the frame's number; ``total_*`` on the frame's last trade only).
_FO_HEAD = [*_HEAD[:3], replace(_HEAD[3], required=True)]
_FO_TRADES = [
    *_FO_HEAD,
    *many("float", "price bid ask"),
    col("size", "int", "contracts"),
    Col("time", ("time",), "time_us", required=True),
    col("serial", "str"),
    col("frameSerial", "int"),
    _flag("isTrial"),
    col("isReplaced", "bool"),
    *many("int", "total.tradeVolume total.totalBidMatch total.totalAskMatch", "contracts"),
    Col("backfilled", ("backfilled",), "flag"),
]
_FO_BOOKS = [
    *_FO_HEAD,
    *_rowwise(book("contracts")),
    *many("float", "derivedBid.price derivedAsk.price"),
    *many("int", "derivedBid.size derivedAsk.size", "contracts"),
    Col("time", ("time",), "time_us", required=True),
    _flag("isTrial"),
    col("serial", "int"),
]
_fo_quote = _rowwise(SCHEMAS["futopt_quote"].columns)
_fo_quote += [*_rowwise(trade_obj("lastTrial", "contracts", serial="int_str"))]
_fo_quote += [_flag(f) for f in _FLAGS if snake(f) not in {c.name for c in _fo_quote}]
#: futures/options channel -> schema of its rows
FUTOPT_STREAM_SCHEMAS: dict[str, Schema] = {
    "trades": Schema(tuple(_FO_TRADES), rows=True),
    "candles": Schema(tuple(_rowwise(SCHEMAS["futopt_candles"].columns)), rows=True),
    "books": Schema(tuple(_FO_BOOKS), rows=True),
    "aggregates": Schema(tuple(_fo_quote), rows=True),
}
FUTOPT_CHANNELS: tuple[str, ...] = tuple(FUTOPT_STREAM_SCHEMAS)
#: channel -> the row source its rows are converted for (``stream.trades``, ...), and the
#: same for futures/options (``stream.futopt.trades``, ...)
SOURCES: dict[str, Channel] = {c: Channel(f"stream.{c}", s) for c, s in STREAM_SCHEMAS.items()}
FUTOPT_SOURCES: dict[str, Channel] = {
    c: Channel(f"stream.futopt.{c}", s) for c, s in FUTOPT_STREAM_SCHEMAS.items()
}
_FRAME_KEYS = frozenset({"trades", "time", "serial", "total", "isTrial"})


def futopt_trade_rows(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The rows of a futures/options ``trades`` frame, one per trade (see above); None when
    its ``trades`` is not a list of objects."""
    trades = data.get("trades")
    if not isinstance(trades, list) or not all(isinstance(t, dict) for t in trades):
        return None
    base = {k: v for k, v in data.items() if k not in _FRAME_KEYS}
    base["frameSerial"] = data.get("serial")
    if data.get("isTrial") is True:
        base["isTrial"] = True
    rows = []
    for trade in trades:
        row = {**base, **trade}
        if trade.get("time") is None:
            row["time"] = data.get("time")
        rows.append(row)
    if rows and "total" in data:
        rows[-1]["total"] = data["total"]
    return rows


def to_table(
    channel: str, rows: list[dict[str, Any]], odd_lot: bool = False, market: str = "stock"
) -> pa.Table:
    """Rows (the ``data`` of messages of one channel) -> a typed table.

    ``odd_lot``: the rows come from odd-lot subscriptions (volumes in shares). ``market``:
    ``"futopt"`` for futures/options rows (trades already one row per trade)."""
    params = {"type": "oddlot"} if odd_lot and market == "stock" else None
    return rows_to_table(rows, (FUTOPT_SOURCES if market == "futopt" else SOURCES)[channel], params)


def to_table_sorting(
    channel: str, rows: list[dict[str, Any]], odd_lot: bool = False, market: str = "stock"
) -> tuple[pa.Table, list[tuple[dict[str, Any], str]]]:
    """Like :func:`to_table`, but rows that cannot be converted (``price: "abc"``, a missing
    required field, ...) are set aside instead of failing the whole batch: returns (the table
    of the good rows, [(bad row, why)]). Bad rows are found by halving, so a batch with one
    bad row costs about log2(rows) extra conversions."""
    try:
        return to_table(channel, rows, odd_lot, market), []
    except (MarketframeError, ValueError, TypeError, OverflowError, pa.ArrowException):
        pass
    good: list[dict[str, Any]] = []
    bad: list[tuple[dict[str, Any], str]] = []
    stack = [rows[len(rows) // 2 :], rows[: len(rows) // 2]]
    while stack:
        part = stack.pop()
        if not part:
            continue
        try:
            to_table(channel, part, odd_lot, market)
        except (MarketframeError, ValueError, TypeError, OverflowError, pa.ArrowException) as exc:
            if len(part) == 1:
                bad.append((part[0], f"{type(exc).__name__}: {exc}"))
            else:
                stack += [part[len(part) // 2 :], part[: len(part) // 2]]
            continue
        good += part
    return to_table(channel, good, odd_lot, market), bad


@dataclass(frozen=True)
class Batch:
    """Rows of one channel received together: ``.table`` (Arrow), ``.to_pandas()``,
    ``.to_polars()``. ``odd_lot`` tells whether they came from odd-lot subscriptions,
    ``after_hours`` from after-hours futures/options subscriptions; ``market``: stock or
    futopt."""

    channel: str
    table: pa.Table
    odd_lot: bool = False
    after_hours: bool = False
    market: str = "stock"

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def to_pandas(self) -> Any:
        return to_pandas(self.table)

    def to_polars(self) -> Any:
        return to_polars(self.table)

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        flag = (
            f"after_hours={self.after_hours}"
            if self.market == "futopt"
            else f"odd_lot={self.odd_lot}"
        )
        return f"Batch(channel={self.channel!r}, rows={self.num_rows}, {flag})"
