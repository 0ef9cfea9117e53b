"""Futures and options history routes (post-#727 contract): ``daily`` and ``candles`` by product.

The figures come from :mod:`._futopt_hist` (the intraday market's own days). Choices where the
reference is silent are listed in ``docs/sandbox.md`` ("Futures/options history").
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from . import _calendar as cal
from . import _payloads as wire
from ._futopt_contracts import PRODUCTS, Contract
from ._futopt_hist import CODE_RE, MONTH_RE, Bar, History, minute_bars, month_of
from ._query import Json, Match, Query, ServiceError, bad
from ._rest_futopt import _futopt_date
from ._rest_historical import _year_before
from ._service import Route, Service

FRAMES = ("1", "5", "10", "15", "30", "60", "D", "W", "M")
FIELDS = ("open", "high", "low", "close", "volume", "average", "transaction", "change")
MINUTE_ONLY = ("average", "transaction")


def _history(svc: Service) -> History:
    return History(svc.futopt)


def _product(m: Match) -> str:
    product = m["product"]
    if product in PRODUCTS:
        return product
    if CODE_RE.fullmatch(product.upper()):
        raise bad(
            f"Invalid product '{product}': it is a contract code. Request the product "
            "(e.g. TXF) in the path and the month as contractMonth (e.g. "
            "/futopt/historical/daily/TXF?contractMonth=202611)"
        )
    raise ServiceError(404, "Resource Not Found")


def _session(q: Query) -> bool:
    """``session``: afterhours or regular, in any case (these routes only)."""
    value = q.get("session")
    if value is None or value.lower() == "regular":
        return False
    if value.lower() != "afterhours":
        raise bad(f"Invalid session '{value}'; allowed values: afterhours, regular")
    return True


def _month(q: Query) -> str | None:
    value = q.get("contractMonth")
    if value is not None and not MONTH_RE.fullmatch(value):
        raise bad(
            f"Invalid contractMonth '{value}'; allowed forms: YYYYMM, YYYYMMWn, "
            "YYYYMMFn, YYYYMM/YYYYMM, 1!, 2!, 3!"
        )
    return value


def _now_us(svc: Service) -> int:
    return cal.epoch_us(svc.now())


# --- daily ---------------------------------------------------------------------------------


def _row(c: Contract | None, month: str, bar: Bar | None) -> dict[str, Any]:
    option = c if c is not None and c.strike is not None else None
    change = None if bar is None or not bar.reference else bar.close - bar.reference
    return {
        "contractMonth": month,
        "callPut": ("CALL" if option.call else "PUT") if option else None,
        "strikePrice": option.strike if option else None,
        "exchange": "TAIFEX",
        "openPrice": wire.px(bar.open) if bar else None,
        "highPrice": wire.px(bar.high) if bar else None,
        "lowPrice": wire.px(bar.low) if bar else None,
        "closePrice": wire.px(bar.close) if bar else None,
        "change": wire.px(change),
        "changePercent": None
        if bar is None or change is None
        else wire.ratio(change * 100, bar.reference),
        "volume": bar.volume if bar else 0,
    }


#: futures whose daily answer also carries option rows (the recorded TXF answer has one), the
#: options product they come from, and how many strikes each side of the money
OPTION_ROWS = {"TXF": "TXO"}
OPTION_STRIKES_EACH_SIDE = 5


def _option_contracts(h: History, product: str, d: date) -> list[Contract]:
    """The nearest month's options of ``product``'s options product at the strikes nearest
    the money (the middle of the listed strikes, which are centred on it)."""
    options = OPTION_ROWS.get(product)
    if options is None:
        return []
    listed = h.outrights(options, d)
    if not listed:
        return []
    near = [c for c in listed if (c.year, c.month) == (listed[0].year, listed[0].month)]
    strikes = sorted({c.strike for c in near if c.strike is not None})
    mid, k = len(strikes) // 2, OPTION_STRIKES_EACH_SIDE
    kept = set(strikes[max(0, mid - k) : mid + k])
    return [c for c in near if c.strike in kept]


def _daily_rows(
    h: History, product: str, d: date, ah: bool, t: int, month: str | None
) -> list[Json]:
    rows = _contract_rows(h, h.outrights(product, d) + h.weeklies(product, d), d, ah, t, month)
    for spread in h.spreads(product, d):
        assert spread.far is not None
        cm = f"{month_of(spread)}/{month_of(spread.far)}"
        if month is not None and cm != month:
            continue
        got = h.spread_bar(spread, d, ah, t)
        row = _row(None, cm, got[0] if got else None)
        row.update(
            {
                "change": None,
                "changePercent": None,
                "openInterest": None,
                "settlementPrice": None,
                "volumeSpread": got[1] if got else 0,
            }
        )
        rows.append(row)
    return rows + _contract_rows(h, _option_contracts(h, product, d), d, ah, t, month)


def _contract_rows(
    h: History, contracts: list[Contract], d: date, ah: bool, t: int, month: str | None
) -> list[Json]:
    """The rows of outright ``contracts`` (futures and options) of ``month`` (None: all)."""
    rows = []
    for c in contracts:
        cm = month_of(c)
        if month is not None and cm != month:
            continue
        row = _row(c, cm, h.bar(c, d, ah, t))
        done = not ah and h.complete(c, d, ah, t)
        row["openInterest"] = None if ah else h.open_interest(c, d)
        row["settlementPrice"] = wire.px(h.settlement(c, d)) if done else None
        if c.strike is None:
            row["volumeSpread"] = None  # futures rows carry the key; option rows omit it
        rows.append(row)
    return rows


def daily(svc: Service, m: Match, q: Query) -> Json:
    product = _product(m)
    ah = _session(q)
    month = _month(q)
    d = q.day("date") or _futopt_date(svc, ah)
    h = _history(svc)
    if month is not None and month.endswith("!") and PRODUCTS[product].type != "FUTURE":
        raise bad("continuous contract months (1!, 2!, 3!) are for futures only")
    rows: list[Json] = []
    resolved = month
    if h.opened(d, ah, _now_us(svc)):
        if month is not None and month.endswith("!"):  # the real month of that day
            c = h.contract(product, d, month, None, None)
            resolved = month_of(c) if c is not None else None
        if resolved is not None or month is None:
            rows = _daily_rows(h, product, d, ah, _now_us(svc), resolved)
    out: dict[str, Any] = {
        "date": d.isoformat(),
        "product": product,
        "exchange": "TAIFEX",
        "session": "AFTERHOURS" if ah else "REGULAR",
    }
    if month is not None:
        out["contractMonth"] = resolved or month
    out["data"] = rows
    return out


# --- candles -------------------------------------------------------------------------------


def _range(svc: Service, q: Query, minute: bool) -> tuple[date, date]:
    end = q.day("to") or svc.today()
    start = q.day("from") or (
        end - timedelta(days=29) if minute else _year_before(end) + timedelta(days=1)
    )
    if start > end:
        raise bad(f"from ({start}) must not be after to ({end})")
    if end >= cal.one_year_after(start):
        raise bad(
            f"The query range must be under one year (to must be before "
            f"{cal.one_year_after(start)})"
        )
    return start, end


def _fields(q: Query, minute: bool) -> tuple[str, ...]:
    raw = q.get("fields")
    if raw is None:
        return tuple(f for f in FIELDS if minute or f not in MINUTE_ONLY)
    got = [f.strip() for f in raw.split(",") if f.strip()]
    for f in got:
        if f not in FIELDS:
            raise bad(f"Invalid fields '{f}'; allowed values: {', '.join(FIELDS)}")
    return tuple(f for f in FIELDS if f in got and (minute or f not in MINUTE_ONLY))


def _option_side(q: Query, product: str, month: str) -> tuple[float | None, bool | None]:
    strike = q.number("strikePrice")
    side = q.choice("callPut", ("CALL", "PUT"))
    option = PRODUCTS[product].type == "OPTION"
    if "/" in month:
        raise bad("candles take one contract month (YYYYMM, YYYYMMWn/Fn, 1!, 2!, 3!), not a spread")
    if option and month.endswith("!"):
        raise bad("continuous contract months (1!, 2!, 3!) are for futures only")
    if option and (strike is None or side is None):
        raise bad("strikePrice and callPut are required for options")
    if not option and (strike is not None or side is not None):
        raise bad("strikePrice and callPut are for options only")
    return strike, None if side is None else side == "CALL"


def _period_key(d: date, tf: str) -> tuple[int, int]:
    if tf == "W":
        return d.isocalendar()[:2]
    return (d.year, d.month) if tf == "M" else (d.toordinal(), 0)


def _values(bar: dict[str, Any], ref: int, fields: tuple[str, ...]) -> dict[str, Any]:
    values = {k: wire.px(bar[k]) for k in ("open", "high", "low", "close")}
    values.update(
        volume=bar["volume"],
        transaction=bar.get("transaction"),
        change=wire.px(bar["close"] - ref) if ref else None,
        average=wire.num(round(bar["average"] / 100, 2)) if "average" in bar else None,
    )
    return {f: values[f] for f in fields}


def candles(svc: Service, m: Match, q: Query) -> Json:
    product = _product(m)
    ah = _session(q)
    tf = q.pick("timeframe", FRAMES, "D")
    sort = q.pick("sort", ("asc", "desc"), "desc")
    month = _month(q)
    strike, call = _option_side(q, product, month or "1!")
    minute = tf not in ("D", "W", "M")
    start, end = _range(svc, q, minute)
    fields = _fields(q, minute)
    h, t = _history(svc), _now_us(svc)
    rows: list[dict[str, Any]] = []
    periods: dict[tuple[int, int], list[tuple[date, Contract, Bar]]] = {}
    for d64 in cal.trading_days(start, min(end, svc.today())):
        d = d64.astype(object)
        c = h.contract(product, d, month or "1!", strike, call, ah) if h.opened(d, ah, t) else None
        if c is None:
            continue
        if minute:
            day = h.day(c, d, ah)
            if day is None or h.untraded(c, d):
                continue
            for b in minute_bars(day, day.visible(t), int(tf)):
                rows.append(
                    {
                        "date": wire.iso_minute(b["t"]),
                        "contractMonth": month_of(c),
                        **_values(b, day.reference, fields),
                    }
                )
            continue
        bar = h.bar(c, d, ah, t)
        if bar is not None:
            periods.setdefault(_period_key(d, tf), []).append((d, c, bar))
    for days in periods.values():
        first, last = days[0][2], days[-1][2]
        agg = {
            "open": first.open,
            "high": max(b.high for _, _, b in days),
            "low": min(b.low for _, _, b in days),
            "close": last.close,
            "volume": sum(b.volume for _, _, b in days),
        }
        rows.append(
            {
                "date": days[0][0].isoformat(),
                "contractMonth": month_of(days[-1][1]),
                **_values(agg, first.reference, fields),
            }
        )
    if sort == "desc":
        rows.reverse()
    out: dict[str, Any] = {"product": product}
    if month is not None:
        out["contractMonth"] = month  # echoed as requested (1! stays 1!)
    out.update(
        {
            "exchange": "TAIFEX",
            "session": "AFTERHOURS" if ah else "REGULAR",
            "timeframe": tf,
            "sort": sort,
            "data": rows,
        }
    )
    return out


H = "/futopt/historical"
ROUTES = (
    Route(f"{H}/daily/{{product}}", daily),
    Route(f"{H}/candles/{{product}}", candles),
)
