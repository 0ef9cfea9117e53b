"""Arrow schemas: the one place where column names, dtypes and units are decided.

A schema lists :class:`Col` entries. Each column says where its value lives in the JSON payload
(``path``: a key, a nested key such as ``("total", "tradeVolume")`` or a book level such as
``("bids", 0, "price")``), whether it comes from the envelope or from each row of ``data``, the
*kind* of wire value it accepts, and the unit of volume-like columns. :mod:`marketframe.convert`
is the only consumer; the Arrow type of each kind is fixed in :data:`ARROW_TYPES`.

Units: ``lots`` (1 lot = ``board_lot`` shares, usually 1000), ``shares``, ``TWD``, ``contracts``,
``seconds``, ``shares per 1000 shares`` and ``thousand TWD``. Intraday stock volumes are in lots for
whole-lot stocks but in shares for odd-lot requests and emerging-board stocks, and an index's
"volume" is turnover in TWD: :func:`resolve_unit` turns ``lots`` into the unit of one response.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

TZ = "Asia/Taipei"

#: kind -> Arrow type of the column (``date_or_time`` is a date for D/W/M, a timestamp otherwise).
ARROW_TYPES: dict[str, pa.DataType] = {
    "float": pa.float64(),
    "int": pa.int64(),
    "int_str": pa.int64(),  # an integer that may arrive as a zero-padded string ("00379320")
    "time_us": pa.timestamp("us", tz=TZ),  # epoch microseconds
    "iso_time": pa.timestamp("us", tz=TZ),  # ISO 8601 with offset
    "hhmmss": pa.timestamp("us", tz=TZ),  # snapshot "133500" combined with the envelope date
    "date": pa.date32(),
    "date_or_time": pa.date32(),
    "str": pa.string(),
    "cat": pa.dictionary(pa.int32(), pa.string()),
    "flag": pa.bool_(),  # sent only when true: absent means False
}

#: kind -> Arrow type of the JSON value as read, before the kind's final conversion
JSON_TYPES: dict[str, pa.DataType] = {
    "float": pa.float64(), "int": pa.int64(), "int_str": pa.int64(), "time_us": pa.int64(),
    "flag": pa.bool_(), "str": pa.string(), "cat": pa.string(), "date": pa.string(),
    "iso_time": pa.string(), "date_or_time": pa.string(), "hhmmss": pa.string(),
}


def resolve_unit(unit: str, type_: str | None, market: str | None, oddlot: bool) -> str:
    """The unit of a ``lots`` column in one response (others are fixed)."""
    if unit != "lots":
        return unit
    if type_ == "INDEX":
        return "TWD"
    if oddlot or market in ("ESB", "PSB"):
        return "shares"
    return "lots"


def snake(name: str) -> str:
    """camelCase -> snake_case: ``isLimitUpPrice`` -> ``is_limit_up_price``."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


@dataclass(frozen=True)
class Col:
    """One output column."""

    name: str
    path: tuple[str | int, ...]
    kind: str
    unit: str | None = None
    envelope: bool = False
    required: bool = False
    param: str | None = None  # envelope value missing -> take this request parameter's value

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW_TYPES[self.kind]

    @property
    def wire_name(self) -> str:
        return ".".join(str(p) for p in self.path)


@dataclass(frozen=True)
class Schema:
    """The columns of one endpoint's frame and how the payload holds them."""

    columns: tuple[Col, ...]
    rows: bool  # True: one row per item of ``data``; False: the payload is one row
    ignore: frozenset[str] = field(default_factory=frozenset)  # envelope echoes not kept

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def arrow(self, minute: bool = False) -> pa.Schema:
        """The Arrow schema (``minute``: date_or_time columns are timestamps)."""
        fields = []
        for c in self.columns:
            t = c.arrow_type
            if c.kind == "date_or_time" and minute:
                t = ARROW_TYPES["iso_time"]
            meta = {"unit": c.unit} if c.unit else None
            fields.append(pa.field(c.name, t, nullable=not c.required, metadata=meta))
        return pa.schema(fields)

    @property
    def units(self) -> dict[str, str]:
        return {c.name: c.unit for c in self.columns if c.unit}


# --- a small vocabulary to write schemas as data -------------------------------------------


def _c(spec: str, kind: str, unit: str | None = None, *, env: bool = False, req: bool = False,
       name: str | None = None, param: str | None = None) -> Col:
    path = tuple(spec.split("."))
    return Col(name or "_".join(snake(p) for p in path), path, kind, unit, env, req, param)


def _env(spec: str, kind: str, unit: str | None = None, **kw: object) -> Col:
    return _c(spec, kind, unit, env=True, **kw)  # type: ignore[arg-type]


def _many(kind: str, specs: str, unit: str | None = None, env: bool = False) -> list[Col]:
    return [_c(s, kind, unit, env=env) for s in specs.split()]


