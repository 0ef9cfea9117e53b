"""``download(..., universe=...)``: the symbols of a point-in-time universe (docs/universe.md).

``universe`` is either a frame of :meth:`Store.universe` (any frame or Arrow table with a
``symbol`` column: its symbols, in its order) or a day (``'YYYY-MM-DD'``, a date): the
equities (ETFs included) the store's universe lists that day, which needs ``store=``. With a
day, ``symbols`` may name boards (``"TSE"``, ``["TSE", "OTC"]``) to keep those boards' only;
otherwise ``symbols`` and ``universe`` are not given together.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from marketframe.download._keywords import symbol_list
from marketframe.endpoints import MARKETS, board_name, to_date
from marketframe.exceptions import InvalidParams

WHERE = "download"


def _frame_symbols(universe: Any) -> list[str] | None:
    """The ``symbol`` column of a pandas or polars frame or an Arrow table (None: not one)."""
    names = getattr(universe, "column_names", None) or getattr(universe, "columns", None)
    if names is None or isinstance(universe, str) or "symbol" not in list(names):
        return None
    column = universe["symbol"]
    values = column.to_pylist() if hasattr(column, "to_pylist") else list(column)
    return list(dict.fromkeys(str(s) for s in values if s is not None))


def members(universe: Any, symbols: Any, store: Any) -> Any:
    """``symbols`` to download given ``universe`` (``symbols`` itself when it is None);
    :class:`InvalidParams` before any request."""
    if universe is None:
        return symbols
    listed = _frame_symbols(universe)
    if listed is not None:
        if symbols is not None:
            raise InvalidParams(
                WHERE,
                "symbols",
                "given with a universe frame, which names the symbols",
                "symbols=None with universe=<frame>",
            )
        if not listed:
            raise InvalidParams(WHERE, "universe", "is a frame without rows", "a non-empty frame")
        return listed
    if not isinstance(universe, str | dt.date):
        raise InvalidParams(
            WHERE,
            "universe",
            f"has value {universe!r} of type {type(universe).__name__}",
            "a frame of Store.universe(...) or a day ('YYYY-MM-DD', a date) with store=",
        )
    day = to_date(WHERE, "universe", universe)
    boards = symbol_list(symbols)  # "TSE OTC" as download reads symbols
    boards = [boards] if isinstance(boards, str) else list(boards or [])
    boards = [board_name(b) or b for b in boards]  # any case: "tse" is TSE
    if any(b not in MARKETS for b in boards):
        raise InvalidParams(
            WHERE,
            "symbols",
            f"has value {symbols!r} with universe={str(day)!r}",
            "None, or board names (" + ", ".join(MARKETS) + ") to keep those boards",
        )
    if store is None:
        raise InvalidParams(
            WHERE,
            "universe",
            f"is a day ({day}) without store=: the list of a past day is the store's",
            "store=<a Store or directory> (see Store.universe), or a frame of symbols",
        )
    return _of_day(store, day, boards)


def _of_day(store: Any, day: dt.date, boards: list[str]) -> list[str]:
    from marketframe.store import Store  # only when asked: import marketframe stays light

    if not isinstance(store, Store | str | os.PathLike):
        raise InvalidParams(
            WHERE, "store", f"has value {store!r}", "a marketframe.Store or a directory path"
        )
    st = store if isinstance(store, Store) else Store(store)
    try:
        table = st.universe(day, type="EQUITY", backend="arrow")
    finally:
        if st is not store:
            st.close()
    if boards:
        table = table.filter(pc.is_in(table.column("market"), pa.array(boards)))
    listed = [str(s) for s in table.column("symbol").to_pylist()]
    if not listed:
        where = f" on {', '.join(boards)}" if boards else ""
        raise InvalidParams(
            WHERE,
            "universe",
            f"lists no equity{where} on {day}",
            "a day the store's universe covers (Store.universe)",
        )
    return listed
