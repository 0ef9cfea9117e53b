"""Stock snapshot routes (developer plan): a whole board's quotes, movers, actives."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from . import _calendar as cal
from . import _quote
from ._query import Json, Match, Query, bad
from ._service import MARKETS, Route, Service


def snapshot_at(svc: Service, d: date, wanted: datetime | None = None) -> datetime:
    """The time of day ``d``'s snapshot, on a 5-second step: now (at most 5 minutes after
    the close), or ``wanted`` when that is earlier (the heatmap's ``time``)."""
    now = svc.now()
    snap = (
        min(now, cal.at(d, cal.SESSION_CLOSE) + timedelta(minutes=5))
        if now.date() == d
        else cal.at(d, cal.SESSION_CLOSE) + timedelta(minutes=5)
    )
    if wanted is not None:
        snap = min(snap, wanted)
    return snap.replace(second=snap.second - snap.second % 5, microsecond=0)


def _snapshot_rows(svc: Service, market: str, type_: str) -> tuple[date, str, list[Json]]:
    d = svc.today()
    t = svc.t_us(d)
    snap = snapshot_at(svc, d)
    rows = []
    for inst in svc.market.universe.instruments.values():
        if inst.type != "EQUITY" or inst.board(d)[1] != market:
            continue
        if type_ == "COMMONSTOCK" and inst.security_type != "01":
            continue
        day = svc.market.day(inst.symbol, d)
        if day is None:
            continue
        qt = _quote.quote(day, t, inst.name, svc.market.rng)
        if "closePrice" not in qt:
            continue
        rows.append(
            {
                "type": inst.type,
                "symbol": inst.symbol,
                "name": inst.name,
                "openPrice": qt["openPrice"],
                "highPrice": qt["highPrice"],
                "lowPrice": qt["lowPrice"],
                "closePrice": qt["closePrice"],
                "change": qt["change"],
                "changePercent": qt["changePercent"],
                "tradeVolume": qt["total"]["tradeVolume"],
                "tradeValue": qt["total"]["tradeValue"],
                "lastUpdated": qt["lastUpdated"],
            }
        )
    return d, snap.strftime("%H%M%S"), rows


def _market_param(svc: Service, m: Match) -> str:
    market = m["market"]
    if market not in MARKETS:
        raise bad(f"Invalid market '{market}'; allowed values: {', '.join(MARKETS)}")
    return market


def snapshot_quotes(svc: Service, m: Match, q: Query) -> Json:
    market = _market_param(svc, m)
    type_ = q.pick("type", ("ALLBUT0999", "COMMONSTOCK"), "ALLBUT0999")
    d, time_, rows = _snapshot_rows(svc, market, type_)
    return {"date": d.isoformat(), "time": time_, "market": market, "data": rows}


def snapshot_movers(svc: Service, m: Match, q: Query) -> Json:
    market = _market_param(svc, m)
    direction = q.need("direction", ("up", "down"))
    change = q.need("change", ("percent", "value"))
    type_ = q.pick("type", ("ALLBUT0999", "COMMONSTOCK"), "ALLBUT0999")
    tests = {k: q.number(k) for k in ("gt", "gte", "lt", "lte", "eq")}
    d, time_, rows = _snapshot_rows(svc, market, type_)
    key = "changePercent" if change == "percent" else "change"
    rows = [r for r in rows if (r[key] > 0 if direction == "up" else r[key] < 0)]
    ops = {
        "gt": lambda a, b: a > b,
        "gte": lambda a, b: a >= b,
        "lt": lambda a, b: a < b,
        "lte": lambda a, b: a <= b,
        "eq": lambda a, b: a == b,
    }
    for k, v in tests.items():
        if v is not None:
            rows = [r for r in rows if ops[k](r[key], v)]
    rows.sort(key=lambda r: r[key], reverse=direction == "up")
    return {"date": d.isoformat(), "time": time_, "market": market, "change": change, "data": rows}


def snapshot_actives(svc: Service, m: Match, q: Query) -> Json:
    market = _market_param(svc, m)
    trade = q.need("trade", ("volume", "value"))
    type_ = q.pick("type", ("ALLBUT0999", "COMMONSTOCK"), "ALLBUT0999")
    d, time_, rows = _snapshot_rows(svc, market, type_)
    key = "tradeVolume" if trade == "volume" else "tradeValue"
    rows.sort(key=lambda r: r[key], reverse=True)
    return {"date": d.isoformat(), "time": time_, "market": market, "trade": trade, "data": rows}


S = "/stock/snapshot"
ROUTES = (
    Route(f"{S}/quotes/{{market}}", snapshot_quotes),
    Route(f"{S}/movers/{{market}}", snapshot_movers),
    Route(f"{S}/actives/{{market}}", snapshot_actives),
)
