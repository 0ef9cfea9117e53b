"""ENDPOINTS: one row per REST endpoint of the service, with every rule that is its own.

The client tree (``client.stock.intraday.quote``), parameter validation, the store's windows
and warm-up, the cross-check, the CLI, ``docs/endpoints.md`` and the endpoint tests are all
generated from this table. Adding an endpoint is one row here, its schema in
:mod:`marketframe.schemas` and its handler in the sandbox (``docs/contributing.md``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from marketframe._contracts import CONTRACT_MONTH_FORMS, CONTRACT_MONTH_RE, PRODUCT_RE, product_fix
from marketframe._time import TAIPEI as TAIPEI
from marketframe.exceptions import DefinitionError
from marketframe.schemas import Schema
from marketframe.schemas import actions as actions_s
from marketframe.schemas import futopt as futopt_s
from marketframe.schemas import ownership as own_s
from marketframe.schemas import stock as stock_s
from marketframe.schemas import technical as tech_s

#: Timeframes of historical and technical endpoints; the first seven are minutes.
MINUTE_TIMEFRAMES = ("1", "3", "5", "10", "15", "30", "60")
TIMEFRAMES = (*MINUTE_TIMEFRAMES, "D", "W", "M")
MARKETS = ("TSE", "OTC", "ESB", "TIB", "PSB")
HISTORICAL_FIELDS = ("open", "high", "low", "close", "volume", "turnover", "change")
FUTOPT_FIELDS = ("open", "high", "low", "close", "volume", "average", "transaction", "change")

#: Earliest data: stocks from 2010, indices (symbols starting with IX) from 2015.

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
PLANS = ("basic", "developer", "advanced")

#: What a minute timeframe does to a row's date range: ``checked`` like any range,
#: ``forbidden`` (the service returns the latest 30 days and refuses from/to), ``ignored``
#: (required on the wire, but the service returns the latest 30 days whatever they say).
MinuteRange = Literal["checked", "forbidden", "ignored"]


@dataclass(frozen=True, kw_only=True)
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
    #: a str parameter's form (a full-match regular expression), and what to do instead: a
    #: text, or a function of the refused value (e.g. a contract code -> product and month)
    pattern: str | None = None
    fix: str | Callable[[str], str] = field(default="", compare=False)
    #: an enum accepted in any letter case and sent in the spelling of ``allowed`` (the
    #: futopt list endpoints want ``AFTERHOURS`` and silently return no rows for lower case)
    fold_case: bool = False

    @property
    def wire_name(self) -> str:
        return self.wire or self.name


@dataclass(frozen=True, kw_only=True)
class Technical:
    """What a technical-indicator row adds: how the package recomputes and audits it."""

    local: str  # the kernel's name in :mod:`marketframe.indicators`
    #: every indicator parameter -> the usual value, in the order the kernel takes them
    defaults: Mapping[str, int]
    bounded: bool  # a 0..100 oscillator (cross-check scale 100) or in price units
    #: bars the service omits at the start of a range (its warm-up), from the parameters
    warmup: Callable[[Mapping[str, Any]], int]
    inputs: tuple[str, ...] = ("close",)  # the price columns the kernel takes, in order
    #: the kernel result's fields in the order of the row's outputs (empty: one array)
    results: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """One REST endpoint, described as data; every rule of its own is a field here."""

    name: str  # dotted name mirroring the SDK: ``stock.intraday.quote``
    path: str  # relative to base_url, with ``{symbol}``-style placeholders
    params: tuple[Param, ...]
    schema: Schema  # the object itself: a misspelt schema fails at import
    freshness: str  # a key of FRESHNESS
    plan: str = "basic"  # basic, developer or advanced (the cheapest plan that has it)
    date_range: tuple[str, str] | None = None  # (from param, to param): under one year
    minute_range: MinuteRange = "checked"
    minute_fields: tuple[str, ...] | None = None  # ``fields`` allowed with minute timeframes
    minute_refused: tuple[str, ...] = ()  # flags that only daily/weekly/monthly bars take
    adjustable: bool = False  # ``adjust=``: prices adjusted locally (docs/adjusted.md)
    #: days after its date during which a row can still change (the store keeps them open)
    refresh_days: int | None = None
    technical: Technical | None = field(default=None, compare=False)  # (holds a dict)
    keys: tuple[str, ...] = ()  # columns identifying a row in a dataset
    # key columns that only tell apart rows of one date (two actions of a symbol on one day):
    # they identify a row but never order one (ties keep the service's order)
    distinct: tuple[str, ...] = ()
    #: one call that answers with rows (docs and the every-endpoint test use it)
    example: Mapping[str, Any] = field(default_factory=dict, compare=False)
    doc: str = ""
    param_map: Mapping[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_map", MappingProxyType({p.name: p for p in self.params}))
        object.__setattr__(self, "example", MappingProxyType(dict(self.example)))
        self._check()

    def _check(self) -> None:
        """A row that contradicts itself fails at import, naming the row and the field."""
        names = self.param_map
        problems = []
        if not isinstance(self.schema, Schema):
            problems.append(f"schema is a {type(self.schema).__name__}, not a Schema")
        if self.freshness not in FRESHNESS:
            problems.append(f"freshness {self.freshness!r} is not one of {list(FRESHNESS)}")
        if self.plan not in PLANS:
            problems.append(f"plan {self.plan!r} is not one of {list(PLANS)}")
        for what, used in (
            ("date_range", self.date_range or ()),
            ("example", self.example),
            ("minute_refused", self.minute_refused),
            ("technical.defaults", self.technical.defaults if self.technical else ()),
        ):
            problems += [f"{what} names {k!r}, not a parameter" for k in used if k not in names]
        if (
            self.minute_range != "checked" or self.minute_fields is not None or self.minute_refused
        ) and "timeframe" not in names:
            problems.append("minute rules without a timeframe parameter")
        if self.technical is not None and len(self.technical.results or ("",)) != len(self.outputs):
            problems.append(f"technical.results do not match the outputs {self.outputs}")
        holes = re.findall(r"{(\w+)}", self.path)
        if holes != [p.name for p in self.params if p.in_path]:
            problems.append(f"path placeholders {holes} are not its path parameters")
        missing = [k for k in self.keys if k not in self.schema.names]
        if missing:
            problems.append(f"keys {missing} are not columns of its schema")
        if self.minute_fields is not None and not set(self.minute_fields) <= set(
            names["fields"].allowed or () if "fields" in names else ()
        ):
            problems.append("minute_fields are not values of its fields parameter")
        if problems:
            raise DefinitionError(f"endpoint row {self.name!r}: " + "; ".join(problems))

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

    @property
    def short_name(self) -> str:
        """The last part of the name (``sma`` for ``stock.technical.sma``)."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def outputs(self) -> tuple[str, ...]:
        """The value columns of a technical row (all of its float row columns)."""
        return tuple(c.name for c in self.schema.columns if not c.envelope and c.kind == "float")


