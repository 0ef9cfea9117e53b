"""Small tables reach pandas from their buffers, with exactly the frame Arrow's path gives."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st
from sandbox.spec_table import ENDPOINTS

from marketframe.convert import _arrow_to_pandas, to_pandas, to_table
from marketframe.convert._pandas import SMALL, small_frame

from .test_convert_samples import CASES as SAMPLE_CASES
from .test_extra_samples import CASES as EXTRA_CASES

SAMPLES = Path(__file__).parents[1] / "data" / "samples"


def same_as_arrow(table: pa.Table) -> pd.DataFrame:
    """The small path's frame, checked against Arrow's for values, dtypes, index and names."""
    fast = small_frame(table)
    assert fast is not None, f"the small path refused {table.schema}"
    pd.testing.assert_frame_equal(fast, _arrow_to_pandas(table), check_exact=True)
    return fast


@pytest.mark.parametrize("name", sorted({**SAMPLE_CASES, **EXTRA_CASES}))
def test_every_real_payload_gives_the_arrow_frame(name: str) -> None:
    endpoint, params = {**SAMPLE_CASES, **EXTRA_CASES}[name]
    same_as_arrow(to_table((SAMPLES / f"{name}.json").read_bytes(), endpoint, params))


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_every_endpoint_of_the_sandbox_gives_the_arrow_frame(sandbox: Any, name: str) -> None:
    path = ENDPOINTS[name][0]
    r = requests.get(
        f"{sandbox.base_url}/{path}", headers={"X-API-KEY": sandbox.api_key}, timeout=30
    )
    assert r.status_code == 200, r.text
    params = dict(parse_qsl(path.partition("?")[2]))
    table = to_table(r.content, name, params)
    if table.num_rows > SMALL:
        pytest.skip(f"{table.num_rows} rows: Arrow's own conversion, compared nowhere else")
    same_as_arrow(table)


def test_to_pandas_takes_the_small_path_and_keeps_the_attributes() -> None:
    table = to_table((SAMPLES / "stock_intraday_quote.json").read_bytes(), "stock.intraday.quote")
    df = to_pandas(table)
    assert df._mgr.nblocks == small_frame(table)._mgr.nblocks  # built from blocks, not by Arrow
    assert df.attrs["endpoint"] == "stock.intraday.quote"
    assert df.attrs["units"] == to_pandas(table.slice(0, 0)).attrs["units"]


def test_columns_of_a_small_frame_are_writable_and_independent() -> None:
    table = pa.table(
        {
            "a": pa.array([1, None, 3], pa.int64()),
            "b": pa.array([1.5, None, 2.5]),
            "c": pa.array([4.0, 5.0, 6.0]),
            "t": pa.array([0, 1, 2], pa.timestamp("us", "Asia/Taipei")),
            "u": pa.array([5, None, 7], pa.timestamp("us", "Asia/Taipei")),
        }
    )
    df = same_as_arrow(table)
    df.loc[0, "a"] = 10
    df.loc[1, "b"] = 7.0
    df.loc[2, "t"] = pd.Timestamp("2026-01-01", tz="Asia/Taipei")
    assert df["a"].tolist() == [10, pd.NA, 3]
    assert df["c"].tolist() == [4.0, 5.0, 6.0]
    assert df["u"].isna().tolist() == [False, True, False]
    assert table.column("a").to_pylist() == [1, None, 3]  # the table is untouched


def test_frames_of_one_shape_share_no_mutable_state() -> None:
    # the column labels are built once per shape: each frame still has its own index object
    table = to_table((SAMPLES / "stock_intraday_quote.json").read_bytes(), "stock.intraday.quote")
    first, second = small_frame(table), small_frame(table)
    first.columns.name = "field"
    first.loc[0, "last_updated"] = pd.Timestamp("2026-01-01", tz="Asia/Taipei")
    assert second.columns.name is None and list(second.columns) == list(first.columns)
    assert second.loc[0, "last_updated"] == _arrow_to_pandas(table).loc[0, "last_updated"]


def test_a_type_it_does_not_take_falls_back_to_arrow() -> None:
    table = pa.table({"x": pa.array([[1, 2], None]), "y": pa.array([1, 2])})
    assert small_frame(table) is None
    assert to_pandas(table)["x"].tolist()[1] is None


def test_past_the_threshold_arrow_converts() -> None:
    table = pa.table({"y": pa.array(np.arange(SMALL + 1))})
    assert small_frame(table) is None
    assert len(to_pandas(table)) == SMALL + 1


# generated tables: every type the small path takes, with nulls, offsets and chunks
BOOLEAN = {b"pandas": b"boolean"}
TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any], dict[bytes, bytes] | None]] = {
    "i64": (pa.int64(), st.integers(-(2**63), 2**63 - 1), None),
    "i32": (pa.int32(), st.integers(-(2**31), 2**31 - 1), None),
    "f64": (pa.float64(), st.floats(allow_nan=False), None),
    "flag": (pa.bool_(), st.booleans(), BOOLEAN),
    "ts": (
        pa.timestamp("us", "Asia/Taipei"),
        st.integers(-(2**60), 2**60),
        None,
    ),
    "utc": (pa.timestamp("us", "UTC"), st.integers(0, 2**55), None),
    "naive": (pa.timestamp("us"), st.integers(0, 2**55), None),
    "day": (pa.date32(), st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1)), None),
    "word": (pa.string(), st.text(max_size=5), None),
    "cat": (
        pa.dictionary(pa.int32(), pa.string()),
        st.sampled_from(["TSE", "OTC", "EQUITY"]),
        None,
    ),
}


@st.composite
def tables(draw: Any) -> pa.Table:
    n = draw(st.integers(0, 40))
    head = draw(st.integers(0, 3))  # sliced off: arrays with an offset
    chosen = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=8))
    arrays, fields = [], []
    for i, key in enumerate(chosen):
        typ, values, meta = TYPES[key]
        nulls = draw(st.booleans())
        data = draw(
            st.lists(
                st.one_of(st.none(), values) if nulls else values,
                min_size=n + head,
                max_size=n + head,
            )
        )
        if pa.types.is_dictionary(typ):
            arr = pa.array(data, pa.string()).dictionary_encode()
        else:
            arr = pa.array(data, typ)
        arr = arr.slice(head)
        if draw(st.booleans()) and len(arr) > 1:  # two chunks
            arr = pa.chunked_array([arr.slice(0, 1), arr.slice(1)], arr.type)
        arrays.append(arr)
        fields.append(pa.field(f"{key}{i}", arr.type, metadata=meta))
    flags_without_meta = draw(st.booleans())
    if flags_without_meta:  # a bool column with no nulls and no "boolean" marker: numpy bool
        arrays.append(pa.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), pa.bool_()))
        fields.append(pa.field("plain", pa.bool_()))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


@settings(max_examples=200, deadline=None)
@given(tables())
def test_generated_tables_give_the_arrow_frame(table: pa.Table) -> None:
    same_as_arrow(table)
