"""Spark (pyspark with the machine's Java) reads a local store as it is: one session, one test.
The code is the one docs/store.md shows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._spark import local_spark


@pytest.mark.slow
def test_spark_reads_a_local_store(sb: Sandbox, tmp_path: Path) -> None:
    with Store(tmp_path / "data", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(
            "stock.historical.candles",
            ["2330", "0050", "IX0001"],
            "2023-01-01",
            "2024-12-31",
            progress=False,
        )
        ours = st.read("stock.historical.candles", backend="arrow")
    daily = f"{tmp_path}/data/dataset=stock.historical.candles/params=default/tf=D"
    with local_spark("marketframe-store", 1) as spark:
        df = spark.read.parquet(daily)
        assert {"sym", "symbol", "date", "close"} <= set(df.columns)
        rows = df.where("symbol = '0050'").select("date", "close").orderBy("date").collect()
        mine = ours.filter(pa.compute.equal(ours.column("symbol"), "0050"))
        assert [r["date"] for r in rows] == mine.column("date").to_pylist()
        assert [r["close"] for r in rows] == mine.column("close").to_pylist()
        assert df.count() == ours.num_rows
        assert {r["sym"] for r in df.select("sym").distinct().collect()} == {
            "2330",
            "0050",
            "IX0001",
        }