# --- parameter vocabulary ----------------------------------------------------------------------


def _p(
    name: str,
    type_: str = "str",
    *,
    req: bool = False,
    allowed: str | None = None,
    doc: str = "",
    wire: str | None = None,
    path: bool = False,
    minimum: int = 0,
    **form: Any,
) -> Param:
    kind = "enum" if allowed is not None and type_ == "str" else type_
    return Param(
        name=name,
        type=kind,
        required=req,
        allowed=tuple(allowed.split()) if allowed else None,
        doc=doc,
        wire=wire,
        in_path=path,
        minimum=minimum,
        **form,
    )


SYMBOL = _p("symbol", req=True, path=True, doc="symbol, or a list of symbols (run concurrently)")
ODDLOT = _p("type", allowed="oddlot", doc="odd-lot data")
AFTERHOURS = _p(
    "session", allowed="afterhours", doc="after-hours session (any case)", fold_case=True
)
FROM = _p("from_", "date", wire="from", doc="first day (str, date or datetime)")
TO = _p("to", "date", doc="last day (str, date or datetime)")
FROM_REQ = _p("from_", "date", req=True, wire="from", doc=FROM.doc)
TO_REQ = _p("to", "date", req=True, doc=TO.doc)
TIMEFRAME_REQ = _p(
    "timeframe",
    req=True,
    allowed=" ".join(TIMEFRAMES),
    doc="minutes, or D/W/M; minute timeframes ignore from/to (latest 30 days)",
)
SNAPSHOT_TYPE = _p("type", allowed="ALLBUT0999 COMMONSTOCK")
MARKET_PATH = _p(
    "market",
    req=True,
    allowed=" ".join(MARKETS),
    path=True,
    doc="market board, or a list of boards",
)
START = _p("start_date", "date")
END = _p("end_date", "date")
SORT = _p("sort", allowed="asc desc")
LIMIT = _p("limit", "int", minimum=1, doc="rows to return (at least 1)")
FUTOPT_LIST = (
    _p("type", req=True, allowed="FUTURE OPTION"),
    _p("exchange", allowed="TAIFEX"),
    _p(
        "session",
        allowed="REGULAR AFTERHOURS",
        fold_case=True,
        doc="any case; sent upper case (lower case gets no rows from the service)",
    ),
)
CONTRACT_TYPE = _p(
    "contractType",
    allowed="I R B C S E",
    doc="I index, R rate, B bond, C commodity, S stock, E currency",
)

