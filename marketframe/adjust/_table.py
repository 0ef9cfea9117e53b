"""The factor table: one row per corporate action as the adjustment applies it (its ratios,
its cumulative factor, the anomalies that keep it out), from the events of :mod:`._core`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from marketframe._time import taipei_today
from marketframe.adjust._checks import check_as_of
from marketframe.adjust._core import (
    MISSING_CLOSE,
    MODES,
    OUT_OF_RANGE,
    actions_of,
    actions_served,
    factors,
    happened_by,
)
from marketframe.convert import check_backend, to_frame
from marketframe.endpoints import EARLIEST, to_date
from marketframe.exceptions import InvalidParams

#: the columns of :func:`factor_table`, in order, with their Arrow types
_TYPES: dict[str, pa.DataType] = {
    "symbol": pa.string(),
    "date": pa.date32(),
    "kind": pa.string(),
    **dict.fromkeys(("ratio", "cash", "stock", "factor", "cumulative_factor"), pa.float64()),
    **dict.fromkeys((MISSING_CLOSE, OUT_OF_RANGE, "non_session"), pa.bool_()),
}
FACTOR_TABLE = pa.schema(_TYPES)
#: the service's first day of corporate actions and candles
FIRST_DAY = EARLIEST["stock"]


def factor_table(
    symbols: str | Sequence[str] | None,
    as_of: Any = None,
    *,
    mode: str = "all",
    start: Any = None,
    client: Any = None,
    backend: str = "pandas",
) -> Any:
    """One row per corporate action of ``symbols`` (a symbol, a list; None: every symbol)
    from ``start`` (default 2010-01-01, the service's first day) to ``as_of`` (default the
    service's today), the actions of ``mode`` ("all" or "splits") known on ``as_of``, as the
    adjustment applies them (docs/adjusted.md, "The factor table"):

    ``symbol``, ``date`` (the first day at the new prices), ``kind`` (``capital`` or
    ``dividend``), ``ratio`` (the share-count ratio volume is divided by: 0.25 for a 1:4
    split, ``1 / (1 + stock / 1000)`` for a stock dividend, 1 for cash), ``cash`` (TWD per
    share), ``stock`` (free shares per 1000), ``factor`` (the price ratio ``r``; NaN when it
    cannot be computed), ``cumulative_factor`` (``F`` of the bars before ``date``: the product
    of the factors of this action and every later one up to ``as_of``; a bar's adjusted price
    is its raw price times the ``cumulative_factor`` of the first action after it), and the
    anomaly flags ``missing_previous_close`` (no price to compute the ratio: the adjustment
    leaves it out with an ``ActionNotApplied`` warning), ``factor_out_of_range`` (a dividend
    ratio outside 0..1: the adjustment refuses it) and ``non_session`` (the date is not a
    stock session of :mod:`marketframe.calendar`: information, the action is applied). The
    actions the adjustment leaves out count 1 in the cumulative factor. Rows are by symbol,
    then date.

    ``client``: the :class:`marketframe.Client` to fetch with. ``backend``: ``pandas``
    (default), ``polars`` or ``arrow``. Bad arguments raise :class:`InvalidParams` before
    any request.
    """
    where = "adjust.factor_table"
    check_backend(where, backend)
    wanted = _symbols(where, symbols)
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidParams(where, "mode", f"has value {mode!r}", "'splits' or 'all'")
    known = check_as_of(where, as_of, mode)
    lo = FIRST_DAY if start is None else to_date(where, "start", start)
    if known is not None and lo > known:
        raise InvalidParams(
            where, "start", f"({lo}) is after as_of ({known})", "a start on or before as_of"
        )
    if client is None or not hasattr(client, "send_all"):
        raise InvalidParams(
            where,
            "client",
            f"has value {client!r}",
            "a marketframe.Client (Client(key), or Client.sandbox() without a key)",
        )
    today = known or taipei_today()
    capital, dividends, served = actions_served(client.prepare, client.send_all, lo, today, mode)
    end = happened_by(today, served)
    return to_frame(factor_rows(capital, dividends, mode, end, wanted, lo), backend)


def factor_rows(
    capital: pa.Table,
    dividends: pa.Table | None,
    mode: str,
    today: dt.date,
    symbols: Iterable[str] | None = None,
    start: dt.date = FIRST_DAY,
) -> pa.Table:
    """:func:`factor_table`'s rows from the two endpoints' tables: the actions of
    :func:`actions_of` from ``start`` to ``today``, with their cumulative factors and flags."""
    got = [a for a in actions_of(capital, dividends, mode, today, symbols) if a.day >= start]
    got.sort(key=lambda a: (a.symbol, a.day, a.kind))
    cumulative = np.ones(len(got))
    by_symbol: dict[str, list[int]] = {}
    for i, a in enumerate(got):
        by_symbol.setdefault(a.symbol, []).append(i)
    for rows in by_symbol.values():
        applied = [(got[i].day, got[i].price) for i in rows if got[i].problem is None]
        before = np.array([got[i].day - dt.timedelta(days=1) for i in rows], "datetime64[D]")
        cumulative[rows] = factors(before, applied)
    columns: dict[str, list[Any]] = {
        "symbol": [a.symbol for a in got],
        "date": [a.day for a in got],
        "kind": [a.kind for a in got],
        "ratio": [a.shares for a in got],
        "cash": [a.cash for a in got],
        "stock": [a.stock for a in got],
        "factor": [a.price for a in got],
        "cumulative_factor": cumulative.tolist(),
        "missing_previous_close": [a.problem == MISSING_CLOSE for a in got],
        "factor_out_of_range": [a.problem == OUT_OF_RANGE for a in got],
        "non_session": _off_session([a.day for a in got]).tolist(),
    }
    return pa.table(columns, schema=FACTOR_TABLE)


def _off_session(days: list[dt.date]) -> np.ndarray:
    """Whether each of ``days`` is not a stock session (the calendar asked once)."""
    from marketframe import calendar  # loaded on first use (import marketframe stays light)

    if not days:
        return np.zeros(0, bool)
    held = calendar.sessions_in_range(min(days), max(days)).values.astype("datetime64[D]")
    return ~np.isin(np.array(days, "datetime64[D]"), held)


def _symbols(where: str, symbols: Any) -> list[str] | None:
    """``symbols`` as a list (None: every symbol); InvalidParams naming the forms."""
    if symbols is None:
        return None
    items = [symbols] if isinstance(symbols, str) else symbols
    if (
        not isinstance(items, list | tuple)
        or not items
        or not all(isinstance(s, str) and s for s in items)
    ):
        raise InvalidParams(
            where,
            "symbols",
            f"has value {symbols!r}",
            "a symbol ('2330'), a non-empty list of symbols, or None (every symbol)",
        )
    return list(items)
