"""``Store.read`` and ``Store.coverage`` as Arrow tables: a dataset's rows from the files the
log records (each checked), filtered and ordered as the loaders return them; and what
the log says the store holds. The face converts them to the asked backend."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from marketframe import adjust as _adjust
from marketframe.convert import oldest_first
from marketframe.endpoints import in_order, to_date
from marketframe.store import _held, _io
from marketframe.store._dataset import NO_SYMBOL, check_symbols, resolve
from marketframe.store._log import Log, _history
from marketframe.store._parts import Parts


def span(where: str, start: Any, end: Any) -> tuple[dt.date | None, dt.date | None]:
    """The days of a read's ``start`` and ``end`` (either may be None), refused when
    ``start`` is after ``end`` (an empty answer would look like missing data)."""
    lo = to_date(where, "start", start) if start is not None else None
    hi = to_date(where, "end", end) if end is not None else None
    in_order(where, lo, hi)
    return lo, hi


def read(
    parts: Parts,
    endpoint: str,
    symbols: str | Sequence[str] | None,
    start: Any,
    end: Any,
    timeframe: str | None,
    adjust: str | None,
    params: dict[str, Any],
    as_of: Any = None,
) -> pa.Table:
    """The rows :meth:`Store.read` returns, as one Arrow table (its checks and warnings);
    ``as_of``: as an earlier generation held them (a snapshot, a time)."""
    spec = resolve(endpoint, timeframe, params)
    mode = _adjust.check_read(spec.ep.name, adjust, spec.params, spec.ds.timeframe)
    # symbol-less datasets (corporate actions) are filtered on their symbol column
    syms = None if symbols is None or not spec.has_symbol else check_symbols(spec, symbols)
    lo, hi = span(endpoint, start, end)
    years = None
    if spec.has_symbol and (lo is not None or hi is not None):
        years = ((lo or dt.date(1900, 1, 1)).year, (hi or dt.date(2999, 12, 31)).year)
    storage = parts.storage
    log = parts.view(as_of, "Store.read")
    log.check()
    _held.check(log, spec, syms, lo, hi)  # never synced: NotSynced, not 0 rows
    logical = spec.ep.schema.arrow(minute=spec.minute)
    files = _io.recorded(log.files(spec.ds), syms, years, spec.ds)
    if log is parts.log:
        read = [storage.read_file(rel, rec, parts.fix) for rel, rec in files]
    else:  # an earlier generation: files where they are, or where replaced ones are kept
        read = [
            _history.read_file(storage, parts.log, spec.ds, rel, dict(rec), parts.fix)
            for rel, rec in files
        ]
    tables = [_io.from_physical(t, logical) for t in read if t.num_rows]
    if not tables:
        table = logical.empty_table()
    else:
        table = tables[0] if len(tables) == 1 else _io.concat_partitions(tables)
    if table.num_rows and (lo is not None or hi is not None):
        table = table.filter(_io.within(table.column(_io.date_column(spec.ep)), lo, hi))
    if not spec.has_symbol and symbols is not None and table.num_rows:
        wanted = [symbols] if isinstance(symbols, str) else list(symbols)
        table = table.filter(pc.is_in(table.column("symbol"), pa.array(wanted)))
    if not spec.has_symbol:  # every symbol in one dataset: by date, as the loaders
        table = oldest_first(spec.ep, {}, table)
    meta = {
        k: v
        for k, v in (table.schema.metadata or {}).items()
        if not k.startswith(b"marketframe.store.")
    }
    if mode is not None:  # with as_of: the actions that had happened by then
        known = None if as_of is None else _history.day_of(parts.storage, as_of, "Store.read")
        table = parts.client.adjust_prices(table, mode, as_of=known)
    return table.replace_schema_metadata(meta)


def coverage(log: Log) -> pa.Table:
    """:meth:`Store.coverage`'s rows: one per (dataset, params, timeframe, symbol, interval)."""
    log.reload()
    log.check()
    rows: dict[str, list[Any]] = {
        k: [] for k in ("dataset", "params", "timeframe", "symbol", "status", "start", "end")
    }
    for ds, d in log.datasets():
        for sym, e in sorted(d.get("symbols", {}).items()):
            for status in ("final", "open", "empty"):
                for a, b in e.get(status, []):
                    for k, v in zip(
                        rows,
                        (
                            ds.endpoint,
                            ds.params,
                            ds.timeframe,
                            None if sym == NO_SYMBOL else sym,
                            status,
                            dt.date.fromisoformat(a),
                            dt.date.fromisoformat(b),
                        ),
                        strict=True,
                    ):
                        rows[k].append(v)
    return pa.table(
        {
            k: pa.array(v, pa.date32() if k in ("start", "end") else pa.string())
            for k, v in rows.items()
        }
    )
