"""``/stock/snapshot/heatmap/{index}``: an index and its constituents in one snapshot.

The service answers this path on prod, but the official SDKs treat it as internal (spec
``sdk-parity.md`` §3). The sandbox serves it from the same quotes as the other snapshots:

- the first row is the index (``type: INDEX``), then its constituents (``type: EQUITY``,
  every equity of the index's board), largest market value first;
- the index row's ``tradeVolume`` (lots) and ``tradeValue`` (TWD) are the sums of its
  constituents', so ``tradeValueWeight`` (a constituent's share of the index's trade value,
  in percent) sums to 100 over the rows, as ``marketValueWeight`` does;
- ``time=HHmmss`` takes today's snapshot at that time (never later than now);
  ``period=1w|1m|3m|6m|1y|ytd`` gives the change since the last close on or before the start
  of the period instead of the day's, with no ``time`` and no row ``date`` (as the SDK's
  model says period snapshots have).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from . import _calendar as cal
from . import _payloads as wire
from . import _quote
from ._instrument import Instrument
from ._query import Json, Match, Query, ServiceError, bad
from ._rest_snapshot import snapshot_at
from ._service import Route, Service

PERIODS = ("1w", "1m", "3m", "6m", "1y", "ytd")
_TIME_RE = re.compile(r"^\d{6}$")


def _period_start(d: date, period: str) -> date:
    if period == "ytd":
        return date(d.year, 1, 1) - timedelta(days=1)
    if period == "1w":
        return d - timedelta(days=7)
    months = {"1m": 1, "3m": 3, "6m": 6, "1y": 12}[period]
    y, m = divmod(d.year * 12 + d.month - 1 - months, 12)
    return date(y, m + 1, min(d.day, 28))


def _snapshot_time(svc: Service, d: date, text: str | None) -> int:
    """Epoch µs of the snapshot: the boards' snapshot time, or ``time`` when earlier."""
    wanted = None
    if text is not None:
        if (
            not _TIME_RE.match(text)
            or int(text[:2]) > 23
            or int(text[2:4]) > 59
            or int(text[4:]) > 59
        ):
            raise bad(f"Invalid time '{text}': expected HHmmss")
        wanted = cal.at(d, cal.SESSION_OPEN).replace(
            hour=int(text[:2]), minute=int(text[2:4]), second=int(text[4:])
        )
    return cal.epoch_us(snapshot_at(svc, d, wanted))


def _row(inst: Instrument, qt: dict[str, Any], d: date, period_base: int | None) -> Json:
    row: dict[str, Any] = {
        "date": d.isoformat(),
        "type": inst.type,
        "symbol": inst.symbol,
        "name": inst.name,
    }
    for k in (
        "openPrice",
        "highPrice",
        "lowPrice",
        "closePrice",
        "change",
        "changePercent",
        "previousClose",
    ):
        row[k] = qt[k]
    if period_base is not None:
        del row["date"]
        close = round(qt["closePrice"] * 100)
        row["previousClose"] = wire.px(period_base)
        row["change"] = wire.px(close - period_base)
        row["changePercent"] = wire.ratio((close - period_base) * 100, period_base)
    return row


def _base_close(svc: Service, symbol: str, start: date) -> int | None:
    daily = svc.market.daily(symbol)
    i = int(np.searchsorted(daily.dates, np.datetime64(start, "D"), side="right")) - 1
    return int(daily.close[i]) if i >= 0 else None


def snapshot_heatmap(svc: Service, m: Match, q: Query) -> Json:
    index = svc.market.universe.get(m["symbol"])
    if index is None or index.type != "INDEX":  # a stock code or a board: 404, as the service
        raise ServiceError(404, "Resource Not Found")
    period = q.choice("period", PERIODS)
    d = svc.today()
    t = _snapshot_time(svc, d, None if period else q.get("time"))
    index_day = svc.market.day(index.symbol, d)
    if q.get("time") is None and (index_day is None or not index_day.visible(t)):
        # before the day's first trade: the last session's closing snapshot
        d = cal.previous_trading_day(d)
        t = cal.epoch_us(cal.at(d, cal.FIXED_PRICE_TIME))
        index_day = svc.market.day(index.symbol, d)
    start = _period_start(d, period) if period else None
    if index_day is None or not index_day.visible(t):
        raise ServiceError(404, "Resource Not Found")
    members = []
    for inst in svc.market.universe.instruments.values():
        if inst.type != "EQUITY" or inst.board(d)[1] != index.market:
            continue
        day = svc.market.day(inst.symbol, d)
        qt = None if day is None else _quote.quote(day, t, inst.name, svc.market.rng)
        if qt is None or "closePrice" not in qt:
            continue
        base = _base_close(svc, inst.symbol, start) if start else None
        if start and base is None:
            continue
        row = _row(inst, qt, d, base)
        row.update(
            tradeVolume=qt["total"]["tradeVolume"],
            tradeValue=qt["total"]["tradeValue"],
            lastUpdated=qt["lastUpdated"],
        )
        value = qt["closePrice"] * svc.market.shares(inst.symbol)  # market value
        members.append((value, inst.industry, row))
    if not members:
        raise ServiceError(404, "Resource Not Found")
    total_value = sum(r["tradeValue"] for _, _, r in members)
    total_cap = sum(v for v, _, _ in members)
    iq = _quote.quote(index_day, t, index.name, svc.market.rng)
    head = _row(index, iq, d, _base_close(svc, index.symbol, start) if start else None)
    head.update(
        tradeVolume=sum(r["tradeVolume"] for _, _, r in members),
        tradeValue=total_value,
        lastUpdated=iq["lastUpdated"],
    )
    members.sort(key=lambda x: (-x[0], x[2]["symbol"]))
    rows = [head]
    for value, industry, row in members:
        rows.append(
            {
                **row,
                "tradeValueWeight": row["tradeValue"] / total_value * 100 if total_value else 0,
                "marketValueWeight": round(value / total_cap * 100, 4),
                "industry": industry,
                "lastUpdated": row.pop("lastUpdated"),
            }
        )
    body: dict[str, Any] = {"date": d.isoformat()}
    if period:
        body["period"] = period
    else:
        body["time"] = datetime.fromtimestamp(t / 1e6, cal.TAIPEI).strftime("%H%M%S")
    body.update(symbol=index.symbol, data=rows)
    return body


ROUTES = (Route("/stock/snapshot/heatmap/{symbol}", snapshot_heatmap),)