#: futopt.historical: keyed by product (a contract code is refused, naming product and month)
PRODUCT = _p(
    "product",
    req=True,
    path=True,
    pattern=PRODUCT_RE,
    fix=product_fix,
    doc="product code (TXF, MXF, TXO), or a list of products",
)
CONTRACT_MONTH = _p(
    "contractMonth",
    pattern=CONTRACT_MONTH_RE,
    fix=CONTRACT_MONTH_FORMS,
    doc="YYYYMM, YYYYMMWn/Fn, YYYYMM/YYYYMM or 1!/2!/3!",
)
HIST_SESSION = _p("session", allowed="afterhours regular", doc="afterhours: night session")

#: example values of the rows (the sandbox has all of them)
_STOCK = {"symbol": "2330"}
_BOARD = {"market": "TSE"}
_FUTOPT = {"symbol": "TXFL6"}
_RANGE = {**_STOCK, "from_": "2024-01-01", "to": "2024-06-30", "timeframe": "D"}


def _tech(name: str, schema: Schema, technical: Technical) -> Endpoint:
    return Endpoint(
        name=f"stock.technical.{name}",
        path=f"/stock/technical/{name}/{{symbol}}",
        params=(
            SYMBOL,
            FROM_REQ,
            TO_REQ,
            TIMEFRAME_REQ,
            *[_p(e, "int", req=True, minimum=1) for e in technical.defaults],
        ),
        schema=schema,
        freshness="historical",
        date_range=("from_", "to"),
        minute_range="ignored",
        technical=technical,
        keys=("symbol", "timeframe", "date"),
        example={**_RANGE, **technical.defaults},
        doc=f"{name.upper()} (beta)",
    )


def _intraday(
    name: str,
    schema: Schema,
    doc: str,
    *extra: Param,
    keys: tuple[str, ...],
    freshness: str = "intraday",
) -> Endpoint:
    """A stock intraday row: ``/stock/intraday/NAME/{symbol}``, odd-lot or not."""
    return Endpoint(
        name=f"stock.intraday.{name}",
        path=f"/stock/intraday/{name}/{{symbol}}",
        params=(SYMBOL, ODDLOT, *extra),
        schema=schema,
        freshness=freshness,
        keys=keys,
        example=_STOCK,
        doc=doc,
    )


