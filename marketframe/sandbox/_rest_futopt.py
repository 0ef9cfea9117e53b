"""Futures and options routes (beta): contract lists and one contract's intraday data."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from . import _calendar as cal
from . import _payloads as wire
from . import _quote
from ._futopt import with_trials
from ._futopt_contracts import PRODUCTS, Contract
from ._futopt_hist import minute_bars
from ._intraday import Day
from ._query import Json, Match, Query, ServiceError, bad
from ._quote import SeedRng
from ._service import Route, Service

FUTOPT_FRAMES = ("1", "5", "10", "15", "30", "60")


def _futopt_date(svc: Service, afterhours: bool) -> date:
    now = svc.now()
    if not afterhours:
        return svc.today()
    d = now.date()
    if now.time() < cal.FUT_AH_OPEN:
        d = d - timedelta(days=1)
    d = d if cal.is_trading_day(d) else cal.previous_trading_day(d)
    while not cal.has_night_session(d):  # the last evening that had one
        d = cal.previous_trading_day(d)
    return d


def _session(svc: Service, q: Query) -> bool:
    value = q.get("session")
    if value is None:
        return False
    if value.lower() != "afterhours":
        raise bad(f"Invalid session '{value}'; allowed values: afterhours")
    return True


def _list_session(q: Query) -> tuple[str | None, bool]:
    """The ``session`` of the list endpoints (``tickers``, ``products``) and whether it is
    spelt as the service wants: ``REGULAR``/``AFTERHOURS`` upper case. Another case is no
    error there: the service silently returns no rows (sdk-parity.md §7)."""
    value = q.get("session")
    if (
        value is not None
        and value not in ("REGULAR", "AFTERHOURS")
        and value.upper() in ("REGULAR", "AFTERHOURS")
    ):
        return value, False
    return q.choice("session", ("REGULAR", "AFTERHOURS")), True


def products(svc: Service, m: Match, q: Query) -> Json:
    type_ = q.need("type", ("FUTURE", "OPTION"))
    q.choice("exchange", ("TAIFEX",))
    session, spelt = _list_session(q)
    ctype = q.choice("contractType", ("I", "R", "B", "C", "S", "E"))
    status = q.choice("status", ("N", "P", "U"))
    rows = []
    for p in PRODUCTS.values() if spelt else ():
        if p.type != type_ or (ctype and ctype != "I") or (status and status != "N"):
            continue
        rows.append(
            {
                "symbol": p.code,
                "type": p.type,
                "name": p.name,
                "underlyingSymbol": "IX0001",
                "contractType": "I",
                "contractSize": p.contract_size,
                "statusCode": "N",
                "tradingCurrency": "TWD",
                "quoteAcceptable": True,
                "startDate": "1998-07-21" if p.code == "TXF" else "2001-12-24",
                "canBlockTrade": True,
                "expiryType": "S",
                "underlyingType": "E",
                "marketCloseGroup": 1,
                # the service sends a string, "1" after hours (sdk-parity.md section 7:
                # "prod sends endSession as string \"1\"")
                "endSession": "1" if session == "AFTERHOURS" else "0",
            }
        )
    return _futopt_envelope(type_, rows, session=session, contractType=ctype, status=status)


def _futopt_envelope(type_: str, rows: list[Json], **echo: str | None) -> Json:
    """The list envelope: type, exchange, the filters that were given, then the rows."""
    out: dict[str, Any] = {"type": type_, "exchange": "TAIFEX"}
    out.update({k: v for k, v in echo.items() if v})
    out["data"] = rows
    return out


def futopt_tickers(svc: Service, m: Match, q: Query) -> Json:
    type_ = q.need("type", ("FUTURE", "OPTION"))
    q.choice("exchange", ("TAIFEX",))
    session, spelt = _list_session(q)
    product = q.get("product")
    ctype = q.choice("contractType", ("I", "R", "B", "C", "S", "E"))
    spread = q.flag("isSpread")
    d = _futopt_date(svc, session == "AFTERHOURS")
    rows = []
    # isSpread=true lists the calendar spreads (options have none), otherwise the outrights
    ah = session == "AFTERHOURS"
    listed = svc.futopt.spreads(d, ah) if spread else svc.futopt.contracts(d, ah)
    for c in listed if spelt else ():
        if c.product.type != type_ or (product and c.product.code != product):
            continue
        if ctype and ctype != "I":
            continue
        ref = svc.futopt.reference(c, d, session == "AFTERHOURS")
        row = {
            "type": type_,
            "symbol": c.symbol,
            "name": c.name,
            "referencePrice": wire.px(ref),
            "contractType": "I",
            "startDate": c.start.isoformat(),
            "endDate": c.settlement.isoformat(),
            "flowGroup": 1,
            "settlementDate": c.settlement.isoformat(),
            "isDynamicBanding": True,
        }
        if spread:  # sdk-parity.md section 7: "response items gain isSpread"
            row["isSpread"] = True
        rows.append(row)
    out = _futopt_envelope(type_, rows, session=session, product=product, contractType=ctype)
    if spread is not None:
        out = {**{k: v for k, v in out.items() if k != "data"}, "isSpread": spread, "data": rows}
    return out


def _contract_day(svc: Service, m: Match, q: Query) -> tuple[Contract, date, Day]:
    afterhours = _session(svc, q)
    d = _futopt_date(svc, afterhours)
    c = svc.futopt.contract(m["symbol"], d)
    if c is None:
        raise ServiceError(404, "Resource Not Found")
    day = svc.futopt.day(c, d, afterhours)
    if day is None:
        raise ServiceError(404, "Resource Not Found")
    return c, d, day


def _fo_header(svc: Service | None, day: Day, d: date) -> Json:
    return {
        "date": d.isoformat(),
        "type": day.inst.type,
        "exchange": "TAIFEX",
        "symbol": day.inst.symbol,
    }


def _fo_t(svc: Service, day: Day) -> int:
    return min(cal.epoch_us(svc.now()), int(day.time[-1]))


def futopt_ticker(svc: Service, m: Match, q: Query) -> Json:
    c, d, day = _contract_day(svc, m, q)
    out = _fo_header(svc, day, d)
    out.update(
        {
            "name": c.name,
            "referencePrice": wire.px(day.reference),
            "settlementDate": c.settlement.isoformat(),
            "startDate": c.start.isoformat(),
            "endDate": c.settlement.isoformat(),
        }
    )
    return out


def futopt_quote(svc: Service, m: Match, q: Query) -> Json:
    c, d, day = _contract_day(svc, m, q)
    return quote_at(day, _fo_t(svc, day), c.name, svc.market.rng)


def quote_at(
    day: Day, t: int, name: str, rng: SeedRng, books: _quote.BookSizes | None = None
) -> Json:
    """The futures/options quote at ``t``: the REST quote, and the object the ``aggregates``
    stream channel sends (with ``isTrial`` and ``lastTrial`` when the day has trial matches
    and the last match at ``t`` is one). ``books``: as :func:`_quote.quote`'s."""
    base = _quote.quote(day, t, name, rng, books=books)
    out = _fo_header(None, day, day.date)
    out["name"] = name
    for k in (
        "previousClose",
        "openPrice",
        "openTime",
        "highPrice",
        "highTime",
        "lowPrice",
        "lowTime",
        "closePrice",
        "closeTime",
        "avgPrice",
        "change",
        "changePercent",
        "amplitude",
        "lastPrice",
        "lastSize",
    ):
        if k in base:
            out[k] = base[k]
    n = day.visible(t)
    if n:
        out["serial"] = f"{int(day.serial[n - 1]):08d}"
        sizes, side = day.size[:n], day.side[:n]
        out["total"] = {
            "tradeVolume": int(sizes.sum()),
            "totalBidMatch": int(sizes[side < 0].sum()),
            "totalAskMatch": int(sizes[side > 0].sum()),
            "time": int(day.time[n - 1]),
        }
        j = n - 1
        out["lastTrade"] = {
            "bid": wire.px(day.bid[j]),
            "ask": wire.px(day.ask[j]),
            "price": wire.px(day.price[j]),
            "size": int(day.size[j]),
            "time": int(day.time[j]),
            "serial": f"{int(day.serial[j]):08d}",
        }
        out["lastUpdated"] = int(day.time[j])
    if "lastTrial" in base:
        trial = dict(base["lastTrial"])
        trial.pop("bid", None)
        trial.pop("ask", None)
        trial["serial"] = f"{int(trial['serial']):08d}"
        out["lastTrial"] = trial
    if base.get("isTrial"):
        out["isTrial"] = True
        out["lastUpdated"] = base["lastUpdated"]
    return out


