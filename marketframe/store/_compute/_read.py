"""Derived datasets, the read side: :meth:`Store.read_derived`'s rows, from the log's
record of the parts (a bucket's parts hold its other members' rows: filtered).

Imports run one way: the driver (:mod:`marketframe.store._compute`) -> this module ->
:mod:`._args`, :mod:`._derive`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from marketframe.store import _io
from marketframe.store._compute._args import computed, label, source_of, specs_of
from marketframe.store._compute._derive import bucket_of, derived_id
from marketframe.store._dataset import DatasetId
from marketframe.store._log import _history
from marketframe.store._parts import Parts


def held_symbols(log: Any, ds: DatasetId, files: Mapping[str, Any]) -> set[str]:
    """The symbols a derived dataset holds: its buckets' members, and the symbols of a
    store computed before buckets (a directory each)."""
    out: set[str] = set()
    buckets: set[str] = set()
    for rel in files:
        key = _io.where(rel)[0]
        if key is not None:
            (out if f"/{_io.SYM_KEY}=" in rel else buckets).add(key)
    for b in buckets:
        out.update(log.noted(ds, b, "members") or ())
    return out


def read(
    parts: Parts,
    dataset: str,
    spec: Any,
    symbols: Any,
    timeframe: str | None,
    adjust: str | None,
    params: dict[str, Any],
    as_of: Any = None,
    start: Any = None,
    end: Any = None,
) -> pa.Table:
    from marketframe import adjust as _adjust
    from marketframe.exceptions import InvalidParams
    from marketframe.store._read import span

    (sp,) = specs_of(spec)
    src = source_of(dataset, timeframe, params)
    mode = _adjust.check_read(src.ep.name, adjust, src.params, src.ds.timeframe)
    ds = derived_id(src.ds, sp, mode)
    man = parts.view(as_of, "Store.read_derived")
    man.check()
    recorded = man.files(ds)
    entries = man.datasets() if not recorded else []  # a copy of every entry: only here
    if not recorded and all(d.key != ds.key for d, _ in entries):  # never computed
        done = computed(entries, src.ds)
        raise InvalidParams(
            "Store.read_derived",
            "spec",
            f"{label(sp, mode)} over {dataset} (timeframe {src.ds.timeframe}) was never "
            "computed in this store",
            f"the specs computed here: {', '.join(done)}"
            if done
            else f"store.compute({dataset!r}, spec, timeframe=...) first",
        )
    files = {r: v for r, v in recorded.items() if r.endswith(".parquet")}
    want = None if symbols is None else ([symbols] if isinstance(symbols, str) else list(symbols))
    if want is not None:
        have = held_symbols(man, ds, files)
        missing = [s for s in want if s not in have]
        if missing:
            raise InvalidParams(
                "Store.read_derived",
                "symbols",
                f"{', '.join(missing)} not computed for {ds.endpoint} ({ds.params})",
                f"store.compute({dataset!r}, spec, symbols) first",
            )
    lo, hi = span("Store.read_derived", start, end)
    years = None
    if lo is not None or hi is not None:
        years = ((lo or dt.date(1900, 1, 1)).year, (hi or dt.date(2999, 12, 31)).year)
    keys = None if want is None else {*want, *(bucket_of(s) for s in want)}
    chosen = _io.recorded(files, keys, years)
    if man is parts.log:
        tables = [parts.storage.read_file(rel, rec, parts.fix) for rel, rec in chosen]
    else:  # an earlier generation: parts where they are, or where replaced ones are kept
        tables = [
            _history.read_file(parts.storage, parts.log, ds, rel, dict(rec), parts.fix)
            for rel, rec in chosen
        ]
    tables = [t for t in tables if t.num_rows]
    if not tables:
        date = src.ep.schema.arrow(minute=src.minute).field("date").type
        fields = [pa.field("symbol", pa.string()), pa.field("date", date)]
        fields += [pa.field(n, pa.float64()) for n in sp.names]
        return pa.schema(fields).empty_table()
    # parts are written with non-nullable columns (older stores' were nullable): the
    # answer's columns are nullable, as an empty answer's are
    table = pa.concat_tables(tables, promote_options="default").replace_schema_metadata(None)
    table = table.cast(pa.schema([f.with_nullable(True) for f in table.schema]))
    if lo is not None or hi is not None:
        table = table.filter(_io.within(table.column("date"), lo, hi))
    if want is not None:  # a bucket's parts hold its other members too
        table = table.filter(pc.is_in(table.column("symbol"), pa.array(want, pa.string())))
    order = pc.sort_indices(table, sort_keys=[("symbol", "ascending"), ("date", "ascending")])
    return table.take(order)
