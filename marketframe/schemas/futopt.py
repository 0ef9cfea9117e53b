"""Schemas of the futures and options endpoints (beta)."""

from __future__ import annotations

from marketframe.schemas._core import col as _c
from marketframe.schemas._core import env as _env
from marketframe.schemas._core import many as _many
from marketframe.schemas._core import schema as _schema
from marketframe.schemas._core import trade_obj as _trade_obj
from marketframe.schemas._core import trade_row as _trade_row
from marketframe.schemas.stock import _CANDLE_PRICES, _OHLC

_FUTOPT_HEADER = [
    _env("date", "date", req=True),
    _env("type", "cat", req=True),
    _env("exchange", "cat", req=True),
    _env("symbol", "str", req=True),
]

FUTOPT_PRODUCTS = _schema(
    [
        _env("exchange", "cat"),
        _env("session", "cat", param="session"),
        _c("symbol", "str", req=True),
        _c("type", "cat"),
        _c("name", "str"),
        _c("underlyingSymbol", "str"),
        _c("contractType", "cat"),
        _c("contractSize", "float"),
        _c("statusCode", "cat"),
        _c("tradingCurrency", "cat"),
        _c("quoteAcceptable", "flag"),
        _c("startDate", "date"),
        _c("canBlockTrade", "flag"),
        *_many("cat", "expiryType underlyingType"),
        _c("marketCloseGroup", "int"),
        # prod sends a string ("1" after hours), the spec a number (sdk-parity.md section 7)
        _c("endSession", "int_str"),
    ],
    rows=True,
    ignore="type contractType status",
)

FUTOPT_TICKERS = _schema(
    [
        _env("exchange", "cat"),
        _env("session", "cat", param="session"),
        _c("type", "cat"),
        _c("symbol", "str", req=True),
        _c("name", "str"),
        _c("referencePrice", "float"),
        _c("contractType", "cat"),
        *_many("date", "startDate endDate settlementDate"),
        _c("flowGroup", "int"),
        _c("isDynamicBanding", "flag"),
    ],
    rows=True,
    ignore="type product contractType",
)

FUTOPT_TICKER = _schema(
    [
        *_FUTOPT_HEADER,
        _env("name", "str"),
        _env("referencePrice", "float"),
        *_many("date", "settlementDate startDate endDate", env=True),
    ],
    rows=False,
)

FUTOPT_QUOTE = _schema(
    [
        *_FUTOPT_HEADER,
        _env("name", "str"),
        *_many(
            "float",
            f"previousClose {_OHLC} avgPrice change changePercent amplitude lastPrice",
            env=True,
        ),
        *_many("time_us", "openTime highTime lowTime closeTime lastUpdated", env=True),
        _env("lastSize", "int", "contracts"),
        _env("serial", "int_str"),
        *_many(
            "int",
            "total.tradeVolume total.totalBidMatch total.totalAskMatch",
            "contracts",
            env=True,
        ),
        _env("total.time", "time_us"),
        *_trade_obj("lastTrade", "contracts", serial="int_str"),
    ],
    rows=False,
)

FUTOPT_CANDLES = _schema(
    [
        *_FUTOPT_HEADER[1:],
        _env("market", "cat"),
        _env("timeframe", "cat", param="timeframe"),
        _c("date", "iso_time", req=True),
        *_many("float", _CANDLE_PRICES),
        _c("volume", "int", "contracts"),
        _c("average", "float"),
    ],
    rows=True,
    ignore="date",
)

FUTOPT_TRADES = _schema(
    [
        *_FUTOPT_HEADER,
        *_trade_row("contracts", "int_str"),
    ],
    rows=True,
)

FUTOPT_VOLUMES = _schema(
    [*_FUTOPT_HEADER, _c("price", "float"), _c("volume", "int", "contracts")],
    rows=True,
)

#: ``futopt.historical.*`` (the post-#727 contract, sdk-parity section 2): keyed by product;
#: each row names its own contract month (a ``1!`` request spans rolls); prices arrive as JSON
#: integers for index futures and are float64 columns whatever the wire sends.
_FUTOPT_HIST_ENV = [
    _env("product", "str", req=True, param="product"),
    _env("session", "cat", param="session"),
]

FUTOPT_HISTORICAL_DAILY = _schema(
    [
        _env("date", "date", req=True),
        *_FUTOPT_HIST_ENV,
        _c("exchange", "cat"),
        _c("contractMonth", "str", req=True),
        _c("callPut", "cat"),
        _c("strikePrice", "float"),
        *_many("float", f"{_OHLC} change changePercent"),
        *_many("int", "volume volumeSpread openInterest", "contracts"),
        _c("settlementPrice", "float"),
    ],
    rows=True,
    # the envelope's exchange is each row's; its contractMonth echoes the request
    ignore="exchange contractMonth",
)

FUTOPT_HISTORICAL_CANDLES = _schema(
    [
        *_FUTOPT_HIST_ENV,
        _env("exchange", "cat"),
        _env("timeframe", "cat", param="timeframe"),
        _env("strikePrice", "float", param="strikePrice"),
        _env("callPut", "cat", param="callPut"),
        _c("date", "date_or_time", req=True),
        _c("contractMonth", "str", req=True),
        *_many("float", _CANDLE_PRICES),
        _c("volume", "int", "contracts"),
        _c("average", "float"),
        _c("transaction", "int"),
        _c("change", "float"),
    ],
    rows=True,
    # echoes of the request (the requested contractMonth, e.g. "1!": each bar has its own)
    ignore="contractMonth sort from to fields",
)
