"""Schemas of the stock endpoints: intraday, snapshot and historical."""

from __future__ import annotations

from marketframe.schemas._core import book as _book
from marketframe.schemas._core import col as _c
from marketframe.schemas._core import env as _env
from marketframe.schemas._core import many as _many
from marketframe.schemas._core import schema as _schema
from marketframe.schemas._core import trade_obj as _trade_obj
from marketframe.schemas._core import trade_row as _trade_row

_HEADER = [
    _env("date", "date", req=True),
    _env("type", "cat", req=True),
    _env("exchange", "cat", req=True),
    _env("market", "cat"),
    _env("symbol", "str", req=True),
]
_HEADER_NODATE = _HEADER[1:]
#: historical candles: the official SDK made type/exchange/market optional when it added
#: ``adjusted`` (sdk-parity section 4), so a response may lack them; the symbol is the request's
_HEADER_CANDLES = [
    _env("type", "cat"),
    _env("exchange", "cat"),
    _env("market", "cat"),
    _env("symbol", "str", req=True, param="symbol"),
]
_FLAGS_QUOTE = (
    "isLimitDownPrice isLimitUpPrice isLimitDownBid isLimitUpBid isLimitDownAsk isLimitUpAsk "
    "isLimitDownHalt isLimitUpHalt isTrial isDelayedOpen isDelayedClose isContinuous isOpen isClose"
)
_OHLC = "openPrice highPrice lowPrice closePrice"
_CANDLE_PRICES = "open high low close"
STOCK_QUOTE = _schema(
    [
        *_HEADER,
        _env("name", "str"),
        *_many(
            "float",
            f"referencePrice previousClose {_OHLC} avgPrice change changePercent "
            "amplitude lastPrice",
            env=True,
        ),
        *_many("time_us", "openTime highTime lowTime closeTime lastUpdated", env=True),
        _env("lastSize", "int", "lots"),
        _env("serial", "int"),
        *_book("lots"),
        _env("total.tradeValue", "float", "TWD"),
        *_many(
            "int",
            "total.tradeVolume total.tradeVolumeAtBid total.tradeVolumeAtAsk",
            "lots",
            env=True,
        ),
        _env("total.transaction", "int"),
        _env("total.time", "time_us"),
        *_many("int", "total.bidOrders total.askOrders", env=True),
        *_many("int", "total.bidVolume total.askVolume", "lots", env=True),
        *_trade_obj("lastTrade", "lots"),
        *_trade_obj("lastTrial", "lots"),
        _env("tradingHalt.isHalted", "flag"),
        _env("tradingHalt.time", "time_us"),
        *_many("flag", _FLAGS_QUOTE, env=True),
    ],
    rows=False,
)

STOCK_TICKER = _schema(
    [
        *_HEADER,
        _env("name", "str"),
        _env("nameEn", "str"),
        _env("industry", "cat"),
        _env("securityType", "cat"),
        *_many("float", "previousClose referencePrice limitUpPrice limitDownPrice", env=True),
        *_many(
            "flag",
            "canDayTrade canBuyDayTrade canBelowFlatMarginShortSell "
            "canBelowFlatSBLShortSell isAttention isDisposition isUnusuallyRecommended "
            "isSpecificAbnormally",
            env=True,
        ),
        _env("matchingInterval", "int", "seconds"),
        _env("securityStatus", "cat"),
        _env("boardLot", "int", "shares"),
        _env("tradingCurrency", "cat"),
        *_many("float", "exercisePrice exerciseRatio knockInPrice knockOutPrice", env=True),
        *_many("int", "exercisedVolume cancelledVolume remainingVolume", "lots", env=True),
        _env("maturityDate", "date"),
        *_many("str", "openTime closeTime", env=True),
    ],
    rows=False,
)