def _book(unit: str) -> list[Col]:
    cols = []
    for side, short in (("bids", "bid"), ("asks", "ask")):
        for i in range(5):
            cols.append(Col(f"{short}_price_{i + 1}", (side, i, "price"), "float", None, True))
            cols.append(Col(f"{short}_size_{i + 1}", (side, i, "size"), "int", unit, True))
    return cols


def _trade_obj(prefix: str, unit: str, serial: str = "int") -> list[Col]:
    return [
        *_many("float", f"{prefix}.bid {prefix}.ask {prefix}.price", env=True),
        _env(f"{prefix}.size", "int", unit),
        _env(f"{prefix}.time", "time_us"),
        _env(f"{prefix}.serial", serial),
    ]


def _schema(cols: list[Col], rows: bool, ignore: str = "") -> Schema:
    names = [c.name for c in cols]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate columns {dup}"
    return Schema(tuple(cols), rows, frozenset(ignore.split()))


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
_HEADER_CANDLES = [_env("type", "cat"), _env("exchange", "cat"), _env("market", "cat"),
                   _env("symbol", "str", req=True, param="symbol")]
_FLAGS_QUOTE = (
    "isLimitDownPrice isLimitUpPrice isLimitDownBid isLimitUpBid isLimitDownAsk isLimitUpAsk "
    "isLimitDownHalt isLimitUpHalt isTrial isDelayedOpen isDelayedClose isContinuous isOpen isClose"
)
_OHLC = "openPrice highPrice lowPrice closePrice"
_CANDLE_PRICES = "open high low close"
_TECH_ENV = [_env("symbol", "str", req=True), _env("timeframe", "cat", param="timeframe")]
_TECH_IGNORE = "from to"


def _tech(params: str, values: str, ignore: str = "") -> Schema:
    cols = [*_TECH_ENV, *[_env(p, "int", param=p) for p in params.split()]]
    cols += [_c("date", "date_or_time", req=True), *_many("float", values)]
    return _schema(cols, True, f"{_TECH_IGNORE} {ignore}")


