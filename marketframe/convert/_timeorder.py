"""Oldest first: the row order of every frame of a time-ranged endpoint.

The service answers some endpoints newest first (daily candles, trades) and others oldest
first. Loaders put the rows of one response in ascending time order unless the request chose
an order itself (``sort="desc"`` is honoured, and ``sort="asc"`` is already so), so loaders,
store reads and ``download`` agree. The sort is Arrow's stable ``sort_indices`` on the
endpoint's key columns after ``symbol``/``market``/``timeframe`` (e.g. ``date``, then
``serial`` for trades), so the items of one date (an ETF's constituents, TDCC's brackets) keep
the service's order; a response already in order is returned as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from marketframe.endpoints import Endpoint

#: key columns that do not order rows in time
_NOT_TIME = frozenset({"symbol", "market", "timeframe"})


def item_keys(ep: Endpoint) -> frozenset[str]:
    """Key columns naming an item of a date's list (the ``explode`` of the schema: an ETF's
    constituent, a TDCC bracket): they identify a row but keep the service's order."""
    explode = ep.schema.explode
    if explode is None:
        return frozenset(ep.distinct)
    return frozenset(ep.distinct) | frozenset(
        c.name
        for c in ep.schema.columns
        if c.name in ep.keys and not c.envelope and c.path[0] == explode
    )


def order_keys(ep: Endpoint) -> list[str]:
    """The key columns a stored partition is sorted by (ties keep their arrival order)."""
    items = item_keys(ep)
    return [k for k in ep.keys if k not in items]


def time_keys(ep: Endpoint) -> list[str]:
    """The key columns that order ``ep``'s rows in time ([] when its rows are not a series:
    only endpoints with a date range or a ``sort`` parameter are)."""
    if not (ep.date_range or "sort" in ep.param_map):
        return []
    keys = [k for k in order_keys(ep) if k not in _NOT_TIME]
    if ep.multi_param != "symbol" and "symbol" in ep.keys:
        keys.append("symbol")  # corporate actions: every symbol in one answer, by date then symbol
    return keys


def oldest_first(ep: Endpoint, params: Mapping[str, Any], table: pa.Table) -> pa.Table:
    """``table`` (one response of ``ep``) in ascending time order, unless ``params`` asked
    for an order (``sort``)."""
    if params.get("sort") is not None or table.num_rows < 2:
        return table
    keys = [k for k in time_keys(ep) if k in table.column_names]
    if not keys:
        return table
    order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys])
    if _is_identity(order):
        return table
    return table.take(order)


def by_time(table: pa.Table, column: str = "time") -> pa.Table:
    """``table`` stably sorted on ``column`` (rows recorded from a stream), if it has it."""
    if column not in table.column_names or table.num_rows < 2:
        return table
    order = pc.sort_indices(table, sort_keys=[(column, "ascending")])
    return table if _is_identity(order) else table.take(order)


def _is_identity(order: pa.Array[Any]) -> bool:
    return bool(np.array_equal(order.to_numpy(), np.arange(len(order))))
