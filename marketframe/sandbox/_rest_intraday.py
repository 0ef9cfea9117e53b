"""Stock intraday routes: tickers, ticker, quote, candles, trades, volumes."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _calendar as cal
from . import _payloads as wire
from . import _quote
from ._query import Json, Match, Query
from ._service import MARKETS, MINUTE_FRAMES, Route, Service


def tickers(svc: Service, m: Match, q: Query) -> Json:
    type_ = q.need("type", ("EQUITY", "INDEX", "WARRANT", "ODDLOT"))
    exchange = q.choice("exchange", ("TWSE", "TPEx"))
    market = q.choice("market", MARKETS)
    if exchange is None:  # the envelope always names one exchange (the spec requires it)
        exchange = "TPEx" if market in ("OTC", "ESB", "TIB", "PSB") else "TWSE"
    industry = q.get("industry")
    flags = {k: q.flag(k) for k in ("isNormal", "isAttention", "isDisposition", "isHalted")}
    want = "EQUITY" if type_ == "ODDLOT" else type_
    d = svc.today()
    rows = []
    for inst in svc.market.universe.instruments.values():
        # listed that day: not before its listing, nor from its delisting on
        if inst.type != want or inst.first_day > d or not inst.listed_on(d):
            continue
        on_exchange, on_market = inst.board(d)
        if type_ == "ODDLOT" and on_market == "ESB":
            continue
        if exchange and on_exchange != exchange:
            continue
        if market and on_market != market:
            continue
        if industry and inst.industry != industry:
            continue
        if flags["isAttention"] or flags["isDisposition"] or flags["isNormal"]:
            attention, interval = svc.market.status(inst.symbol, d)
            if flags["isAttention"] and not attention:
                continue
            if flags["isDisposition"] and not interval:
                continue
            if flags["isNormal"] and (attention or interval):
                continue
        if flags["isHalted"] and svc.market.daily(inst.symbol).index_of(d) is not None:
            continue
        rows.append({"symbol": inst.symbol, "name": inst.name})
    out: dict[str, Any] = {"date": d.isoformat(), "type": type_, "exchange": exchange}
    if market:
        out["market"] = market
    if industry:
        out["industry"] = industry
    for k, v in flags.items():
        if v is not None:
            out[k] = v
    out["data"] = rows
    return out


def ticker(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    oddlot = svc.oddlot(q)
    d = svc.today()
    daily = svc.market.daily(inst.symbol)
    i = daily.index_of(d)
    if i is None:  # suspended (or delisted) today: previous close is the last close
        i = int(np.searchsorted(daily.dates, np.datetime64(d))) - 1
        ref = prev = int(daily.close[max(i, 0)])
        up, down = cal.limits(ref, inst.etf) if inst.has_limits else (0, 0)
        status = "SUSPENDED" if inst.listed_on(d) else "TERMINATED"
    else:
        ref, prev = int(daily.ref[i]), int(daily.prev_close[i])
        up, down = int(daily.limit_up[i]), int(daily.limit_down[i])
        status = "NORMAL"
    attention, interval = svc.market.status(inst.symbol, d)  # disposition: call auctions
    out = wire.header(inst, d)
    out.update(
        {
            "name": inst.name,
            "industry": inst.industry,
            "securityType": inst.security_type,
            "previousClose": wire.px(prev),
            "referencePrice": wire.px(ref),
        }
    )
    if inst.type == "INDEX":
        out.update({"openTime": "09:00:00", "closeTime": "13:30:00"})
        return out
    if inst.has_limits:
        out.update(
            {
                "limitUpPrice": wire.px(up),
                "limitDownPrice": wire.px(down),
                # a stock under disposition may not be day traded
                "canDayTrade": inst.day_trade and not interval,
                "canBuyDayTrade": inst.day_trade and not interval,
                "canBelowFlatMarginShortSell": inst.type == "EQUITY",
                "canBelowFlatSBLShortSell": inst.type == "EQUITY",
            }
        )
    out.update({"isAttention": attention, "isDisposition": bool(interval)})
    if inst.has_limits:
        out.update(
            {
                "isUnusuallyRecommended": False,
                "isSpecificAbnormally": False,
                # seconds between call auctions: odd lots on the day's interval (3 min,
                # 1 min from 2022-12-19, 5 s from 2024-12-02), a disposition stock on its
                # own (5 or 20 min), 0 for continuous trading
                "matchingInterval": cal.oddlot_interval(d) if oddlot else interval,
            }
        )
    out.update(
        {
            "securityStatus": status,
            "boardLot": 1 if oddlot else inst.board_lot,
            "tradingCurrency": "TWD",
        }
    )
    if inst.type == "WARRANT":
        extra = dict(inst.extra)
        under = svc.market.daily(inst.underlying or "2330")
        j = under.index_of(d)
        ref_u = int(under.ref[j]) if j is not None else int(under.close[-1])
        out.update(
            {
                "exercisePrice": wire.num(extra["exercisePrice"]),
                "exercisedVolume": 0,
                "cancelledVolume": 0,
                "remainingVolume": 5000,
                "exerciseRatio": extra["exerciseRatio"],
                "knockInPrice": wire.px(cal.round_tick(ref_u * 1.3)),
                "knockOutPrice": wire.px(cal.round_tick(ref_u * 0.7)),
                "maturityDate": extra["maturityDate"],
            }
        )
    return out


def quote(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    d, day = svc.day(inst, svc.oddlot(q))
    if day is None:
        out = wire.header(inst, d)
        out["name"] = inst.name
        return out
    return _quote.quote(day, svc.t_us(d), inst.name, svc.market.rng)


def candles(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    tf = q.pick("timeframe", MINUTE_FRAMES, "1")
    sort = q.pick("sort", ("asc", "desc"), "asc")
    d, day = svc.day(inst, svc.oddlot(q))
    rows = [] if day is None else wire.candles(day, svc.t_us(d), int(tf))
    if sort == "desc":
        rows.reverse()
    out = wire.header(inst, d)
    if q.get("timeframe") is not None:  # echoed when requested (docs/sandbox.md, guesses)
        out["timeframe"] = tf
    out["data"] = rows
    return out


def trades(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    offset = q.whole("offset", 0)
    limit = q.whole("limit", 50, minimum=1)
    sort = q.pick("sort", ("asc", "desc"), "desc")
    trial = bool(q.flag("isTrial"))
    d, day = svc.day(inst, svc.oddlot(q))
    rows = [] if day is None else wire.trade_rows(day, svc.t_us(d), trial=trial)
    if sort == "desc":
        rows.reverse()
    out = wire.header(inst, d)
    out["data"] = rows[offset : offset + limit]
    return out


def volumes(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    d, day = svc.day(inst, svc.oddlot(q))
    out = wire.header(inst, d)
    out["data"] = [] if day is None else wire.volume_rows(day, svc.t_us(d))
    return out


S = "/stock/intraday"
ROUTES = (
    Route(f"{S}/tickers", tickers),
    Route(f"{S}/ticker/{{symbol}}", ticker),
    Route(f"{S}/quote/{{symbol}}", quote),
    Route(f"{S}/candles/{{symbol}}", candles),
    Route(f"{S}/trades/{{symbol}}", trades),
    Route(f"{S}/volumes/{{symbol}}", volumes),
)