_STOCK_QUOTE = _schema(
    [
        *_HEADER,
        _env("name", "str"),
        *_many("float", f"referencePrice previousClose {_OHLC} avgPrice change changePercent "
               "amplitude lastPrice", env=True),
        *_many("time_us", "openTime highTime lowTime closeTime lastUpdated", env=True),
        _env("lastSize", "int", "lots"),
        _env("serial", "int"),
        *_book("lots"),
        _env("total.tradeValue", "float", "TWD"),
        *_many("int", "total.tradeVolume total.tradeVolumeAtBid total.tradeVolumeAtAsk", "lots",
               env=True),
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

_STOCK_TICKER = _schema(
    [
        *_HEADER,
        _env("name", "str"),
        _env("nameEn", "str"),
        _env("industry", "cat"),
        _env("securityType", "cat"),
        *_many("float", "previousClose referencePrice limitUpPrice limitDownPrice", env=True),
        *_many("flag", "canDayTrade canBuyDayTrade canBelowFlatMarginShortSell "
               "canBelowFlatSBLShortSell isAttention isDisposition isUnusuallyRecommended "
               "isSpecificAbnormally", env=True),
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

_FUTOPT_HEADER = [
    _env("date", "date", req=True),
    _env("type", "cat", req=True),
    _env("exchange", "cat", req=True),
    _env("symbol", "str", req=True),
]

SCHEMAS: dict[str, Schema] = {
    "stock_tickers": _schema(
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
    ),
    "stock_ticker": _STOCK_TICKER,
    "stock_quote": _STOCK_QUOTE,
    "stock_intraday_candles": _schema(
        [*_HEADER_NODATE, _env("timeframe", "cat", param="timeframe"), *_CANDLE_ROW_INTRADAY],
        rows=True,
        ignore="date",
    ),
    "stock_trades": _schema(
        [
            *_HEADER,
            *_many("float", "bid ask price"),
            _c("size", "int", "lots"),
            _c("volume", "int", "lots"),
            _c("time", "time_us", req=True),
            _c("serial", "int"),
            _c("isTrial", "flag"),
        ],
        rows=True,
    ),
    "stock_volumes": _schema(
        [*_HEADER, _c("price", "float"), *_many("int", "volume volumeAtBid volumeAtAsk", "lots")],
        rows=True,
    ),
    "snapshot_quotes": _schema([*_SNAPSHOT_ENV, *_SNAPSHOT_ROW], rows=True),
    "snapshot_movers": _schema(
        [
            *_SNAPSHOT_ENV,
            _env("change", "cat", name="change_kind", param="change"),
            _env("direction", "cat", param="direction"),
            *_SNAPSHOT_ROW,
        ],
        rows=True,
    ),
    "snapshot_actives": _schema(
        [*_SNAPSHOT_ENV, _env("trade", "cat", name="trade_kind", param="trade"), *_SNAPSHOT_ROW],
        rows=True,
    ),
    "historical_candles": _schema(
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
    ),
    "historical_stats": _schema(
        [
            *_HEADER,
            _env("name", "str"),
            *_many("float", f"{_OHLC} change changePercent", env=True),
            _env("tradeVolume", "int", "lots"),
            _env("tradeValue", "float", "TWD"),
            *_many("float", "previousClose week52High week52Low", env=True),
        ],
        rows=False,
    ),
    "technical_sma": _tech("period", "sma"),
    "technical_rsi": _tech("period", "rsi"),
    "technical_kdj": _tech("rPeriod kPeriod dPeriod", "k d j"),
    "technical_macd": _tech("fast slow signal", "macdLine signalLine"),
    # The field table says fast/slow/signal are echoed, the sample echoes period. A BB request
    # has no fast/slow/signal, so an echo of them carries nothing: accepted and ignored rather
    # than kept as three always-null columns.
    "technical_bb": _tech("period", "upper middle lower", ignore="fast slow signal"),
    "capital_changes": _schema(
        [
            _c("symbol", "str", req=True),
            _c("name", "str"),
            _c("exchange", "cat"),
            _c("actionType", "cat"),
            *_many("date", "effectiveDate haltDate resumeDate"),
            _c("adjustmentFactor", "float"),
            *_many("float", "raw.reductionRatio raw.splitRatio raw.parValueBefore "
                   "raw.parValueAfter raw.lastClosePrice raw.previousClose raw.referencePrice "
                   "raw.limitUpPrice raw.limitDownPrice raw.openingReferencePrice "
                   "raw.refundPerShare raw.rightsOfferingRatio raw.rightsOfferingPrice "
                   "raw.exRightsReferencePrice raw.exrightReferencePrice"),
            _c("raw.sharesPerThousand", "float", "shares per 1000 shares"),
            *_many("str", "raw.splitType raw.reductionReason raw.reason"),
        ],
        rows=True,
        ignore="start_date end_date sort",
    ),
    "dividends": _schema(
        [
            _c("date", "date", req=True),
            _c("exchange", "cat"),
            _c("symbol", "str", req=True),
            _c("name", "str"),
            *_many("float", "previousClose referencePrice dividend"),
            _c("dividendType", "cat"),
            *_many("float", "limitUpPrice limitDownPrice openingReferencePrice "
                   "exdividendReferencePrice cashDividend"),
            _c("stockDividendShares", "float", "shares per 1000 shares"),
        ],
        rows=True,
        ignore="start_date end_date sort",
    ),
    "listing_applicants": _schema(
        [
            _c("symbol", "str"),
            _c("name", "str"),
            _c("exchange", "cat"),
            _c("applicationDate", "date"),
            _c("chairman", "str"),
            _c("capitalAtApplication", "float", "thousand TWD"),
            *_many("date", "reviewCommitteeDate boardApprovalDate contractFilingDate "
                   "contractApprovalDate listedDate"),
            _c("underwriter", "str"),
            _c("underwritingPrice", "float"),
            _c("remarks", "str"),
        ],
        rows=True,
        ignore="start_date end_date sort",
    ),
    "futopt_products": _schema(
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
            *_many("int", "marketCloseGroup endSession"),
        ],
        rows=True,
        ignore="type contractType status",
    ),
    "futopt_tickers": _schema(
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
    ),
    "futopt_ticker": _schema(
        [
            *_FUTOPT_HEADER,
            _env("name", "str"),
            _env("referencePrice", "float"),
            *_many("date", "settlementDate startDate endDate", env=True),
        ],
        rows=False,
    ),
    "futopt_quote": _schema(
        [
            *_FUTOPT_HEADER,
            _env("name", "str"),
            *_many("float", f"previousClose {_OHLC} avgPrice change changePercent amplitude "
                   "lastPrice", env=True),
            *_many("time_us", "openTime highTime lowTime closeTime lastUpdated", env=True),
            _env("lastSize", "int", "contracts"),
            _env("serial", "int_str"),
            *_many("int", "total.tradeVolume total.totalBidMatch total.totalAskMatch",
                   "contracts", env=True),
            _env("total.time", "time_us"),
            *_trade_obj("lastTrade", "contracts", serial="int_str"),
        ],
        rows=False,
    ),
    "futopt_candles": _schema(
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
    ),
    "futopt_trades": _schema(
        [
            *_FUTOPT_HEADER,
            *_many("float", "bid ask price"),
            _c("size", "int", "contracts"),
            _c("volume", "int", "contracts"),
            _c("time", "time_us", req=True),
            _c("serial", "int_str"),
        ],
        rows=True,
    ),
    "futopt_volumes": _schema(
        [*_FUTOPT_HEADER, _c("price", "float"), _c("volume", "int", "contracts")],
        rows=True,
    ),
}