def futopt_candles(svc: Service, m: Match, q: Query) -> Json:
    c, d, day = _contract_day(svc, m, q)
    tf = q.pick("timeframe", FUTOPT_FRAMES, "1")
    rows = _fo_candles(svc, day, int(tf))
    out = _fo_header(svc, day, d)
    out["timeframe"] = tf
    out["data"] = rows
    return out


def _fo_candles(svc: Service, day: Day, tf: int) -> list[Json]:
    return [
        {
            "date": wire.iso_minute(b["t"]),
            "open": wire.px(b["open"]),
            "high": wire.px(b["high"]),
            "low": wire.px(b["low"]),
            "close": wire.px(b["close"]),
            "volume": b["volume"],
            "average": wire.num(round(b["average"] / 100, 2)),
        }
        for b in minute_bars(day, day.visible(_fo_t(svc, day)), tf)
    ]


def futopt_trades(svc: Service, m: Match, q: Query) -> Json:
    c, d, day = _contract_day(svc, m, q)
    offset = q.whole("offset", 0)
    limit = q.whole("limit", 50, minimum=1)
    if q.flag("isTrial"):
        # the trial matches before the session opens (the ones the v1.1 stream sends), with
        # their own serials; no bid, ask or volume (as the stock trial rows)
        trial = with_trials(day, svc.market.rng)
        n = trial.visible_trials(cal.epoch_us(svc.now()))
        rows = [
            {"price": p, "size": s, "time": t, "serial": f"{sr:08d}"}
            for p, s, t, sr in zip(
                wire.pxs(trial.trial_price[:n]),
                trial.trial_size[:n].tolist(),
                trial.trial_time[:n].tolist(),
                trial.trial_serial[:n].tolist(),
                strict=True,
            )
        ]
    else:
        rows = wire.trade_rows(day, _fo_t(svc, day), futopt=True)
    rows.reverse()
    out = _fo_header(svc, day, d)
    out["data"] = rows[offset : offset + limit]
    return out


def futopt_volumes(svc: Service, m: Match, q: Query) -> Json:
    c, d, day = _contract_day(svc, m, q)
    out = _fo_header(svc, day, d)
    out["data"] = wire.volume_rows(day, _fo_t(svc, day), split=False)
    return out


F = "/futopt/intraday"
ROUTES = (
    Route(f"{F}/products", products),
    Route(f"{F}/tickers", futopt_tickers),
    Route(f"{F}/ticker/{{symbol}}", futopt_ticker),
    Route(f"{F}/quote/{{symbol}}", futopt_quote),
    Route(f"{F}/candles/{{symbol}}", futopt_candles),
    Route(f"{F}/trades/{{symbol}}", futopt_trades),
    Route(f"{F}/volumes/{{symbol}}", futopt_volumes),
)
