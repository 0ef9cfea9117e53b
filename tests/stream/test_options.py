"""A stream's options are one checked dataclass, and ``read`` is written once for both forms."""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pytest

from marketframe import Client, InvalidParams
from marketframe.stream import AsyncStream, StreamOptions


def test_an_unknown_or_bad_option_is_refused_before_connecting() -> None:
    with pytest.raises(InvalidParams, match="max_bufer.*not a stream option.*max_buffer"):
        AsyncStream("k", "ws://127.0.0.1:9/x", max_bufer=5)
    with pytest.raises(InvalidParams, match="max_buffer.*at least 1"):
        StreamOptions(max_buffer=0)
    with pytest.raises(InvalidParams, match="backend.*pandas, polars, arrow"):
        AsyncStream("k", "ws://127.0.0.1:9/x", backend="numpy")


def test_options_by_name_or_as_one_object(client: Client) -> None:
    base = StreamOptions(batch_rows=7, backend="arrow")
    with client.stream(options=base) as s:
        assert s._async.options == base  # backend comes from options, not from the client
        s.subscribe("trades", "2330")
        batches = list(s.batches(idle=0.8))
    assert batches and max(b.num_rows for b in batches) <= 7
    with client.stream(batch_rows=3) as s:
        assert s._async.options.batch_rows == 3 and s._async.options.backend == "pandas"


def test_the_blocking_and_async_read_give_the_same_frame(client: Client) -> None:
    with client.stream(backend="arrow") as s:
        s.subscribe("trades", "2454")
        blocking = s.read("trades", idle=0.8)

    async def main() -> pa.Table:
        async with client.stream(async_=True, backend="arrow") as a:
            await a.subscribe("trades", "2454")
            table: pa.Table = await a.read("trades", idle=0.8)
            return table

    read_async = asyncio.run(main())
    assert blocking.num_rows > 0
    assert blocking["serial"].to_pylist() == read_async["serial"].to_pylist()
    with client.stream(backend="arrow") as s:  # nothing subscribed: an empty, typed table
        empty = s.read("candles", idle=0.2)
    assert empty.num_rows == 0 and "close" in empty.column_names
