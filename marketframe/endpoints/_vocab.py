"""The parameters rows share (``SYMBOL``, ``FROM``, ``TO`` ...) and the builders of families of
rows (intraday, technical, corporate actions, ownership, futures and options)."""

from __future__ import annotations

from typing import Any

from marketframe.endpoints._contracts import (
    CONTRACT_MONTH_FORMS,
    CONTRACT_MONTH_RE,
    PRODUCT_RE,
    product_fix,
)
from marketframe.endpoints._model import (
    MARKETS,
    TIMEFRAMES,
    Endpoint,
    Param,
    Technical,
)
from marketframe.schemas import Schema

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
    fold_case=True,
    doc="market board (any case), or a list of boards",
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
            *[_p(e, "int", req=True, minimum=1) for e in technical.params],
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


def _one_symbol(
    market: str,
    name: str,
    schema: Schema,
    session: Param,
    freshness: str,
    doc: str,
    extra: tuple[Param, ...],
    keys: tuple[str, ...],
    example: dict[str, Any],
) -> Endpoint:
    """A row of one symbol: ``/MARKET/intraday/NAME/{symbol}`` with its session flag."""
    return Endpoint(
        name=f"{market}.intraday.{name}",
        path=f"/{market}/intraday/{name}/{{symbol}}",
        params=(SYMBOL, session, *extra),
        schema=schema,
        freshness=freshness,
        keys=keys,
        example=example,
        doc=doc,
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
    return _one_symbol("stock", name, schema, ODDLOT, freshness, doc, extra, keys, _STOCK)


def _futopt(
    name: str,
    schema: Schema,
    freshness: str,
    doc: str,
    *extra: Param,
    keys: tuple[str, ...] = ("symbol",),
) -> Endpoint:
    """A futures/options row of one contract: ``/futopt/intraday/NAME/{symbol}``."""
    doc = f"{doc} (beta)"
    return _one_symbol("futopt", name, schema, AFTERHOURS, freshness, doc, extra, keys, _FUTOPT)


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
