"""The REST routes of the sandbox: parameter rules and response bodies, one function a route.

Each handler takes the path's match info and the query (a ``Query``) and returns the JSON
body, or raises ``ServiceError`` with the status and message the service answers with. The
HTTP concerns (keys, plans, rate limits, latency, faults) live in ``_server``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from . import _adjusted as adj
from . import _calendar as cal
from . import _payloads as wire
from . import _technical as tech
from ._futopt import PRODUCTS, FutOpt
from ._market import Market
from ._universe import Instrument

MINUTE_FRAMES = ("1", "3", "5", "10", "15", "30", "60")
TIMEFRAMES = (*MINUTE_FRAMES, "D", "W", "M")
FUTOPT_FRAMES = ("1", "5", "10", "15", "30", "60")
HIST_FIELDS = ("open", "high", "low", "close", "volume", "turnover", "change")
DEFAULT_FIELDS = ("open", "high", "low", "close", "volume", "change")
MARKETS = ("TSE", "OTC", "ESB", "TIB", "PSB")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _year_before(d: date) -> date:
    """The same month and day a year earlier (29 February maps to 28 February)."""
    return d.replace(year=d.year - 1, day=28) if (d.month, d.day) == (2, 29) else \
        d.replace(year=d.year - 1)


class ServiceError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad(message: str) -> ServiceError:
    return ServiceError(400, message)


class Query:
    """Query-string access with the service's parsing rules."""

    def __init__(self, items: dict[str, str]) -> None:
        self.items = items

    def get(self, name: str) -> str | None:
        return self.items.get(name)

    def choice(self, name: str, allowed: tuple[str, ...]) -> str | None:
        """An optional value from ``allowed``."""
        value = self.items.get(name)
        if value is not None and value not in allowed:
            raise bad(f"Invalid {name} '{value}'; allowed values: {', '.join(allowed)}")
        return value

    def pick(self, name: str, allowed: tuple[str, ...], default: str) -> str:
        """A value from ``allowed``, ``default`` when absent."""
        value = self.choice(name, allowed)
        return default if value is None else value

    def need(self, name: str, allowed: tuple[str, ...]) -> str:
        """A required value from ``allowed``."""
        value = self.choice(name, allowed)
        if value is None:
            raise bad(f"{name} is required; allowed values: {', '.join(allowed)}")
        return value

    def flag(self, name: str) -> bool | None:
        value = self.items.get(name)
        if value is None:
            return None
        if value.lower() in ("true", "1"):
            return True
        if value.lower() in ("false", "0"):
            return False
        raise bad(f"Invalid {name} '{value}'; allowed values: true, false")

    def whole(self, name: str, default: int | None = None, minimum: int = 0) -> int:
        """A whole number; required when there is no ``default``."""
        value = self.items.get(name)
        if value is None:
            if default is None:
                raise bad(f"{name} is required (a whole number)")
            return default
        try:
            n = int(value)
        except ValueError:
            raise bad(f"Invalid {name} '{value}': expected a whole number") from None
        if n < minimum:
            raise bad(f"Invalid {name} '{value}': must be at least {minimum}")
        return n

    def number(self, name: str) -> float | None:
        value = self.items.get(name)
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            raise bad(f"Invalid {name} '{value}': expected a number") from None

    def day(self, name: str) -> date | None:
        value = self.items.get(name)
        if value is None:
            return None
        if not DATE_RE.match(value):
            raise bad(f"Invalid {name} '{value}': expected yyyy-MM-dd")
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise bad(f"Invalid {name} '{value}': not a calendar date") from None

    def need_day(self, name: str) -> date:
        value = self.day(name)
        if value is None:
            raise bad(f"{name} is required (yyyy-MM-dd)")
        return value


@dataclass(frozen=True)
class Route:
    path: str  # relative to /marketdata/v1.0
    handler: Callable[..., Any]
    gated: bool = False  # developer and advanced plans only


