"""Stock ownership routes: ``/stock/ownership/{etf-holdings|institutional-trades|
director-holdings|tdcc-distribution}/{symbol}`` with ``from``, ``to`` and ``sort``.

The data is :mod:`._ownership`'s. The rules chosen where the service's behaviour is unknown
are listed in docs/sandbox.md ("Where the sandbox had to guess", Ownership): the range rules
of the historical routes, newest first by default, unknown query keys refused, rows published
at 15:00 on their date (director holdings: the 15th of the next month), a known symbol without
such data answered with empty ``data``, etf-holdings on the advanced plan only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time
from typing import Any

import numpy as np

from . import _ownership as own
from ._instrument import Instrument
from ._query import Json, Match, Query
from ._rest_historical import _range
from ._service import Route, Service

OWN = "/stock/ownership"
#: the service's whole contract for the four routes (sdk-parity 1.0)
KEYS = ("from", "to", "sort")
#: when a day's rows are published (Asia/Taipei), after the close
PUBLISHED_AT = time(15, 0)
MONTH_RE = re.compile(r"^\d{4}-\d{2}$")


def _published_day(now: datetime, d: date) -> bool:
    return d < now.date() or (d == now.date() and now.time() >= PUBLISHED_AT)


def _published_month(now: datetime, first: date) -> bool:
    """A month's director holdings are published on the 15th of the next month."""
    nxt = date(first.year + first.month // 12, first.month % 12 + 1, 15)
    return now.date() >= nxt


def _query(q: Query, months: bool) -> tuple[Query, str]:
    """Unknown keys refused; director holdings also take ``YYYY-MM`` (its first day)."""
    q.only(KEYS)
    items = dict(q.items)
    if months:
        items.update(
            {k: v + "-01" for k, v in items.items() if k in ("from", "to") and MONTH_RE.match(v)}
        )
    return Query(items), q.pick("sort", ("asc", "desc"), "desc")


def _serve(
    svc: Service,
    inst: Instrument,
    q: Query,
    *,
    series: Callable[[Instrument], Any] | None,
    rows: Callable[[Any, slice], list[Json]],
    monthly: bool = False,
) -> Json:
    """The body of one ownership route: the visible rows of ``series`` within the range."""
    q, sort = _query(q, monthly)
    start, end = _range(svc, inst, q, required=False)
    body: dict[str, Any] = {
        "type": inst.type,
        # the board it is on today (an instrument may have moved: ``Instrument.moves``)
        "exchange": inst.board(svc.today())[0],
        "market": inst.board(svc.today())[1],
        "symbol": inst.symbol,
        "data": [],
    }
    if series is None:  # a known symbol that has no such data
        return body
    s = series(inst)
    now = svc.now()
    seen = _published_month if monthly else _published_day
    if monthly:  # a month is in the range when its first day is
        first = np.datetime64(start, "M") + (0 if start.day == 1 else 1)
        last = np.datetime64(end, "M")
    else:
        first, last = np.datetime64(start, "D"), np.datetime64(end, "D")
    lo = int(np.searchsorted(s.dates, first, side="left"))
    hi = int(np.searchsorted(s.dates, last, side="right"))
    while hi > lo and not seen(now, s.dates[hi - 1].astype("datetime64[D]").astype(object)):
        hi -= 1
    data = rows(s, slice(lo, hi))
    body["data"] = data[::-1] if sort == "desc" else data
    return body


def _equity(
    inst: Instrument, make: Callable[[Instrument], Any], etf: bool | None = None
) -> Callable[[Instrument], Any] | None:
    """``make`` when ``inst`` has such data (equities; ETFs or not when ``etf`` says)."""
    ok = inst.type == "EQUITY" and (etf is None or inst.etf == etf)
    return make if ok else None


def etf_holdings(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    return _serve(
        svc, inst, q, series=_equity(inst, svc.ownership.etf, etf=True), rows=own.rows_etf
    )


def institutional_trades(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    return _serve(
        svc, inst, q, series=_equity(inst, svc.ownership.institutional), rows=own.rows_institutional
    )


def director_holdings(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    return _serve(
        svc,
        inst,
        q,
        series=_equity(inst, svc.ownership.directors, etf=False),
        rows=own.rows_directors,
        monthly=True,
    )


def tdcc_distribution(svc: Service, m: Match, q: Query) -> Json:
    inst = svc.instrument(m["symbol"])
    return _serve(svc, inst, q, series=_equity(inst, svc.ownership.tdcc), rows=own.rows_tdcc)


ROUTES = (
    Route(f"{OWN}/etf-holdings/{{symbol}}", etf_holdings),
    Route(f"{OWN}/institutional-trades/{{symbol}}", institutional_trades),
    Route(f"{OWN}/director-holdings/{{symbol}}", director_holdings),
    Route(f"{OWN}/tdcc-distribution/{{symbol}}", tdcc_distribution),
)
