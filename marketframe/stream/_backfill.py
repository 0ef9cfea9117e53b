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
"""

from __future__ import annotations

from typing import Any

import orjson

from marketframe.exceptions import StreamError

from ._ledger import FIXED_PRICE_SERIAL, Gap, position

ENDPOINT = "stock.intraday.trades"
FUTOPT_ENDPOINT = "futopt.intraday.trades"


def fetch_gap(
    client: Any, gap: Gap, page: int = 500, market: str = "stock"
) -> list[dict[str, Any]]:
    """The regular trades (or trial matches) of ``gap``, sorted by position. ``client`` is a
    :class:`marketframe.Client`. The intraday endpoint serves one trading day (the current
    one): a gap on another day cannot be filled and raises :class:`GapUnavailable`, unless
    it is known to be empty (it follows the day's fixed-price trade, the day's last).

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
        if gap.after != FIXED_PRICE_SERIAL:  # else nothing of that day came after it
            raise GapUnavailable(
                f"the intraday endpoint now serves {served}; trades of "
                f"{gap.date} in this gap can no longer be fetched"
            )
    rows.sort(key=lambda r: position(r) or (0, 0, 0))
    return rows


class GapUnavailable(StreamError):
    """The gap's trading day is no longer served by the intraday endpoint."""
