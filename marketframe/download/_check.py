"""``download``'s arguments checked before any request: :func:`check` and what it returns.

The checks are the store's own (:mod:`marketframe.endpoints`), each error naming ``download``;
the command checks its arguments here before it starts a sandbox or sends a request.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Sequence
from typing import Any

from marketframe import adjust as adjusting
from marketframe._time import taipei_today
from marketframe.convert import check_backend
from marketframe.endpoints import (
    board_name,
    check_dataset,
    check_range,
    check_symbols,
    get,
    latest_only,
    to_date,
)
from marketframe.exceptions import InvalidParams

#: the endpoint ``download`` reads
ENDPOINT = "stock.historical.candles"
#: the endpoint listing a board's symbols, and the ticker type a board name expands to
BOARD_ENDPOINT = "stock.intraday.tickers"
BOARD_TYPE = "EQUITY"


@dataclasses.dataclass(frozen=True)
class Arguments:
    """``download``'s arguments checked and normalised (what :func:`check` returns)."""

    symbols: list[str]  # symbols and board names (in the service's spelling), as given
    timeframe: str
    #: the range (inclusive); None for minute candles: the latest 30 days, asked for without one
    span: tuple[dt.date, dt.date] | None
    fields: str | None  # the price fields asked for, encoded; None: the default ones
    adjust: str | None  # ``"splits"``, ``"all"`` or None (prices as traded)

    @property
    def minute(self) -> bool:
        return self.span is None

    @property
    def start(self) -> dt.date | None:
        return self.span[0] if self.span else None

    @property
    def end(self) -> dt.date | None:
        return self.span[1] if self.span else None


def check(
    symbols: str | Sequence[str],
    start: object,
    end: object,
    timeframe: object,
    adjust: object,
    fields: object,
    backend: object,
    store: object,
) -> Arguments:
    """Every argument checked and normalised (InvalidParams before any request), by the
    checks the store uses too (:mod:`marketframe.endpoints`), each naming ``download``."""
    check_backend("download", backend)
    mode = adjusting.check("download", adjust, {"timeframe": timeframe})
    if store is not None and not _is_store(store) and not isinstance(store, str | os.PathLike):
        raise InvalidParams(
            "download",
            "store",
            f"has value {store!r}",
            "a marketframe.Store, a directory path, or None",
        )
    ep = get(ENDPOINT)
    params = {"fields": fields} if fields is not None else {}
    tf, canon = check_dataset(ep, str(timeframe), params, where="download")
    # a board in any case ("tse") is the board, never a symbol the service would not know
    items = list(
        dict.fromkeys(board_name(s) or s for s in check_symbols(ep, symbols, "download") or [])
    )
    today = taipei_today()
    if latest_only(ep, tf):
        span = check_range(ep, tf, start, end, today, where="download")
    else:
        hi = to_date("download", "end", end) if end is not None else today
        lo = start if start is not None else hi - dt.timedelta(days=364)
        span = check_range(ep, tf, lo, hi, today, where="download")
    return Arguments(
        symbols=items,
        timeframe=str(tf),
        span=span,
        fields=canon.get("fields"),
        adjust=mode,
    )


def _is_store(obj: Any) -> bool:
    from marketframe.store import Store  # only when given one: import marketframe stays light

    return isinstance(obj, Store)
