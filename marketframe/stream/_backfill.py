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

ENDPOINT = "stock.intraday.trades"


def fetch_gap(client: Any, symbol: str, odd_lot: bool, trial: bool, after: int | None,
              before: int | None, page: int = 500) -> list[dict[str, Any]]:
    """Regular trades (or trial matches) of ``symbol`` with ``after < serial < before``
    (``None``: no bound), sorted by serial. ``client`` is a :class:`marketframe.Client`."""
    rows: list[dict[str, Any]] = []
    lo = -1 if after is None else after
    offset = 0
    while True:
        params: dict[str, Any] = {"symbol": symbol, "sort": "asc", "offset": offset,
                                  "limit": page}
        if trial:
            params["isTrial"] = True
        if odd_lot:
            params["type"] = "oddlot"
        body = client.fetch(ENDPOINT, refresh=True, **params).responses[0].body
        doc = orjson.loads(body)
        data = doc.get("data") or []
        head = {k: doc[k] for k in ("symbol", "type", "exchange", "market") if k in doc}
        for r in data:
            serial = r.get("serial")
            if serial is None or serial <= lo:
                continue
            if before is not None and serial >= before:
                continue
            row = {**head, **r, "backfilled": True}
            if trial:
                row["isTrial"] = True
            rows.append(row)
        last = data[-1].get("serial") if data else None
        if len(data) < page or (before is not None and last is not None and last >= before):
            break
        offset += len(data)
    rows.sort(key=lambda r: r["serial"])
    return rows