def _futopt(
    name: str,
    schema: Schema,
    freshness: str,
    doc: str,
    *extra: Param,
    keys: tuple[str, ...] = ("symbol",),
) -> Endpoint:
    """A futures/options row of one contract: ``/futopt/intraday/NAME/{symbol}``."""
    return Endpoint(
        name=f"futopt.intraday.{name}",
        path=f"/futopt/intraday/{name}/{{symbol}}",
        params=(SYMBOL, AFTERHOURS, *extra),
        schema=schema,
        freshness=freshness,
        keys=keys,
        example=_FUTOPT,
        doc=f"{doc} (beta)",
    )


def _action(
    name: str,
    schema: Schema,
    doc: str,
    *,
    sort: bool,
    keys: tuple[str, ...],
    year: int = 2024,
    **rules: Any,
) -> Endpoint:
    """A corporate-action row: every symbol at once, over ``start_date``..``end_date``."""
    return Endpoint(
        name=f"stock.corporate_actions.{name}",
        path=f"/stock/corporate-actions/{name.replace('_', '-')}",
        params=(START, END, *((SORT,) if sort else ())),
        schema=schema,
        freshness="reference",
        plan="developer",
        date_range=("start_date", "end_date"),
        keys=keys,
        example={"start_date": f"{year}-01-01", "end_date": f"{year}-12-31"},
        doc=doc,
        **rules,
    )


def _ownership(
    name: str,
    schema: Schema,
    doc: str,
    *,
    keys: tuple[str, ...],
    symbol: str = "2330",
    refresh_days: int = 7,
    **rules: Any,
) -> Endpoint:
    """A ``stock.ownership`` row: ``from``/``to``/``sort`` and nothing else (the service's
    whole contract for the four; the ``code`` filter of etf-holdings was dropped).

    When the service publishes a day's rows is unknown (disclosures and TDCC's weekly data
    may come a day or more late): the store keeps the last ``refresh_days`` open, at no extra
    request (the open tail up to today is fetched by every sync anyway)."""
    return Endpoint(
        refresh_days=refresh_days,
        name=f"stock.ownership.{name}",
        path=f"/stock/ownership/{name.replace('_', '-')}/{{symbol}}",
        params=(SYMBOL, FROM, TO, SORT),
        schema=schema,
        freshness="historical",
        date_range=("from_", "to"),
        keys=keys,
        example={"symbol": symbol, "from_": "2026-01-01", "to": "2026-06-30"},
        doc=doc,
        **rules,
    )


