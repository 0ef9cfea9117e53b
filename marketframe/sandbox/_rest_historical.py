"""Stock historical routes: D/W/M and minute candles, and the 52-week statistics.

The candle builders are shared with the technical routes (``_rest_technical``).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import numpy as np

from . import _adjusted as adj
from . import _calendar as cal
from . import _payloads as wire
from ._instrument import Instrument
from ._query import Json, Match, Query, ServiceError, bad
from ._service import MINUTE_FRAMES, TIMEFRAMES, Route, Service

HIST_FIELDS = ("open", "high", "low", "close", "volume", "turnover", "change")
DEFAULT_FIELDS = ("open", "high", "low", "close", "volume", "change")


def _year_before(d: date) -> date:
    """The same month and day a year earlier (29 February maps to 28 February)."""
    return (
        d.replace(year=d.year - 1, day=28)
        if (d.month, d.day) == (2, 29)
        else d.replace(year=d.year - 1)
    )


def _range(svc: Service, inst: Instrument, q: Query, required: bool) -> tuple[date, date]:
    """The ``from``..``to`` of a historical or technical query, checked.

    Without ``to`` the range ends today; without ``from`` it is the longest one allowed
    (under one year) ending at ``to``.
    """
    start: date | None
    end: date | None
    if required:
        start, end = q.need_day("from"), q.need_day("to")
    else:
        start, end = q.day("from"), q.day("to")
    if end is None:
        end = svc.today()
    if start is None:
        start = date.min if end.year == date.min.year else _year_before(end) + timedelta(days=1)
    if start > end:
        raise bad(f"from ({start}) must not be after to ({end})")
    # from year 9999 on, every representable to is under a year away
    if start.year < date.max.year and end >= (limit := cal.one_year_after(start)):
        raise bad(f"The query range must be under one year (to must be before {limit})")
    earliest = date(2015, 1, 1) if inst.type == "INDEX" else date(2010, 1, 1)
    if start < earliest:
        what = "index" if inst.type == "INDEX" else "stock"
        raise bad(f"from ({start}) is before the earliest {what} history ({earliest})")
    return start, end


def _daily_rows(
    svc: Service,
    inst: Instrument,
    start: date,
    end: date,
    tf: str,
    fields: tuple[str, ...],
    adjusted: bool = False,
) -> list[Json]:
    """D/W/M candles labelled by their first trading day, aggregated over whole periods."""
    daily = svc.market.daily(inst.symbol)
    now = svc.now()
    today = svc.today()
    visible_end = min(end, today) if tf == "D" else today
    # daily candles need only the asked days (a window of a long history copies no more);
    # weeks and months need the days before ``start`` to find where their periods begin
    sl = daily.span(max(inst.first_day, start) if tf == "D" else inst.first_day, visible_end)
    dates = daily.dates[sl]
    if len(dates) == 0:
        return []
    cols = {
        k: getattr(daily, k)[sl].copy() for k in ("ref", "open", "high", "low", "close", "volume")
    }
    # the current day: only what has traded by now
    last = dates[-1].astype(object)
    if last == now.date() and last == today:
        day = svc.market.day(inst.symbol, last)
        n = day.visible(cal.epoch_us(now)) if day is not None else 0
        if day is None or n == 0:
            dates = dates[:-1]
            cols = {k: v[:-1] for k, v in cols.items()}
        else:
            p = day.price[:n]
            cols["open"][-1], cols["high"][-1] = p[0], p.max()
            cols["low"][-1], cols["close"][-1] = p.min(), p[-1]
            cols["volume"][-1] = day.size[:n].sum()
    if len(dates) == 0:
        return []
    if adjusted:
        cols = adj.scale(daily, dates, cols, today)
    if tf == "D":
        keys = dates
    else:
        unit = "W" if tf == "W" else "M"
        periods = (
            dates.astype(f"datetime64[{unit}]")
            if unit == "M"
            else ((dates - np.datetime64("1970-01-05")).astype(np.int64) // 7)
        )
        first = np.flatnonzero(np.r_[True, periods[1:] != periods[:-1]])
        keys = dates[first]
    lo = int(np.searchsorted(keys, np.datetime64(start)))
    hi = int(np.searchsorted(keys, np.datetime64(end), side="right"))
    if tf == "D":
        starts = np.arange(lo, hi)
        ends = starts + 1
        prev = cols["ref"][lo:hi]
    else:
        bounds = np.r_[first, len(dates)]
        starts, ends = bounds[lo:hi], bounds[lo + 1 : hi + 1]
        prev = np.array(
            [cols["close"][s - 1] if s > 0 else cols["ref"][0] for s in starts], dtype=np.int64
        )
    mult = 1000 if inst.unit == "lots" else 1
    if hi <= lo:
        return []
    # whole periods [start, end): one reduction per column over all of them (a numpy call
    # per row and column was most of a year's answer)
    stop = int(ends[-1])
    close = cols["close"][ends - 1]
    values: dict[str, list[Any]] = {
        "open": _pxs(cols["open"][starts]),
        "high": _pxs(np.maximum.reduceat(cols["high"][:stop], starts)),
        "low": _pxs(np.minimum.reduceat(cols["low"][:stop], starts)),
        "close": _pxs(close),
        "volume": (np.add.reduceat(cols["volume"][:stop], starts).astype(np.int64) * mult).tolist(),
        "change": _pxs(close.astype(np.int64) - np.asarray(prev).astype(np.int64)),
    }
    if "turnover" in fields:
        values["turnover"] = [
            sum(_turnover(svc, inst, dates[j].astype(object)) for j in range(s, e))
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
        ]
    names = ("date", *fields)
    columns = [np.datetime_as_string(keys[lo:hi], unit="D").tolist()]
    columns += [values[f] for f in fields]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _pxs(cents: np.ndarray) -> list[int | float]:
    """:func:`wire.px` of each value (adjusted prices are float cents, cut to whole cents)."""
    return wire.pxs(cents.astype(np.int64, copy=False))


def _turnover(svc: Service, inst: Instrument, d: date) -> int:
    now = svc.now()
    if d == now.date():
        day = svc.market.day(inst.symbol, d)
        return 0 if day is None else day.value(day.visible(cal.epoch_us(now)))
    return svc.market.turnover(inst.symbol, d)


def _minute_rows(svc: Service, inst: Instrument, tf: int, fields: tuple[str, ...]) -> list[Json]:
    """The latest 30 days of minute candles (volume in shares, like all historical data)."""
    today = svc.today()
    mult = 1000 if inst.unit == "lots" else 1
    rows: list[Json] = []
    for d64 in cal.trading_days(today - timedelta(days=29), today):
        d = d64.astype(object)
        day = svc.market.day(inst.symbol, d)
        if day is None:
            continue
        for c in wire.candles(day, svc.t_us(d), tf):
            c["volume"] *= mult
            row = {"date": c["date"]}
            row.update({f: c[f] for f in fields})
            rows.append(row)
    return rows


def _fields(svc: Service, q: Query, minute: bool) -> tuple[str, ...]:
    raw = q.get("fields")
    if raw is None:
        return tuple(f for f in DEFAULT_FIELDS if not (minute and f == "change"))
    got = tuple(f.strip() for f in raw.split(",") if f.strip())
    allowed = HIST_FIELDS[:5] if minute else HIST_FIELDS
    for f in got:
        if f not in allowed:
            raise bad(f"Invalid fields '{f}'; allowed values: {', '.join(allowed)}")
    return tuple(f for f in HIST_FIELDS if f in got)


def historical_candles(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    tf = q.pick("timeframe", TIMEFRAMES, "D")
    sort = q.pick("sort", ("asc", "desc"), "desc")
    minute = tf in MINUTE_FRAMES
    adjusted = bool(q.flag("adjusted"))
    if minute and adjusted:
        raise bad("adjusted is only available for timeframes D, W and M")
    # minute timeframes ignore from/to and return the latest 30 days (wire-facts.md,
    # "Errors and limits"; rest-api.md, technical indicators)
    fields = _fields(svc, q, minute)
    if minute:
        rows = _minute_rows(svc, inst, int(tf), fields)
    else:
        start, end = _range(svc, inst, q, required=False)
        rows = _daily_rows(svc, inst, start, end, tf, fields, adjusted)
    if sort == "desc":
        rows.reverse()
    # the real envelope (samples/stock_historical_candles.json): symbol, type, exchange,
    # market, data; no date; timeframe echoed only when requested (a guess, docs/sandbox.md)
    out: dict[str, Any] = {
        "symbol": inst.symbol,
        "type": inst.type,
        # the board it is on today (an instrument may have moved: ``Instrument.moves``)
        "exchange": inst.board(svc.today())[0],
        "market": inst.board(svc.today())[1],
    }
    if q.get("timeframe") is not None:
        out["timeframe"] = tf
    if adjusted:
        out["adjusted"] = True
    out["data"] = rows
    return out


def historical_stats(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    daily = svc.market.daily(inst.symbol)
    now = svc.now()
    last_complete = (
        now.date() if now.time() >= cal.SESSION_CLOSE else now.date() - timedelta(days=1)
    )
    sl = daily.span(inst.first_day, last_complete)
    i = sl.stop - 1
    if i < 0:
        raise ServiceError(404, "Resource Not Found")
    d = daily.dates[i].astype(object)
    year = daily.span(d - timedelta(days=364), d)
    mult = 1000 if inst.unit == "lots" else 1
    close, ref = int(daily.close[i]), int(daily.ref[i])
    out = wire.header(inst, d)
    out.update(
        {
            "name": inst.name,
            "openPrice": wire.px(daily.open[i]),
            "highPrice": wire.px(daily.high[i]),
            "lowPrice": wire.px(daily.low[i]),
            "closePrice": wire.px(close),
            "change": wire.px(close - ref),
            "changePercent": wire.ratio((close - ref) * 100, ref),
            "tradeVolume": int(daily.volume[i]) * mult,
            "tradeValue": svc.market.turnover(inst.symbol, d),
            "previousClose": wire.px(daily.prev_close[i]),
            "week52High": wire.px(daily.high[year].max()),
            "week52Low": wire.px(daily.low[year].min()),
        }
    )
    return out


S = "/stock/historical"
ROUTES = (
    Route(f"{S}/candles/{{symbol}}", historical_candles),
    Route(f"{S}/stats/{{symbol}}", historical_stats),
)
