"""Fill a gap in a trades stream from the REST intraday trades endpoint.

Serials of one symbol increase but are not consecutive, so a gap cannot be seen from the
serials alone: after every reconnect the client asks for the trades strictly between the last
serial seen before the drop and the first seen after it (or every later trade when none came
after it yet). Regular trades and trial matches are two lists on the endpoint (``isTrial``),
and two serial sequences (a closing trial match may carry a higher serial than the closing
trade), so each kind has its own gap; both are read with ``sort=asc`` and ``offset``/``limit``
paging. Rows come back in the
streamed ``trades`` shape (the envelope's ``symbol``/``type``/... copied into each row) with
``backfilled: true``; flags the REST rows do not carry (``isOpen``, ...) are false.

A gap open up to now (no trade closed it) may be filled after the endpoint has moved on to a
later trading day: its rows of that day are the gap's too (the drop spanned the day change),
so the gap is split like a gap closed by the new day's first trade (:func:`split_day`): the
rest of its own day (known empty after the fixed-price trade, else no longer fetchable) and
the served day's gap, which the rows fill.
"""

from __future__ import annotations

from typing import Any

import orjson

from marketframe.exceptions import GapUnavailable

from ._ledger import FIXED_PRICE_SERIAL, REGULAR, Gap, position

ENDPOINT = "stock.intraday.trades"
FUTOPT_ENDPOINT = "futopt.intraday.trades"


def fetch_gap(
    client: Any, gap: Gap, page: int = 500, market: str = "stock"
) -> tuple[list[dict[str, Any]], str | None]:
    """The regular trades (or trial matches) of ``gap``, sorted by position, and the trading
    day the endpoint served. ``client`` is a :class:`marketframe.Client`. The intraday
    endpoint serves one trading day (the current one): a gap on another day cannot be filled
    and raises :class:`GapUnavailable`, unless it is known to be empty (it follows the day's
    fixed-price trade, the day's last) or it is open up to now and the endpoint serves a
    later day (the rows are that day's: see :func:`split_day`).

    ``market="futopt"``: from ``/futopt/intraday/trades`` (newest first, ``session=afterhours``
    for an after-hours gap); it serves no trial matches, so a trial gap raises
    :class:`GapUnavailable`."""
    futopt = market == "futopt"
    if futopt and gap.trial:
        raise GapUnavailable(
            "the futures/options trades endpoint serves no trial matches: "
            "trial frames missed during a reconnect cannot be fetched"
        )
    rows: list[dict[str, Any]] = []
    served: str | None = None
    offset = 0
    while True:
        params: dict[str, Any] = {"symbol": gap.symbol, "offset": offset, "limit": page}
        if futopt and gap.after_hours:
            params["session"] = "afterhours"
        if not futopt:
            params["sort"] = "asc"
        if gap.trial:
            params["isTrial"] = True
        if gap.odd_lot:
            params["type"] = "oddlot"
        body = (
            client.fetch(FUTOPT_ENDPOINT if futopt else ENDPOINT, refresh=True, **params)
            .responses[0]
            .body
        )
        doc = orjson.loads(body)
        data = doc.get("data") or []
        served = served or doc.get("date")
        head = {k: doc[k] for k in ("symbol", "type", "exchange", "market") if k in doc}
        for r in data:
            row = {**head, **r, "backfilled": True}
            pos = position(row)
            if pos is None or not gap.contains(pos):
                continue
            if gap.trial:
                row["isTrial"] = True
            rows.append(row)
        last = position({**head, **data[-1]}) if data else None
        if len(data) < page or last is None:
            break
        if futopt and gap.lo is not None and last <= gap.lo:
            break  # newest first: the next pages are older than the gap
        if not futopt and gap.hi is not None and last >= gap.hi:
            break
        offset += len(data)
    if gap.date is not None and served is not None and served != gap.date:
        later = gap.hi is None and gap.lo is not None and served > gap.date
        if not later and gap.after != FIXED_PRICE_SERIAL:  # else nothing of that day came after it
            raise unavailable(gap, served)
    rows.sort(key=lambda r: position(r) or (0, 0, 0))
    return rows, served


def unavailable(gap: Gap, served: str) -> GapUnavailable:
    return GapUnavailable(
        f"the intraday endpoint now serves {served}; trades of "
        f"{gap.date} in this gap can no longer be fetched"
    )


def split_day(gap: Gap, served: str | None) -> Gap | None:
    """When ``gap`` is open up to now and was filled while the endpoint served a later day:
    ``gap`` becomes the rest of its own day (``filled=0`` after the fixed-price trade, else
    an ``error``) and the served day's gap (from that day's start) is returned, for the
    rows. ``None`` when the gap needs no split."""
    if gap.hi is not None or gap.lo is None or served is None or gap.date is None:
        return None
    if served <= gap.date:
        return None
    later = Gap(
        gap.symbol,
        gap.odd_lot,
        gap.trial,
        None,
        None,
        date=served,
        after_hours=gap.after_hours,
    )
    gap.hi = (gap.lo[0] + 1, REGULAR, -1)  # before any trade of the next day
    if gap.after == FIXED_PRICE_SERIAL:
        gap.filled = 0
    else:
        exc = unavailable(gap, served)
        gap.error = f"{type(exc).__name__}: {exc}"
    return later