_ROWS: tuple[Endpoint, ...] = (
    Endpoint(
        name="stock.intraday.tickers",
        path="/stock/intraday/tickers",
        params=(
            _p("type", req=True, allowed="EQUITY INDEX WARRANT ODDLOT"),
            _p("exchange", allowed="TWSE TPEx"),
            _p("market", allowed=" ".join(MARKETS)),
            _p("industry", doc="industry code (see the code table)"),
            *[_p(b, "bool") for b in ("isNormal", "isAttention", "isDisposition", "isHalted")],
        ),
        schema=stock_s.STOCK_TICKERS,
        freshness="reference",
        keys=("date", "symbol"),
        example={"type": "EQUITY"},
        doc="ticker list",
    ),
    _intraday(
        "ticker",
        stock_s.STOCK_TICKER,
        "ticker reference data",
        keys=("date", "symbol"),
        freshness="reference",
    ),
    _intraday("quote", stock_s.STOCK_QUOTE, "real-time quote", keys=("symbol",)),
    _intraday(
        "candles",
        stock_s.STOCK_INTRADAY_CANDLES,
        "minute candles",
        _p("timeframe", allowed="1 3 5 10 15 30 60"),
        SORT,
        keys=("symbol", "date"),
    ),
    _intraday(
        "trades",
        stock_s.STOCK_TRADES,
        "trade detail (the latest 50 by default; frames oldest first)",
        _p("offset", "int"),
        LIMIT,
        SORT,
        _p("isTrial", "bool"),
        keys=("symbol", "date", "serial"),
    ),
    _intraday(
        "volumes", stock_s.STOCK_VOLUMES, "price-volume distribution", keys=("symbol", "price")
    ),
    Endpoint(
        name="stock.snapshot.quotes",
        path="/stock/snapshot/quotes/{market}",
        params=(MARKET_PATH, SNAPSHOT_TYPE),
        schema=stock_s.SNAPSHOT_QUOTES,
        freshness="snapshot",
        plan="developer",
        keys=("market", "symbol"),
        example=_BOARD,
        doc="quotes of a whole board",
    ),
    Endpoint(
        name="stock.snapshot.movers",
        path="/stock/snapshot/movers/{market}",
        params=(
            MARKET_PATH,
            _p("direction", req=True, allowed="up down"),
            _p("change", req=True, allowed="percent value"),
            SNAPSHOT_TYPE,
            *[_p(f, "float") for f in ("gt", "gte", "lt", "lte", "eq")],
        ),
        schema=stock_s.SNAPSHOT_MOVERS,
        freshness="snapshot",
        plan="developer",
        keys=("market", "symbol"),
        example={**_BOARD, "direction": "up", "change": "percent"},
        doc="gainers / losers",
    ),
    Endpoint(
        name="stock.snapshot.actives",
        path="/stock/snapshot/actives/{market}",
        params=(MARKET_PATH, _p("trade", req=True, allowed="volume value"), SNAPSHOT_TYPE),
        schema=stock_s.SNAPSHOT_ACTIVES,
        freshness="snapshot",
        plan="developer",
        keys=("market", "symbol"),
        example={**_BOARD, "trade": "volume"},
        doc="most active by volume or value",
    ),
    Endpoint(
        name="stock.snapshot.heatmap",
        path="/stock/snapshot/heatmap/{symbol}",
        params=(
            _p(
                "symbol",
                req=True,
                path=True,
                doc="an index code (IX0001 TAIEX, IX0043 TPEx), or a list of them",
                pattern=r"IX\d{4}",
                fix="an index code such as 'IX0001' (TAIEX) or "
                "'IX0043' (TPEx); a stock's weight is in its index's rows",
            ),
            _p(
                "time",
                doc="HHmmss: today's snapshot at that time (default: the latest)",
                pattern=r"([01]\d|2[0-3])[0-5]\d[0-5]\d",
                fix="HHmmss, e.g. '100000'",
            ),
            _p(
                "period",
                allowed="1w 1m 3m 6m 1y ytd",
                doc="change over this period instead of the day's",
            ),
        ),
        schema=stock_s.SNAPSHOT_HEATMAP,
        freshness="snapshot",
        plan="developer",
        keys=("index_symbol", "symbol"),
        example={"symbol": "IX0001"},
        doc="an index and its constituents (internal: not in the official SDKs, may change)",
    ),
    Endpoint(
        name="stock.historical.candles",
        path="/stock/historical/candles/{symbol}",
        params=(
            SYMBOL,
            FROM,
            TO,
            _p("timeframe", allowed=" ".join(TIMEFRAMES)),
            _p(
                "fields",
                "fields",
                allowed=" ".join(HISTORICAL_FIELDS),
                doc="list or comma string; turnover/change not with minute timeframes",
            ),
            SORT,
            _p("adjusted", "bool", doc="the service's dividend/split-adjusted prices (D/W/M)"),
        ),
        schema=stock_s.HISTORICAL_CANDLES,
        freshness="historical",
        date_range=("from_", "to"),
        minute_range="forbidden",
        minute_fields=HISTORICAL_FIELDS[:5],
        minute_refused=("adjusted",),
        adjustable=True,
        keys=("symbol", "timeframe", "date"),
        example=_RANGE,
        doc="daily/weekly/monthly candles (minute: latest 30 days, no from/to)",
    ),
    Endpoint(
        name="stock.historical.stats",
        path="/stock/historical/stats/{symbol}",
        params=(SYMBOL,),
        schema=stock_s.HISTORICAL_STATS,
        freshness="reference",
        keys=("symbol", "date"),
        example=_STOCK,
        doc="last day and 52-week statistics",
    ),
    _tech(
        "sma",
        tech_s.TECHNICAL_SMA,
        Technical(
            local="sma", defaults={"period": 20}, bounded=False, warmup=lambda p: p["period"]
        ),
    ),
    _tech(
        "rsi",
        tech_s.TECHNICAL_RSI,
        Technical(
            local="rsi", defaults={"period": 14}, bounded=True, warmup=lambda p: p["period"] + 1
        ),
    ),
    _tech(
        "kdj",
        tech_s.TECHNICAL_KDJ,
        Technical(
            local="kdj",
            defaults={"rPeriod": 9, "kPeriod": 3, "dPeriod": 3},
            bounded=True,
            warmup=lambda p: p["rPeriod"],
            inputs=("high", "low", "close"),
            results=("k", "d", "j"),
        ),
    ),
    _tech(
        "macd",
        tech_s.TECHNICAL_MACD,
        Technical(
            local="macd",
            defaults={"fast": 12, "slow": 26, "signal": 9},
            bounded=False,
            warmup=lambda p: p["slow"] + p["signal"],
            results=("line", "signal"),
        ),
    ),
    _tech(
        "bb",
        tech_s.TECHNICAL_BB,
        Technical(
            local="bbands",
            defaults={"period": 20},
            bounded=False,
            warmup=lambda p: p["period"],
            results=("upper", "middle", "lower"),
        ),
    ),
    _action(
        "capital_changes",
        actions_s.CAPITAL_CHANGES,
        "capital changes (splits, par value, reductions)",
        sort=True,
        # two actions of one symbol can share a day (a reduction and a split): the factor
        # and the type tell them apart (a refetched window replaces the rows it covers)
        keys=("symbol", "effective_date", "action_type", "adjustment_factor"),
        distinct=("action_type", "adjustment_factor"),
        year=2023,
    ),
    # The reference spells this path "diviends"; the official SDK requests "dividends" and the
    # service answers both. We follow the SDK.
    _action(
        "dividends",
        actions_s.DIVIDENDS,
        "ex-rights / ex-dividend events",
        sort=False,
        # a cash and a stock row on one ex-date are two rows (see capital_changes)
        keys=("symbol", "date", "dividend_type", "cash_dividend", "stock_dividend_shares"),
        distinct=("dividend_type", "cash_dividend", "stock_dividend_shares"),
    ),
    # a company can apply again under the same symbol: the symbol alone is no key. Its review,
    # approval and listing dates and its underwriting price fill in over the months after its
    # application date: applications of the last two years stay open in the store.
    _action(
        "listing_applicants",
        actions_s.LISTING_APPLICANTS,
        "listing applicants",
        sort=True,
        keys=("symbol", "application_date"),
        refresh_days=730,
    ),
    # granted only to brokerage accounts (sdk-parity 1.0): the sandbox's advanced plan
    _ownership(
        "etf_holdings",
        own_s.ETF_HOLDINGS,
        "ETF constituents per disclosure date",
        keys=("symbol", "date", "component_symbol"),
        symbol="0050",
        plan="advanced",
    ),
    _ownership(
        "institutional_trades",
        own_s.INSTITUTIONAL_TRADES,
        "foreign / trust / dealer buys, sells and nets per day",
        keys=("symbol", "date"),
    ),
    # monthly rows dated the first of their month, published by the 15th of the next month:
    # a row can appear up to 46 days after its date, so the store keeps those days open
    _ownership(
        "director_holdings",
        own_s.DIRECTOR_HOLDINGS,
        "directors' and supervisors' holdings per month",
        keys=("symbol", "date", "order"),
        refresh_days=46,
    ),
    _ownership(
        "tdcc_distribution",
        own_s.TDCC_DISTRIBUTION,
        "TDCC shareholding distribution per week and bracket",
        keys=("symbol", "date", "range"),
    ),
    Endpoint(
        name="futopt.intraday.products",
        path="/futopt/intraday/products",
        params=(*FUTOPT_LIST, CONTRACT_TYPE, _p("status", allowed="N P U")),
        schema=futopt_s.FUTOPT_PRODUCTS,
        freshness="reference",
        keys=("symbol",),
        example={"type": "FUTURE"},
        doc="contract list (beta)",
    ),
    Endpoint(
        name="futopt.intraday.tickers",
        path="/futopt/intraday/tickers",
        params=(*FUTOPT_LIST, _p("product", doc="contract code, e.g. TXF"), CONTRACT_TYPE),
        schema=futopt_s.FUTOPT_TICKERS,
        freshness="reference",
        keys=("symbol",),
        example={"type": "FUTURE"},
        doc="tradable products (beta)",
    ),
    _futopt("ticker", futopt_s.FUTOPT_TICKER, "reference", "contract reference"),
    _futopt("quote", futopt_s.FUTOPT_QUOTE, "intraday", "real-time quote"),
    _futopt(
        "candles",
        futopt_s.FUTOPT_CANDLES,
        "intraday",
        "minute candles",
        _p("timeframe", allowed="1 5 10 15 30 60"),
        keys=("symbol", "date"),
    ),
    _futopt(
        "trades",
        futopt_s.FUTOPT_TRADES,
        "intraday",
        "trade detail",
        _p("offset", "int"),
        LIMIT,
        keys=("symbol", "serial"),
    ),
    _futopt(
        "volumes",
        futopt_s.FUTOPT_VOLUMES,
        "intraday",
        "price-volume distribution",
        keys=("symbol", "price"),
    ),
    Endpoint(
        name="futopt.historical.daily",
        path="/futopt/historical/daily/{product}",
        params=(
            PRODUCT,
            _p("date", "date", doc="trading day (default: today)"),
            CONTRACT_MONTH,
            HIST_SESSION,
        ),
        schema=futopt_s.FUTOPT_HISTORICAL_DAILY,
        freshness="historical",
        keys=("date", "product", "contract_month", "call_put", "strike_price"),
        example={"product": "TXF", "date": "2026-09-16"},
        doc="one day, one row per contract (beta)",
    ),
    Endpoint(
        name="futopt.historical.candles",
        path="/futopt/historical/candles/{product}",
        params=(
            PRODUCT,
            FROM,
            TO,
            CONTRACT_MONTH,
            _p(
                "fields",
                "fields",
                allowed=" ".join(FUTOPT_FIELDS),
                doc="list or comma string; average/transaction: minute timeframes",
            ),
            _p("timeframe", allowed=" ".join(t for t in TIMEFRAMES if t != "3")),
            SORT,
            _p("strikePrice", "float", doc="options: the strike"),
            _p("callPut", allowed="CALL PUT", doc="options: the side (any case)", fold_case=True),
            HIST_SESSION,
        ),
        schema=futopt_s.FUTOPT_HISTORICAL_CANDLES,
        freshness="historical",
        date_range=("from_", "to"),
        keys=("product", "timeframe", "date"),
        example={"product": "TXF", "from_": "2026-08-03", "to": "2026-09-16", "timeframe": "D"},
        doc="candles of a product's contract month or continuous 1! (beta)",
    ),
)

#: the rows by name (a live view: tests that add a synthetic row see it everywhere)
_BY_NAME: dict[str, Endpoint] = {e.name: e for e in _ROWS}
ENDPOINTS: Mapping[str, Endpoint] = MappingProxyType(_BY_NAME)


def get(name: str) -> Endpoint:
    """The endpoint called ``name``; InvalidParams naming the allowed names otherwise."""
    try:
        return ENDPOINTS[name]
    except KeyError:
        from marketframe.exceptions import InvalidParams, did_you_mean

        raise InvalidParams(
            name,
            "endpoint",
            "is not an endpoint" + did_you_mean(name, ENDPOINTS),
            ", ".join(ENDPOINTS),
        ) from None
