"""Stock corporate-action routes (developer plan): capital changes, dividends, applicants."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import numpy as np

from . import _calendar as cal
from . import _payloads as wire
from ._query import Json, Match, Query, bad
from ._service import Route, Service

#: the query keys of each route's DTO, a whitelist (sdk-parity.md section 7: "unknown keys
#: -> 400 on capital-changes/listing-applicants"; `exchange` on dividends and applicants)
KEYS = {
    "capital-changes": ("start_date", "end_date", "sort"),
    "listing-applicants": ("start_date", "end_date", "sort", "exchange"),
}


def _action_range(svc: Service, q: Query, route: str | None = None) -> tuple[date, date, str]:
    if route is not None:
        q.only(KEYS[route])
    start, end = q.day("start_date"), q.day("end_date")
    today = svc.now().date()
    end = end or today + timedelta(days=60)
    start = start or end - timedelta(days=90)
    if start > end:
        raise bad(f"start_date ({start}) must not be after end_date ({end})")
    sort = q.pick("sort", ("asc", "desc"), "asc")
    return start, end, sort


def capital_changes(svc: Service, m: Match, q: Query) -> Json:
    start, end, sort = _action_range(svc, q, "capital-changes")
    rows = []
    for sym in svc.market.universe.instruments:
        inst = svc.market.universe[sym]
        if inst.type != "EQUITY":
            continue
        for ch, prev, ref in svc.market.daily(sym).capital_changes:
            if not (start <= ch.effective <= end):
                continue
            up, down = cal.limits(ref, inst.etf)
            raw: dict[str, Any] = {
                "lastClosePrice": wire.px(prev),
                "previousClose": wire.px(prev),
                "referencePrice": wire.px(ref),
                "limitUpPrice": wire.px(up),
                "limitDownPrice": wire.px(down),
                "openingReferencePrice": wire.px(ref),
            }
            raw.update(ch.raw)
            if ch.action_type == "capital_reduction":
                raw["exRightsReferencePrice"] = wire.px(ref)
                raw["exrightReferencePrice"] = wire.px(ref)
            row = {
                "symbol": sym,
                "name": inst.name,
                "exchange": inst.board(ch.effective)[0],
                "actionType": ch.action_type,
                "effectiveDate": ch.effective.isoformat(),
                "adjustmentFactor": ch.factor,
                "raw": raw,
            }
            if ch.halt:
                row["haltDate"] = ch.halt.isoformat()
            if ch.resume:
                row["resumeDate"] = ch.resume.isoformat()
            rows.append(row)
    rows.sort(key=lambda r: (r["effectiveDate"], r["symbol"]), reverse=sort == "desc")
    return {"start_date": str(start), "end_date": str(end), "sort": sort, "data": rows}


def dividends(svc: Service, m: Match, q: Query) -> Json:
    start, end, sort = _action_range(svc, q)
    exchange = q.choice("exchange", ("TWSE", "TPEx"))
    today = svc.now().date()
    announced_until = today + timedelta(days=60)
    rows = []
    for sym, inst in svc.market.universe.instruments.items():
        if inst.type != "EQUITY":
            continue
        for dv in svc.market.daily(sym).dividends:
            if not (start <= dv.ex_date <= end) or dv.ex_date > announced_until:
                continue
            on_exchange = inst.board(dv.ex_date)[0]
            if exchange and on_exchange != exchange:
                continue
            happened = dv.ex_date <= today
            kind = "權息" if dv.stock and dv.cash else ("權" if dv.stock else "息")
            rights = dv.previous_close - dv.cash - dv.reference
            up, down = cal.limits(dv.reference, inst.etf)
            row = {
                "date": dv.ex_date.isoformat(),
                "exchange": on_exchange,
                "symbol": sym,
                "name": inst.name,
                "previousClose": wire.px(dv.previous_close) if happened else None,
                "referencePrice": wire.px(dv.reference) if happened else None,
                "dividend": wire.px(dv.cash + max(rights, 0)) if happened else None,
                "dividendType": kind,
                "limitUpPrice": wire.px(up) if happened else None,
                "limitDownPrice": wire.px(down) if happened else None,
                "openingReferencePrice": wire.px(dv.reference) if happened else None,
                "exdividendReferencePrice": wire.px(dv.reference) if happened else None,
                "cashDividend": wire.px(dv.cash),
                "stockDividendShares": wire.num(dv.stock),
            }
            rows.append(row)
    rows.sort(key=lambda r: (r["date"], r["symbol"]), reverse=sort == "desc")
    return {"start_date": str(start), "end_date": str(end), "sort": sort, "data": rows}


def listing_applicants(svc: Service, m: Match, q: Query) -> Json:
    start, end, sort = _action_range(svc, q, "listing-applicants")
    exchange = q.choice("exchange", ("TWSE", "TPEx"))
    today = svc.now().date()
    rows = [
        row
        for year in range(max(start.year, 2010), end.year + 1)
        for row in _applicants(svc, year, today)
        if start <= date.fromisoformat(row["applicationDate"]) <= end
        and (exchange is None or row["exchange"] == exchange)
    ]
    rows.sort(key=lambda r: (r["applicationDate"], r["symbol"]), reverse=sort == "desc")
    return {"start_date": str(start), "end_date": str(end), "sort": sort, "data": rows}


def _applicants(svc: Service, year: int, today: date) -> list[Json]:
    """The year's six applicants, drawn in full whatever range is asked (same seed and
    date, same rows). Symbols repeat every ten years, like a company that applies again:
    a row is identified by (symbol, applicationDate). Later steps fill in as ``today``
    passes them (listing date, price), so rows change after their application date."""
    rng = svc.market.rng("applicants", year)
    rows = []
    for k in range(6):
        applied = date(year, 1, 1) + timedelta(days=int(rng.integers(0, 365)))
        twse = k % 2 == 0
        steps = np.cumsum(rng.integers(20, 60, 4)).tolist()
        capital = int(rng.integers(300_000, 5_000_000))
        price = int(rng.integers(30, 400))
        dates = [applied + timedelta(days=s) for s in steps]
        known = [d.isoformat() if d <= today else None for d in dates]
        rows.append(
            {
                "symbol": f"{6900 + (year % 10) * 10 + k}",
                "name": f"{'台灣' if twse else '櫃買'}新創{year % 100:02d}{k}",
                "exchange": "TWSE" if twse else "TPEx",
                "applicationDate": applied.isoformat(),
                "chairman": ["王大明", "林小華", "陳志強", "張美玲"][k % 4],
                "capitalAtApplication": capital,
                "reviewCommitteeDate": known[0],
                "boardApprovalDate": known[1],
                ("contractFilingDate" if twse else "contractApprovalDate"): known[2],
                "listedDate": known[3],
                "underwriter": ["元大證券", "凱基證券", "富邦證券"][k % 3],
                "underwritingPrice": price if known[3] else None,
                "remarks": None,
            }
        )
    return rows


S = "/stock/corporate-actions"
ROUTES = (
    Route(f"{S}/capital-changes", capital_changes),
    # the reference spells it "diviends"; the SDK's "dividends" is answered too (an alias)
    Route(f"{S}/diviends", dividends),
    Route(f"{S}/dividends", dividends),
    Route(f"{S}/listing-applicants", listing_applicants),
)