_SNAPSHOT_ENV = [
    _env("date", "date", req=True),
    _env("time", "hhmmss", req=True),
    _env("market", "cat", req=True),
]
_SNAPSHOT_ROW = [
    _c("type", "cat"),
    _c("symbol", "str", req=True),
    _c("name", "str"),
    *_many("float", f"{_OHLC} change changePercent"),
    _c("tradeVolume", "int", "lots"),
    _c("tradeValue", "float", "TWD"),
    _c("lastUpdated", "time_us"),
]

_CANDLE_ROW_INTRADAY = [
    _c("date", "iso_time", req=True),
    *_many("float", _CANDLE_PRICES),
    _c("volume", "int", "lots"),
    _c("average", "float"),
]

STOCK_TICKERS = _schema(
    [
        _env("date", "date", req=True),
        _env("type", "cat", req=True),
        _env("exchange", "cat"),
        _env("market", "cat"),
        _env("industry", "cat"),
        _c("symbol", "str", req=True),
        _c("name", "str"),
    ],
    rows=True,
    ignore="isNormal isAttention isDisposition isHalted",
)

STOCK_INTRADAY_CANDLES = _schema(
    [*_HEADER_NODATE, _env("timeframe", "cat", param="timeframe"), *_CANDLE_ROW_INTRADAY],
    rows=True,
    ignore="date",
)

STOCK_TRADES = _schema(
    [
        *_HEADER,
        *_trade_row("lots"),
        _c("isTrial", "flag"),
    ],
    rows=True,
)

STOCK_VOLUMES = _schema(
    [*_HEADER, _c("price", "float"), *_many("int", "volume volumeAtBid volumeAtAsk", "lots")],
    rows=True,
)

SNAPSHOT_QUOTES = _schema([*_SNAPSHOT_ENV, *_SNAPSHOT_ROW], rows=True)

SNAPSHOT_MOVERS = _schema(
    [
        *_SNAPSHOT_ENV,
        _env("change", "cat", name="change_kind", param="change"),
        _env("direction", "cat", param="direction"),
        *_SNAPSHOT_ROW,
    ],
    rows=True,
)

SNAPSHOT_ACTIVES = _schema(
    [*_SNAPSHOT_ENV, _env("trade", "cat", name="trade_kind", param="trade"), *_SNAPSHOT_ROW],
    rows=True,
)

#: the internal heatmap (sdk-parity section 3): the index row first, then its constituents;
#: the row ``date`` is absent in period snapshots, the envelope's ``time`` in them too
SNAPSHOT_HEATMAP = _schema(
    [
        _env("date", "date", req=True),
        _env("time", "hhmmss"),
        _env("period", "cat", param="period"),
        _env("symbol", "str", req=True, name="index_symbol", param="symbol"),
        _c("date", "date", name="row_date"),
        _c("type", "cat"),
        _c("exchange", "cat"),
        _c("symbol", "str", req=True),
        _c("name", "str"),
        *_many("float", f"{_OHLC} change changePercent previousClose"),
        _c("tradeVolume", "int", "lots"),
        _c("tradeValue", "float", "TWD"),
        *_many("float", "tradeValueWeight marketValueWeight"),
        _c("industry", "cat"),
        _c("lastUpdated", "time_us"),
    ],
    rows=True,
)

HISTORICAL_CANDLES = _schema(
    [
        *_HEADER_CANDLES,
        _env("timeframe", "cat", param="timeframe"),
        _c("date", "date_or_time", req=True),
        *_many("float", _CANDLE_PRICES),
        _c("volume", "int", "shares"),
        _c("turnover", "float", "TWD"),
        _c("change", "float"),
    ],
    rows=True,
    ignore="date from to sort fields adjusted",  # adjusted: echo of the parameter
)

HISTORICAL_STATS = _schema(
    [
        *_HEADER,
        _env("name", "str"),
        *_many("float", f"{_OHLC} change changePercent", env=True),
        _env("tradeVolume", "int", "lots"),
        _env("tradeValue", "float", "TWD"),
        *_many("float", "previousClose week52High week52Low", env=True),
    ],
    rows=False,
)