class Service:
    """Response bodies of every endpoint, for the market and clock of one sandbox."""

    def __init__(self, market: Market, clock: Callable[[], datetime]) -> None:
        self.market = market
        self.futopt = FutOpt(market)
        self.clock = clock

    # --- helpers ---------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock().astimezone(cal.TAIPEI)

    def instrument(self, symbol: str) -> Instrument:
        inst = self.market.universe.get(symbol)
        if inst is None:
            raise ServiceError(404, "Resource Not Found")
        return inst

    def today(self) -> date:
        return cal.session_date(self.now())

    def t_us(self, d: date) -> int:
        """Visibility horizon on day ``d``: now on the current day, everything on past days."""
        now = self.now()
        if d < now.date():
            return 2**62
        return cal.epoch_us(now)

    def _day(self, inst: Instrument, oddlot: bool):
        if oddlot and inst.type != "EQUITY":
            raise ServiceError(404, "Resource Not Found")
        d = self.today()
        day = self.market.day(inst.symbol, d, oddlot=oddlot)
        return d, day

    @staticmethod
    def _oddlot(q: Query) -> bool:
        return q.choice("type", ("oddlot",)) == "oddlot"

    # --- stock intraday -------------------------------------------------------------------

    def tickers(self, m: dict, q: Query) -> dict:
        type_ = q.need("type", ("EQUITY", "INDEX", "WARRANT", "ODDLOT"))
        exchange = q.choice("exchange", ("TWSE", "TPEx"))
        market = q.choice("market", MARKETS)
        industry = q.get("industry")
        flags = {k: q.flag(k) for k in ("isNormal", "isAttention", "isDisposition", "isHalted")}
        want = "EQUITY" if type_ == "ODDLOT" else type_
        d = self.today()
        rows = []
        for inst in self.market.universe.instruments.values():
            if inst.type != want or inst.first_day > d:
                continue
            if type_ == "ODDLOT" and inst.market == "ESB":
                continue
            if exchange and inst.exchange != exchange:
                continue
            if market and inst.market != market:
                continue
            if industry and inst.industry != industry:
                continue
            if flags["isAttention"] and not inst.attention:
                continue
            if flags["isDisposition"] and not inst.disposition:
                continue
            if flags["isNormal"] and (inst.attention or inst.disposition):
                continue
            if flags["isHalted"] and self.market.daily(inst.symbol).index_of(d) is not None:
                continue
            rows.append({"symbol": inst.symbol, "name": inst.name})
        if exchange is None:  # the envelope names the exchange of the selection
            exchange = "TPEx" if market in ("OTC", "ESB", "TIB", "PSB") else "TWSE"
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

    def ticker(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        oddlot = self._oddlot(q)
        d = self.today()
        daily = self.market.daily(inst.symbol)
        i = daily.index_of(d)
        if i is None:  # suspended today: previous close is the last close
            i = int(np.searchsorted(daily.dates, np.datetime64(d))) - 1
            ref = prev = int(daily.close[max(i, 0)])
            up, down = cal.limits(ref, inst.etf) if inst.has_limits else (0, 0)
            status = "SUSPENDED"
        else:
            ref, prev = int(daily.ref[i]), int(daily.prev_close[i])
            up, down = int(daily.limit_up[i]), int(daily.limit_down[i])
            status = "NORMAL"
        out = wire.header(inst, d)
        out.update({"name": inst.name, "nameEn": inst.name_en, "industry": inst.industry,
                    "securityType": inst.security_type, "previousClose": wire.px(prev),
                    "referencePrice": wire.px(ref)})
        if inst.type == "INDEX":
            out.pop("nameEn")
            out.update({"openTime": "09:00:00", "closeTime": "13:30:00"})
            return out
        if inst.has_limits:
            out.update({"limitUpPrice": wire.px(up), "limitDownPrice": wire.px(down),
                        "canDayTrade": inst.day_trade, "canBuyDayTrade": inst.day_trade,
                        "canBelowFlatMarginShortSell": inst.type == "EQUITY",
                        "canBelowFlatSBLShortSell": inst.type == "EQUITY"})
        out.update({"isAttention": inst.attention, "isDisposition": inst.disposition})
        if inst.has_limits:
            out.update({"isUnusuallyRecommended": False, "isSpecificAbnormally": False,
                        "matchingInterval": 60 if oddlot else 0})
        out.update({"securityStatus": status, "boardLot": 1 if oddlot else inst.board_lot,
                    "tradingCurrency": "TWD"})
        if inst.type == "WARRANT":
            extra = dict(inst.extra)
            under = self.market.daily(inst.underlying or "2330")
            j = under.index_of(d)
            ref_u = int(under.ref[j]) if j is not None else int(under.close[-1])
            out.update({"exercisePrice": extra["exercisePrice"], "exercisedVolume": 0,
                        "cancelledVolume": 0, "remainingVolume": 5000,
                        "exerciseRatio": extra["exerciseRatio"],
                        "knockInPrice": wire.px(cal.round_tick(ref_u * 1.3)),
                        "knockOutPrice": wire.px(cal.round_tick(ref_u * 0.7)),
                        "maturityDate": extra["maturityDate"]})
        return out

    def quote(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        d, day = self._day(inst, self._oddlot(q))
        if day is None:
            out = wire.header(inst, d)
            out["name"] = inst.name
            return out
        return wire.quote(day, self.t_us(d), inst.name, self.market.rng)

    def candles(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        tf = q.pick("timeframe", MINUTE_FRAMES, "1")
        sort = q.pick("sort", ("asc", "desc"), "asc")
        d, day = self._day(inst, self._oddlot(q))
        rows = [] if day is None else wire.candles(day, self.t_us(d), int(tf))
        if sort == "desc":
            rows.reverse()
        out = wire.header(inst, d)
        out["timeframe"] = tf
        out["data"] = rows
        return out

    def trades(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        offset = q.whole("offset", 0)
        limit = q.whole("limit", 50, minimum=1)
        sort = q.pick("sort", ("asc", "desc"), "desc")
        trial = bool(q.flag("isTrial"))
        d, day = self._day(inst, self._oddlot(q))
        rows = [] if day is None else wire.trade_rows(day, self.t_us(d), trial=trial)
        if sort == "desc":
            rows.reverse()
        out = wire.header(inst, d)
        out["data"] = rows[offset : offset + limit]
        return out

    def volumes(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        d, day = self._day(inst, self._oddlot(q))
        out = wire.header(inst, d)
        out["data"] = [] if day is None else wire.volume_rows(day, self.t_us(d))
        return out

    # --- snapshot --------------------------------------------------------------------------

    def _snapshot_rows(self, market: str, type_: str) -> tuple[date, str, list[dict]]:
        d = self.today()
        t = self.t_us(d)
        now = self.now()
        snap = min(now, cal.at(d, cal.SESSION_CLOSE) + timedelta(minutes=5)) \
            if now.date() == d else cal.at(d, cal.SESSION_CLOSE) + timedelta(minutes=5)
        snap = snap.replace(second=snap.second - snap.second % 5, microsecond=0)
        rows = []
        for inst in self.market.universe.instruments.values():
            if inst.type != "EQUITY" or inst.market != market:
                continue
            if type_ == "COMMONSTOCK" and inst.security_type != "01":
                continue
            day = self.market.day(inst.symbol, d)
            if day is None:
                continue
            qt = wire.quote(day, t, inst.name, self.market.rng)
            if "closePrice" not in qt:
                continue
            rows.append({"type": inst.type, "symbol": inst.symbol, "name": inst.name,
                         "openPrice": qt["openPrice"], "highPrice": qt["highPrice"],
                         "lowPrice": qt["lowPrice"], "closePrice": qt["closePrice"],
                         "change": qt["change"], "changePercent": qt["changePercent"],
                         "tradeVolume": qt["total"]["tradeVolume"],
                         "tradeValue": qt["total"]["tradeValue"],
                         "lastUpdated": qt["lastUpdated"]})
        return d, snap.strftime("%H%M%S"), rows

    def _market_param(self, m: dict) -> str:
        market = m["market"]
        if market not in MARKETS:
            raise bad(f"Invalid market '{market}'; allowed values: {', '.join(MARKETS)}")
        return market

    def snapshot_quotes(self, m: dict, q: Query) -> dict:
        market = self._market_param(m)
        type_ = q.pick("type", ("ALLBUT0999", "COMMONSTOCK"), "ALLBUT0999")
        d, time_, rows = self._snapshot_rows(market, type_)
        return {"date": d.isoformat(), "time": time_, "market": market, "data": rows}

    def snapshot_movers(self, m: dict, q: Query) -> dict:
        market = self._market_param(m)
        direction = q.need("direction", ("up", "down"))
        change = q.need("change", ("percent", "value"))
        type_ = q.pick("type", ("ALLBUT0999", "COMMONSTOCK"), "ALLBUT0999")
        tests = {k: q.number(k) for k in ("gt", "gte", "lt", "lte", "eq")}
        d, time_, rows = self._snapshot_rows(market, type_)
        key = "changePercent" if change == "percent" else "change"
        rows = [r for r in rows if (r[key] > 0 if direction == "up" else r[key] < 0)]
        ops = {"gt": lambda a, b: a > b, "gte": lambda a, b: a >= b, "lt": lambda a, b: a < b,
               "lte": lambda a, b: a <= b, "eq": lambda a, b: a == b}
        for k, v in tests.items():
            if v is not None:
                rows = [r for r in rows if ops[k](r[key], v)]
        rows.sort(key=lambda r: r[key], reverse=direction == "up")
        return {"date": d.isoformat(), "time": time_, "market": market, "change": change,
                "data": rows}

    def snapshot_actives(self, m: dict, q: Query) -> dict:
        market = self._market_param(m)
        trade = q.need("trade", ("volume", "value"))
        type_ = q.pick("type", ("ALLBUT0999", "COMMONSTOCK"), "ALLBUT0999")
        d, time_, rows = self._snapshot_rows(market, type_)
        key = "tradeVolume" if trade == "volume" else "tradeValue"
        rows.sort(key=lambda r: r[key], reverse=True)
        return {"date": d.isoformat(), "time": time_, "market": market, "trade": trade,
                "data": rows}

    # --- historical ------------------------------------------------------------------------

    def _range(self, inst: Instrument, q: Query, required: bool) -> tuple[date, date]:
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
            end = self.today()
        if start is None:
            start = date.min if end.year == date.min.year else \
                _year_before(end) + timedelta(days=1)
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

    def _daily_rows(self, inst: Instrument, start: date, end: date, tf: str,
                    fields: tuple[str, ...], adjusted: bool = False) -> list[dict]:
        """D/W/M candles labelled by their first trading day, aggregated over whole periods."""
        daily = self.market.daily(inst.symbol)
        now = self.now()
        today = self.today()
        visible_end = min(end, today) if tf == "D" else today
        sl = daily.span(inst.first_day, visible_end)
        dates = daily.dates[sl]
        if len(dates) == 0:
            return []
        cols = {k: getattr(daily, k)[sl].copy() for k in
                ("ref", "open", "high", "low", "close", "volume")}
        # the current day: only what has traded by now
        last = dates[-1].astype(object)
        if last == now.date() and last == today:
            day = self.market.day(inst.symbol, last)
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
            periods = dates.astype(f"datetime64[{unit}]") if unit == "M" else \
                ((dates - np.datetime64("1970-01-05")).astype(np.int64) // 7)
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
            prev = np.array([cols["close"][s - 1] if s > 0 else cols["ref"][0] for s in starts],
                            dtype=np.int64)
        mult = 1000 if inst.unit == "lots" else 1
        rows = []
        for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            close = int(cols["close"][e - 1])
            values: dict[str, Any] = {
                "open": wire.px(cols["open"][s]), "high": wire.px(cols["high"][s:e].max()),
                "low": wire.px(cols["low"][s:e].min()), "close": wire.px(close),
                "volume": int(cols["volume"][s:e].sum()) * mult,
                "change": wire.px(close - int(prev[k])),
            }
            if "turnover" in fields:
                values["turnover"] = sum(
                    self._turnover(inst, dates[j].astype(object)) for j in range(s, e))
            row = {"date": str(keys[lo + k])}
            row.update({f: values[f] for f in fields})
            rows.append(row)
        return rows

    def _turnover(self, inst: Instrument, d: date) -> int:
        now = self.now()
        if d == now.date():
            day = self.market.day(inst.symbol, d)
            return 0 if day is None else day.value(day.visible(cal.epoch_us(now)))
        return self.market.turnover(inst.symbol, d)

    def _minute_rows(self, inst: Instrument, tf: int, fields: tuple[str, ...]) -> list[dict]:
        """The latest 30 days of minute candles (volume in shares, like all historical data)."""
        today = self.today()
        mult = 1000 if inst.unit == "lots" else 1
        rows: list[dict] = []
        for d64 in cal.trading_days(today - timedelta(days=29), today):
            d = d64.astype(object)
            day = self.market.day(inst.symbol, d)
            if day is None:
                continue
            for c in wire.candles(day, self.t_us(d), tf):
                c["volume"] *= mult
                row = {"date": c["date"]}
                row.update({f: c[f] for f in fields})
                rows.append(row)
        return rows

    def _fields(self, q: Query, minute: bool) -> tuple[str, ...]:
        raw = q.get("fields")
        if raw is None:
            return tuple(f for f in DEFAULT_FIELDS if not (minute and f == "change"))
        got = tuple(f.strip() for f in raw.split(",") if f.strip())
        allowed = HIST_FIELDS[:5] if minute else HIST_FIELDS
        for f in got:
            if f not in allowed:
                raise bad(f"Invalid fields '{f}'; allowed values: {', '.join(allowed)}")
        return tuple(f for f in HIST_FIELDS if f in got)

    def historical_candles(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        tf = q.pick("timeframe", TIMEFRAMES, "D")
        sort = q.pick("sort", ("asc", "desc"), "desc")
        minute = tf in MINUTE_FRAMES
        adjusted = bool(q.flag("adjusted"))
        if minute and adjusted:
            raise bad("adjusted is only available for timeframes D, W and M")
        if minute and (q.get("from") or q.get("to")):
            raise bad("from and to cannot be set for minute timeframes "
                      "(the latest 30 days are returned)")
        fields = self._fields(q, minute)
        if minute:
            rows = self._minute_rows(inst, int(tf), fields)
        else:
            start, end = self._range(inst, q, required=False)
            rows = self._daily_rows(inst, start, end, tf, fields, adjusted)
        if sort == "desc":
            rows.reverse()
        out = wire.header(inst, self.today())
        out["timeframe"] = tf
        if adjusted:
            out["adjusted"] = True
        out["data"] = rows
        return out

    def historical_stats(self, m: dict, q: Query) -> dict:
        inst = self.instrument(m["symbol"])
        daily = self.market.daily(inst.symbol)
        now = self.now()
        last_complete = now.date() if now.time() >= cal.SESSION_CLOSE else \
            now.date() - timedelta(days=1)
        sl = daily.span(inst.first_day, last_complete)
        i = sl.stop - 1
        if i < 0:
            raise ServiceError(404, "Resource Not Found")
        d = daily.dates[i].astype(object)
        year = daily.span(d - timedelta(days=364), d)
        mult = 1000 if inst.unit == "lots" else 1
        close, ref = int(daily.close[i]), int(daily.ref[i])
        out = wire.header(inst, d)
        out.update({
            "name": inst.name, "openPrice": wire.px(daily.open[i]),
            "highPrice": wire.px(daily.high[i]), "lowPrice": wire.px(daily.low[i]),
            "closePrice": wire.px(close), "change": wire.px(close - ref),
            "changePercent": wire.ratio((close - ref) * 100, ref),
            "tradeVolume": int(daily.volume[i]) * mult,
            "tradeValue": self.market.turnover(inst.symbol, d),
            "previousClose": wire.px(daily.prev_close[i]),
            "week52High": wire.px(daily.high[year].max()),
            "week52Low": wire.px(daily.low[year].min()),
        })
        return out

    # --- technical -------------------------------------------------------------------------

    def _technical(self, m: dict, q: Query, name: str, params: tuple[str, ...]) -> dict:
        inst = self.instrument(m["symbol"])
        tf = q.need("timeframe", TIMEFRAMES)
        values = {p: q.whole(p, minimum=1) for p in params}
        if tf in MINUTE_FRAMES:
            start, end = q.need_day("from"), q.need_day("to")
            rows = self._minute_rows(inst, int(tf), ("open", "high", "low", "close"))
        else:
            start, end = self._range(inst, q, required=True)
            rows = self._daily_rows(inst, start, end, tf, ("open", "high", "low", "close"))
        high = np.array([r["high"] for r in rows], dtype=float)
        low = np.array([r["low"] for r in rows], dtype=float)
        close = np.array([r["close"] for r in rows], dtype=float)
        series = tech.compute(name, high, low, close, values)
        data = []
        for k, row in enumerate(rows):
            item = {"date": row["date"]}
            ok = True
            for out_name, arr in series.items():
                v = arr[k]
                if v != v:  # warm-up
                    ok = False
                    break
                item[out_name] = float(v)
            if ok:
                data.append(item)
        out: dict[str, Any] = {"symbol": inst.symbol, "from": str(start), "to": str(end),
                               "timeframe": tf}
        out.update(values)
        out["data"] = data
        return out

    def sma(self, m: dict, q: Query) -> dict:
        return self._technical(m, q, "sma", ("period",))

    def rsi(self, m: dict, q: Query) -> dict:
        return self._technical(m, q, "rsi", ("period",))

    def kdj(self, m: dict, q: Query) -> dict:
        return self._technical(m, q, "kdj", ("rPeriod", "kPeriod", "dPeriod"))

    def macd(self, m: dict, q: Query) -> dict:
        return self._technical(m, q, "macd", ("fast", "slow", "signal"))

    def bb(self, m: dict, q: Query) -> dict:
        return self._technical(m, q, "bb", ("period",))

    # --- corporate actions -----------------------------------------------------------------

    def _action_range(self, q: Query) -> tuple[date, date, str]:
        start, end = q.day("start_date"), q.day("end_date")
        today = self.now().date()
        end = end or today + timedelta(days=60)
        start = start or end - timedelta(days=90)
        if start > end:
            raise bad(f"start_date ({start}) must not be after end_date ({end})")
        sort = q.pick("sort", ("asc", "desc"), "asc")
        return start, end, sort

    def capital_changes(self, m: dict, q: Query) -> dict:
        start, end, sort = self._action_range(q)
        rows = []
        for sym in self.market.universe.instruments:
            inst = self.market.universe[sym]
            if inst.type != "EQUITY":
                continue
            for ch, prev, ref in self.market.daily(sym).capital_changes:
                if not (start <= ch.effective <= end):
                    continue
                up, down = cal.limits(ref, inst.etf)
                raw: dict[str, Any] = {
                    "lastClosePrice": wire.px(prev), "previousClose": wire.px(prev),
                    "referencePrice": wire.px(ref), "limitUpPrice": wire.px(up),
                    "limitDownPrice": wire.px(down), "openingReferencePrice": wire.px(ref)}
                raw.update(ch.raw)
                if ch.action_type == "capital_reduction":
                    raw["exRightsReferencePrice"] = wire.px(ref)
                    raw["exrightReferencePrice"] = wire.px(ref)
                row = {"symbol": sym, "name": inst.name, "exchange": inst.exchange,
                       "actionType": ch.action_type, "effectiveDate": ch.effective.isoformat(),
                       "adjustmentFactor": ch.factor, "raw": raw}
                if ch.halt:
                    row["haltDate"] = ch.halt.isoformat()
                if ch.resume:
                    row["resumeDate"] = ch.resume.isoformat()
                rows.append(row)
        rows.sort(key=lambda r: (r["effectiveDate"], r["symbol"]), reverse=sort == "desc")
        return {"start_date": str(start), "end_date": str(end), "sort": sort, "data": rows}

    def dividends(self, m: dict, q: Query) -> dict:
        start, end, sort = self._action_range(q)
        today = self.now().date()
        announced_until = today + timedelta(days=60)
        rows = []
        for sym, inst in self.market.universe.instruments.items():
            if inst.type != "EQUITY":
                continue
            for dv in self.market.daily(sym).dividends:
                if not (start <= dv.ex_date <= end) or dv.ex_date > announced_until:
                    continue
                happened = dv.ex_date <= today
                kind = "權息" if dv.stock and dv.cash else ("權" if dv.stock else "息")
                rights = dv.previous_close - dv.cash - dv.reference
                up, down = cal.limits(dv.reference, inst.etf)
                row = {"date": dv.ex_date.isoformat(), "exchange": inst.exchange,
                       "symbol": sym, "name": inst.name,
                       "previousClose": wire.px(dv.previous_close) if happened else None,
                       "referencePrice": wire.px(dv.reference) if happened else None,
                       "dividend": wire.px(dv.cash + max(rights, 0)) if happened else None,
                       "dividendType": kind,
                       "limitUpPrice": wire.px(up) if happened else None,
                       "limitDownPrice": wire.px(down) if happened else None,
                       "openingReferencePrice": wire.px(dv.reference) if happened else None,
                       "exdividendReferencePrice": wire.px(dv.reference) if happened else None,
                       "cashDividend": wire.px(dv.cash),
                       "stockDividendShares": dv.stock}
                rows.append(row)
        rows.sort(key=lambda r: (r["date"], r["symbol"]), reverse=sort == "desc")
        return {"start_date": str(start), "end_date": str(end), "sort": sort, "data": rows}

    def listing_applicants(self, m: dict, q: Query) -> dict:
        start, end, sort = self._action_range(q)
        today = self.now().date()
        rows = [row for year in range(max(start.year, 2010), end.year + 1)
                for row in self._applicants(year, today)
                if start <= date.fromisoformat(row["applicationDate"]) <= end]
        rows.sort(key=lambda r: (r["applicationDate"], r["symbol"]), reverse=sort == "desc")
        return {"start_date": str(start), "end_date": str(end), "sort": sort, "data": rows}

    def _applicants(self, year: int, today: date) -> list[dict]:
        """The year's six applicants, drawn in full whatever range is asked (same seed and
        date, same rows). Symbols repeat every ten years, like a company that applies again:
        a row is identified by (symbol, applicationDate). Later steps fill in as ``today``
        passes them (listing date, price), so rows change after their application date."""
        rng = self.market.rng("applicants", year)
        rows = []
        for k in range(6):
            applied = date(year, 1, 1) + timedelta(days=int(rng.integers(0, 365)))
            twse = k % 2 == 0
            steps = np.cumsum(rng.integers(20, 60, 4)).tolist()
            capital = int(rng.integers(300_000, 5_000_000))
            price = float(rng.integers(30, 400))
            dates = [applied + timedelta(days=s) for s in steps]
            known = [d.isoformat() if d <= today else None for d in dates]
            rows.append({
                "symbol": f"{6900 + (year % 10) * 10 + k}",
                "name": f"{'台灣' if twse else '櫃買'}新創{year % 100:02d}{k}",
                "exchange": "TWSE" if twse else "TPEx",
                "applicationDate": applied.isoformat(),
                "chairman": ["王大明", "林小華", "陳志強", "張美玲"][k % 4],
                "capitalAtApplication": capital,
                "reviewCommitteeDate": known[0], "boardApprovalDate": known[1],
                ("contractFilingDate" if twse else "contractApprovalDate"): known[2],
                "listedDate": known[3],
                "underwriter": ["元大證券", "凱基證券", "富邦證券"][k % 3],
                "underwritingPrice": price if known[3] else None,
                "remarks": None})
        return rows

    # --- futures and options ---------------------------------------------------------------

    def _futopt_date(self, afterhours: bool) -> date:
        now = self.now()
        if not afterhours:
            return self.today()
        d = now.date()
        if now.time() < cal.FUT_AH_OPEN:
            d = d - timedelta(days=1)
        return d if cal.is_trading_day(d) else cal.previous_trading_day(d)

    def _session(self, q: Query) -> bool:
        value = q.get("session")
        if value is None:
            return False
        if value.lower() != "afterhours":
            raise bad(f"Invalid session '{value}'; allowed values: afterhours")
        return True

    def products(self, m: dict, q: Query) -> dict:
        type_ = q.need("type", ("FUTURE", "OPTION"))
        q.choice("exchange", ("TAIFEX",))
        session = q.choice("session", ("REGULAR", "AFTERHOURS"))
        ctype = q.choice("contractType", ("I", "R", "B", "C", "S", "E"))
        status = q.choice("status", ("N", "P", "U"))
        rows = []
        for p in PRODUCTS.values():
            if p.type != type_ or (ctype and ctype != "I") or (status and status != "N"):
                continue
            rows.append({"symbol": p.code, "type": p.type, "name": p.name,
                         "underlyingSymbol": "IX0001", "contractType": "I",
                         "contractSize": p.contract_size, "statusCode": "N",
                         "tradingCurrency": "TWD", "quoteAcceptable": True,
                         "startDate": "1998-07-21" if p.code == "TXF" else "2001-12-24",
                         "canBlockTrade": True, "expiryType": "S", "underlyingType": "E",
                         "marketCloseGroup": 1, "endSession": 0})
        return self._futopt_envelope(type_, rows, session=session, contractType=ctype,
                                     status=status)

    @staticmethod
    def _futopt_envelope(type_: str, rows: list[dict], **echo: str | None) -> dict:
        """The list envelope: type, exchange, the filters that were given, then the rows."""
        out: dict[str, Any] = {"type": type_, "exchange": "TAIFEX"}
        out.update({k: v for k, v in echo.items() if v})
        out["data"] = rows
        return out

    def futopt_tickers(self, m: dict, q: Query) -> dict:
        type_ = q.need("type", ("FUTURE", "OPTION"))
        q.choice("exchange", ("TAIFEX",))
        session = q.choice("session", ("REGULAR", "AFTERHOURS"))
        product = q.get("product")
        ctype = q.choice("contractType", ("I", "R", "B", "C", "S", "E"))
        d = self._futopt_date(session == "AFTERHOURS")
        rows = []
        for c in self.futopt.contracts(d):
            if c.product.type != type_ or (product and c.product.code != product):
                continue
            if ctype and ctype != "I":
                continue
            day = self.futopt.day(c, d, session == "AFTERHOURS")
            rows.append({"type": type_, "symbol": c.symbol, "name": c.name,
                         "referencePrice": wire.px(day.reference) if day else None,
                         "contractType": "I", "startDate": c.start.isoformat(),
                         "endDate": c.settlement.isoformat(), "flowGroup": 1,
                         "settlementDate": c.settlement.isoformat(),
                         "isDynamicBanding": True})
        return self._futopt_envelope(type_, rows, session=session, product=product,
                                     contractType=ctype)

    def _contract_day(self, m: dict, q: Query):
        afterhours = self._session(q)
        d = self._futopt_date(afterhours)
        c = self.futopt.contract(m["symbol"], d)
        if c is None:
            raise ServiceError(404, "Resource Not Found")
        day = self.futopt.day(c, d, afterhours)
        if day is None:
            raise ServiceError(404, "Resource Not Found")
        return c, d, day

    def _fo_header(self, day, d: date) -> dict:
        return {"date": d.isoformat(), "type": day.inst.type, "exchange": "TAIFEX",
                "symbol": day.inst.symbol}

    def _fo_t(self, day) -> int:
        return min(cal.epoch_us(self.now()), int(day.time[-1]))

    def futopt_ticker(self, m: dict, q: Query) -> dict:
        c, d, day = self._contract_day(m, q)
        out = self._fo_header(day, d)
        out.update({"name": c.name, "referencePrice": wire.px(day.reference),
                    "settlementDate": c.settlement.isoformat(), "startDate": c.start.isoformat(),
                    "endDate": c.settlement.isoformat()})
        return out

    def futopt_quote(self, m: dict, q: Query) -> dict:
        c, d, day = self._contract_day(m, q)
        t = self._fo_t(day)
        base = wire.quote(day, t, c.name, self.market.rng)
        out = self._fo_header(day, d)
        out["name"] = c.name
        for k in ("previousClose", "openPrice", "openTime", "highPrice", "highTime", "lowPrice",
                  "lowTime", "closePrice", "closeTime", "avgPrice", "change", "changePercent",
                  "amplitude", "lastPrice", "lastSize"):
            if k in base:
                out[k] = base[k]
        n = day.visible(t)
        if n:
            out["serial"] = f"{int(day.serial[n - 1]):08d}"
            sizes, side = day.size[:n], day.side[:n]
            out["total"] = {"tradeVolume": int(sizes.sum()),
                            "totalBidMatch": int(sizes[side < 0].sum()),
                            "totalAskMatch": int(sizes[side > 0].sum()),
                            "time": int(day.time[n - 1])}
            j = n - 1
            out["lastTrade"] = {"bid": wire.px(day.bid[j]), "ask": wire.px(day.ask[j]),
                                "price": wire.px(day.price[j]), "size": int(day.size[j]),
                                "time": int(day.time[j]), "serial": f"{int(day.serial[j]):08d}"}
            out["lastUpdated"] = int(day.time[j])
        return out

    def futopt_candles(self, m: dict, q: Query) -> dict:
        c, d, day = self._contract_day(m, q)
        tf = q.pick("timeframe", FUTOPT_FRAMES, "1")
        rows = self._fo_candles(day, int(tf))
        out = self._fo_header(day, d)
        out["timeframe"] = tf
        out["data"] = rows
        return out

    def _fo_candles(self, day, tf: int) -> list[dict]:
        t = self._fo_t(day)
        n = day.visible(t)
        if not n:
            return []
        t0 = int(day.time[0]) - int(day.time[0]) % 60_000_000
        width = tf * 60_000_000
        times, prices, sizes = day.time[:n], day.price[:n], day.size[:n]
        bucket = (times - t0) // width
        starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
        ends = np.r_[starts[1:], n]
        cum = np.cumsum(prices * sizes) / np.cumsum(sizes)
        return [{"date": wire.iso_minute(t0 + int(bucket[s]) * width),
                 "open": wire.px(prices[s]), "high": wire.px(prices[s:e].max()),
                 "low": wire.px(prices[s:e].min()), "close": wire.px(prices[e - 1]),
                 "volume": int(sizes[s:e].sum()), "average": round(float(cum[e - 1]) / 100, 2)}
                for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]

    def futopt_trades(self, m: dict, q: Query) -> dict:
        c, d, day = self._contract_day(m, q)
        offset = q.whole("offset", 0)
        limit = q.whole("limit", 50, minimum=1)
        rows = wire.trade_rows(day, self._fo_t(day), futopt=True)
        rows.reverse()
        out = self._fo_header(day, d)
        out["data"] = rows[offset : offset + limit]
        return out

    def futopt_volumes(self, m: dict, q: Query) -> dict:
        c, d, day = self._contract_day(m, q)
        out = self._fo_header(day, d)
        out["data"] = wire.volume_rows(day, self._fo_t(day), split=False)
        return out

    # --- the route table -------------------------------------------------------------------

    def routes(self) -> list[Route]:
        s, f = "/stock", "/futopt"
        table = [
            Route(f"{s}/intraday/tickers", self.tickers),
            Route(f"{s}/intraday/ticker/{{symbol}}", self.ticker),
            Route(f"{s}/intraday/quote/{{symbol}}", self.quote),
            Route(f"{s}/intraday/candles/{{symbol}}", self.candles),
            Route(f"{s}/intraday/trades/{{symbol}}", self.trades),
            Route(f"{s}/intraday/volumes/{{symbol}}", self.volumes),
            Route(f"{s}/snapshot/quotes/{{market}}", self.snapshot_quotes, gated=True),
            Route(f"{s}/snapshot/movers/{{market}}", self.snapshot_movers, gated=True),
            Route(f"{s}/snapshot/actives/{{market}}", self.snapshot_actives, gated=True),
            Route(f"{s}/historical/candles/{{symbol}}", self.historical_candles),
            Route(f"{s}/historical/stats/{{symbol}}", self.historical_stats),
            Route(f"{s}/technical/sma/{{symbol}}", self.sma),
            Route(f"{s}/technical/rsi/{{symbol}}", self.rsi),
            Route(f"{s}/technical/kdj/{{symbol}}", self.kdj),
            Route(f"{s}/technical/macd/{{symbol}}", self.macd),
            Route(f"{s}/technical/bb/{{symbol}}", self.bb),
            Route(f"{s}/corporate-actions/capital-changes", self.capital_changes, gated=True),
            Route(f"{s}/corporate-actions/diviends", self.dividends, gated=True),
            Route(f"{s}/corporate-actions/listing-applicants", self.listing_applicants,
                  gated=True),
            Route(f"{f}/intraday/products", self.products),
            Route(f"{f}/intraday/tickers", self.futopt_tickers),
            Route(f"{f}/intraday/ticker/{{symbol}}", self.futopt_ticker),
            Route(f"{f}/intraday/quote/{{symbol}}", self.futopt_quote),
            Route(f"{f}/intraday/candles/{{symbol}}", self.futopt_candles),
            Route(f"{f}/intraday/trades/{{symbol}}", self.futopt_trades),
            Route(f"{f}/intraday/volumes/{{symbol}}", self.futopt_volumes),
        ]
        # aliases the real service also answers: the SDK's `dividends` spelling, trailing slashes
        aliases = [Route(f"{s}/corporate-actions/dividends", self.dividends, gated=True)]
        for r in table + aliases:
            if "corporate-actions" in r.path:
                aliases.append(Route(r.path + "/", r.handler, gated=True))
        return table + aliases
