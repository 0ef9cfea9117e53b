"""ENDPOINTS: one row per REST endpoint of the service.

The client tree (``client.stock.intraday.quote``), parameter validation, the CLI and
``docs/endpoints.md`` are all generated from this table. Adding an endpoint is one row here plus
a schema in :mod:`marketframe.schemas` and one recorded payload in the tests.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from marketframe.schemas import SCHEMAS, Schema

#: Timeframes of historical and technical endpoints; the first seven are minutes.
MINUTE_TIMEFRAMES = ("1", "3", "5", "10", "15", "30", "60")
TIMEFRAMES = (*MINUTE_TIMEFRAMES, "D", "W", "M")
MARKETS = ("TSE", "OTC", "ESB", "TIB", "PSB")
HISTORICAL_FIELDS = ("open", "high", "low", "close", "volume", "turnover", "change")

#: Earliest data: stocks from 2010, indices (symbols starting with IX) from 2015.
#: the service's time zone: Asia/Taipei, UTC+8 all year (no daylight saving)
TAIPEI = dt.timezone(dt.timedelta(hours=8))

EARLIEST = MappingProxyType({"stock": dt.date(2010, 1, 1), "index": dt.date(2015, 1, 1)})

#: Cache freshness classes, in seconds (None: decided per request; see ``_transport``).
FRESHNESS = MappingProxyType(
    {
        "snapshot": 5,  # snapshots refresh every five seconds
        "intraday": 2,  # live data: short
        "historical": None,  # permanent when the range ends before today, else 60 s
        "reference": None,  # until the next trading day's 08:00 Asia/Taipei
    }
)


@dataclass(frozen=True)
class Param:
    """One query or path parameter."""

    name: str  # Python name (``from_``)
    type: str  # str, int, float, bool, date, enum, fields
    required: bool = False
    allowed: tuple[str, ...] | None = None
    doc: str = ""
    wire: str | None = None  # name on the wire when it differs (``from``)
    in_path: bool = False
    minimum: int = 0  # smallest value of an int parameter (``limit``/``period`` need 1)

    @property
    def wire_name(self) -> str:
        return self.wire or self.name


@dataclass(frozen=True)
class Endpoint:
    """One REST endpoint, described as data."""

    name: str  # dotted name mirroring the SDK: ``stock.intraday.quote``
    path: str  # relative to base_url, with ``{symbol}``-style placeholders
    params: tuple[Param, ...]
    schema_name: str
    freshness: str
    plan: str = "basic"  # basic, developer or advanced (the cheapest plan that has it)
    date_range: tuple[str, str] | None = None  # (from param, to param)
    keys: tuple[str, ...] = ()  # columns identifying a row in a dataset
    doc: str = ""
    param_map: Mapping[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_map", MappingProxyType({p.name: p for p in self.params}))

    @property
    def schema(self) -> Schema:
        return SCHEMAS[self.schema_name]

    @property
    def kind(self) -> str:
        """Response kind: ``object`` (one row) or ``rows`` (envelope + ``data`` rows)."""
        return "rows" if self.schema.rows else "object"

    @property
    def multi_param(self) -> str | None:
        """The path parameter that may be a list (one request per value)."""
        return next((p.name for p in self.params if p.in_path), None)

    @property
    def group(self) -> str:
        return self.name.split(".")[0]


# --- parameter vocabulary ----------------------------------------------------------------------


def _p(name: str, type_: str = "str", *, req: bool = False, allowed: str | None = None,
       doc: str = "", wire: str | None = None, path: bool = False, minimum: int = 0) -> Param:
    kind = "enum" if allowed is not None and type_ == "str" else type_
    return Param(name, kind, req,
                 tuple(allowed.split()) if allowed else None, doc, wire, path, minimum)


SYMBOL = _p("symbol", req=True, path=True, doc="symbol, or a list of symbols (run concurrently)")
ODDLOT = _p("type", allowed="oddlot", doc="odd-lot data")
AFTERHOURS = _p("session", allowed="afterhours", doc="after-hours session")
FROM = _p("from_", "date", wire="from", doc="first day (str, date or datetime)")
TO = _p("to", "date", doc="last day (str, date or datetime)")
FROM_REQ = _p("from_", "date", req=True, wire="from", doc=FROM.doc)
TO_REQ = _p("to", "date", req=True, doc=TO.doc)
TIMEFRAME_REQ = _p("timeframe", req=True, allowed=" ".join(TIMEFRAMES),
                   doc="minutes, or D/W/M; minute timeframes ignore from/to (latest 30 days)")
SNAPSHOT_TYPE = _p("type", allowed="ALLBUT0999 COMMONSTOCK")
MARKET_PATH = _p("market", req=True, allowed=" ".join(MARKETS), path=True,
                 doc="market board, or a list of boards")
START = _p("start_date", "date")
END = _p("end_date", "date")
SORT = _p("sort", allowed="asc desc")
LIMIT = _p("limit", "int", minimum=1, doc="rows to return (at least 1)")
FUTOPT_LIST = (
    _p("type", req=True, allowed="FUTURE OPTION"),
    _p("exchange", allowed="TAIFEX"),
    _p("session", allowed="REGULAR AFTERHOURS"),
)
CONTRACT_TYPE = _p("contractType", allowed="I R B C S E",
                   doc="I index, R rate, B bond, C commodity, S stock, E currency")


def _tech(name: str, extra: str) -> Endpoint:
    return Endpoint(
        f"stock.technical.{name}", f"/stock/technical/{name}/{{symbol}}",
        (SYMBOL, FROM_REQ, TO_REQ, TIMEFRAME_REQ,
         *[_p(e, "int", req=True, minimum=1) for e in extra.split()]),
        f"technical_{name}", "historical", date_range=("from_", "to"),
        keys=("symbol", "timeframe", "date"), doc=f"{name.upper()} (beta)",
    )


_ROWS: tuple[Endpoint, ...] = (
    Endpoint(
        "stock.intraday.tickers", "/stock/intraday/tickers",
        (
            _p("type", req=True, allowed="EQUITY INDEX WARRANT ODDLOT"),
            _p("exchange", allowed="TWSE TPEx"),
            _p("market", allowed=" ".join(MARKETS)),
            _p("industry", doc="industry code (see the code table)"),
            *[_p(b, "bool") for b in ("isNormal", "isAttention", "isDisposition", "isHalted")],
        ),
        "stock_tickers", "reference", keys=("date", "symbol"), doc="ticker list",
    ),
    Endpoint("stock.intraday.ticker", "/stock/intraday/ticker/{symbol}", (SYMBOL, ODDLOT),
             "stock_ticker", "reference", keys=("date", "symbol"), doc="ticker reference data"),
    Endpoint("stock.intraday.quote", "/stock/intraday/quote/{symbol}", (SYMBOL, ODDLOT),
             "stock_quote", "intraday", keys=("symbol",), doc="real-time quote"),
    Endpoint(
        "stock.intraday.candles", "/stock/intraday/candles/{symbol}",
        (SYMBOL, ODDLOT, _p("timeframe", allowed="1 3 5 10 15 30 60"), SORT),
        "stock_intraday_candles", "intraday", keys=("symbol", "date"), doc="minute candles",
    ),
    Endpoint(
        "stock.intraday.trades", "/stock/intraday/trades/{symbol}",
        (SYMBOL, ODDLOT, _p("offset", "int"), LIMIT, SORT, _p("isTrial", "bool")),
        "stock_trades", "intraday", keys=("symbol", "date", "serial"),
        doc="trade detail (the latest 50 by default; frames oldest first)",
    ),
    Endpoint("stock.intraday.volumes", "/stock/intraday/volumes/{symbol}", (SYMBOL, ODDLOT),
             "stock_volumes", "intraday", keys=("symbol", "price"),
             doc="price-volume distribution"),
    Endpoint("stock.snapshot.quotes", "/stock/snapshot/quotes/{market}",
             (MARKET_PATH, SNAPSHOT_TYPE), "snapshot_quotes", "snapshot", "developer",
             keys=("market", "symbol"), doc="quotes of a whole board"),
    Endpoint(
        "stock.snapshot.movers", "/stock/snapshot/movers/{market}",
        (MARKET_PATH, _p("direction", req=True, allowed="up down"),
         _p("change", req=True, allowed="percent value"), SNAPSHOT_TYPE,
         *[_p(f, "float") for f in ("gt", "gte", "lt", "lte", "eq")]),
        "snapshot_movers", "snapshot", "developer", keys=("market", "symbol"),
        doc="gainers / losers",
    ),
    Endpoint(
        "stock.snapshot.actives", "/stock/snapshot/actives/{market}",
        (MARKET_PATH, _p("trade", req=True, allowed="volume value"), SNAPSHOT_TYPE),
        "snapshot_actives", "snapshot", "developer", keys=("market", "symbol"),
        doc="most active by volume or value",
    ),
    Endpoint(
        "stock.historical.candles", "/stock/historical/candles/{symbol}",
        (SYMBOL, FROM, TO, _p("timeframe", allowed=" ".join(TIMEFRAMES)),
         _p("fields", "fields", allowed=" ".join(HISTORICAL_FIELDS),
            doc="list or comma string; turnover/change not with minute timeframes"), SORT),
        "historical_candles", "historical", date_range=("from_", "to"),
        keys=("symbol", "timeframe", "date"),
        doc="daily/weekly/monthly candles (minute: latest 30 days, no from/to)",
    ),
    Endpoint("stock.historical.stats", "/stock/historical/stats/{symbol}", (SYMBOL,),
             "historical_stats", "reference", keys=("symbol", "date"),
             doc="last day and 52-week statistics"),
    _tech("sma", "period"),
    _tech("rsi", "period"),
    _tech("kdj", "rPeriod kPeriod dPeriod"),
    _tech("macd", "fast slow signal"),
    _tech("bb", "period"),
    Endpoint("stock.corporate_actions.capital_changes", "/stock/corporate-actions/capital-changes",
             (START, END, SORT), "capital_changes", "reference", "developer",
             date_range=("start_date", "end_date"), keys=("symbol", "effective_date"),
             doc="capital changes (splits, par value, reductions)"),
    # The reference spells this path "diviends"; the official SDK requests "dividends" and the
    # service answers both. We follow the SDK.
    Endpoint("stock.corporate_actions.dividends", "/stock/corporate-actions/dividends",
             (START, END), "dividends", "reference", "developer",
             date_range=("start_date", "end_date"), keys=("symbol", "date"),
             doc="ex-rights / ex-dividend events"),
    Endpoint("stock.corporate_actions.listing_applicants",
             "/stock/corporate-actions/listing-applicants", (START, END, SORT),
             "listing_applicants", "reference", "developer",
             # a company can apply again under the same symbol: the symbol alone is no key
             date_range=("start_date", "end_date"), keys=("symbol", "application_date"),
             doc="listing applicants"),
    Endpoint("futopt.intraday.products", "/futopt/intraday/products",
             (*FUTOPT_LIST, CONTRACT_TYPE, _p("status", allowed="N P U")),
             "futopt_products", "reference", keys=("symbol",), doc="contract list (beta)"),
    Endpoint("futopt.intraday.tickers", "/futopt/intraday/tickers",
             (*FUTOPT_LIST, _p("product", doc="contract code, e.g. TXF"), CONTRACT_TYPE),
             "futopt_tickers", "reference", keys=("symbol",), doc="tradable products (beta)"),
    Endpoint("futopt.intraday.ticker", "/futopt/intraday/ticker/{symbol}", (SYMBOL, AFTERHOURS),
             "futopt_ticker", "reference", keys=("symbol",), doc="contract reference (beta)"),
    Endpoint("futopt.intraday.quote", "/futopt/intraday/quote/{symbol}", (SYMBOL, AFTERHOURS),
             "futopt_quote", "intraday", keys=("symbol",), doc="real-time quote (beta)"),
    Endpoint("futopt.intraday.candles", "/futopt/intraday/candles/{symbol}",
             (SYMBOL, AFTERHOURS, _p("timeframe", allowed="1 5 10 15 30 60")),
             "futopt_candles", "intraday", keys=("symbol", "date"), doc="minute candles (beta)"),
    Endpoint("futopt.intraday.trades", "/futopt/intraday/trades/{symbol}",
             (SYMBOL, AFTERHOURS, _p("offset", "int"), LIMIT),
             "futopt_trades", "intraday", keys=("symbol", "serial"), doc="trade detail (beta)"),
    Endpoint("futopt.intraday.volumes", "/futopt/intraday/volumes/{symbol}",
             (SYMBOL, AFTERHOURS), "futopt_volumes", "intraday", keys=("symbol", "price"),
             doc="price-volume distribution (beta)"),
)

ENDPOINTS: Mapping[str, Endpoint] = MappingProxyType({e.name: e for e in _ROWS})


def get(name: str) -> Endpoint:
    """The endpoint called ``name``; InvalidParams naming the allowed names otherwise."""
    try:
        return ENDPOINTS[name]
    except KeyError:
        from marketframe.exceptions import InvalidParams, did_you_mean

        raise InvalidParams(name, "endpoint", "is not an endpoint" + did_you_mean(name, ENDPOINTS),
                            ", ".join(ENDPOINTS)) from None
