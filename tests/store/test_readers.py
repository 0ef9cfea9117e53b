"""The store reads as it is in the five usual readers (11.3): one physical schema per dataset,
directory keys that never clash with a column."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq
import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import arrow_equal

CANDLES = "stock.historical.candles"
#: (endpoint, timeframe, params) of each dataset the store below holds
DATASETS = [
    (CANDLES, "D", {}),
    (CANDLES, "5", {}),
    ("stock.technical.sma", "D", {"period": 5}),
    ("stock.corporate_actions.listing_applicants", None, {}),
]


def _duckdb(d: Path) -> pa.Table:
    got = duckdb.sql(
        f"SELECT * FROM read_parquet('{d}/**/*.parquet', hive_partitioning = true)"
    ).arrow()
    return got.read_all() if hasattr(got, "read_all") else got


READERS: dict[str, Callable[[Path], Any]] = {
    "pyarrow.dataset": lambda d: pds.dataset(d, format="parquet", partitioning="hive").to_table(),
    "pyarrow.parquet.read_table": lambda d: pq.read_table(d),
    "pandas.read_parquet": lambda d: pa.Table.from_pandas(pd.read_parquet(d), preserve_index=False),
    "polars.scan_parquet": lambda d: (
        pl.scan_parquet(f"{d}/**/*.parquet", hive_partitioning=True).collect().to_arrow()
    ),
    "duckdb.read_parquet": _duckdb,
}


@pytest.fixture(scope="module")
def store(sb: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Store:
    st = Store(tmp_path_factory.mktemp("readers"), api_key=sb.api_key, base_url=sb.base_url)
    # numeric symbols only in one dataset (hive inference would make them integers), an index
    # in another (strings)
    st.sync(CANDLES, ["2330", "0050", "IX0001"], "2024-06-01", "2025-03-31", progress=False)
    st.sync(CANDLES, ["2330", "0050"], timeframe="5", progress=False)
    st.sync(
        "stock.technical.sma",
        ["2330", "0050"],
        "2025-01-01",
        "2025-03-31",
        period=5,
        today="2026-11-20",
        progress=False,
    )
    st.sync(
        "stock.corporate_actions.listing_applicants",
        None,
        "2023-01-01",
        "2025-12-31",
        today="2026-11-20",
        progress=False,
    )
    yield st
    st.close()


def _dataset_dir(st: Store, endpoint: str, tf: str | None, params: dict[str, Any]) -> Path:
    from marketframe.store import _io
    from marketframe.store._dataset import resolve

    return _io.dataset_dir(st.root, resolve(endpoint, tf, params).ds)


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: f"{d[0]}-{d[1]}")
def test_reader_reads_every_dataset_as_the_store_does(
    store: Store, reader: str, dataset: tuple[Any, ...]
) -> None:
    endpoint, tf, params = dataset
    ours = store.read(endpoint, timeframe=tf, backend="arrow", **params)
    got = READERS[reader](_dataset_dir(store, endpoint, tf, params))
    assert ours.num_rows > 0
    # the reader's own directory columns come on top of the stored ones, which are intact
    assert set(ours.column_names) <= set(got.column_names)
    got = got.select(ours.column_names)
    keys = [k for k in ("symbol", "date", "application_date") if k in ours.column_names]
    order = [(k, "ascending") for k in keys]
    plain = pa.schema(
        [
            f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f
            for f in ours.schema
        ]
    )
    if reader == "pandas.read_parquet":  # pandas makes dates timestamps and strings objects
        got = pa.Table.from_pylist(got.to_pylist(), schema=None)
        got = pa.table(
            [pa.array([_py(v) for v in got.column(n).to_pylist()]) for n in got.column_names],
            names=got.column_names,
        )
    got = got.cast(plain) if reader != "pandas.read_parquet" else got.cast(plain, safe=False)
    arrow_equal(got.sort_by(order), ours.cast(plain).sort_by(order))


def _py(v: Any) -> Any:
    return (
        v.date()
        if isinstance(v, pd.Timestamp) and v.tz is None and v == v.normalize()
        else (v.to_pydatetime() if isinstance(v, pd.Timestamp) else v)
    )


def test_symbols_stay_strings_with_leading_zeros(store: Store) -> None:
    d = _dataset_dir(store, CANDLES, "D", {})
    t = pq.read_table(d)
    assert pa.types.is_string(t.schema.field("symbol").type)
    assert "0050" in set(t.column("symbol").to_pylist())


def test_every_file_of_a_dataset_has_one_physical_schema(store: Store) -> None:
    for endpoint, tf, params in DATASETS:
        files = sorted(_dataset_dir(store, endpoint, tf, params).rglob("*.parquet"))
        schemas = {pq.read_schema(f).remove_metadata() for f in files}
        assert len(schemas) == 1, f"{endpoint} {tf}: {schemas}"
        assert not any(pa.types.is_dictionary(f.type) for f in next(iter(schemas)))
