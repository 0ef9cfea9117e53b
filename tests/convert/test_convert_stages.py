"""``to_table`` in stages: the body parsed once, one row-source protocol for REST, store and
streaming, and both row readers giving the same table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import orjson
import pyarrow as pa
import pytest

from marketframe import Client, Store
from marketframe.convert import build, concat, rows_to_table, table_units, to_table
from marketframe.convert._rows import ArrowRows, Channel, PyRows, RowSource, parse
from marketframe.endpoints import get
from marketframe.exceptions import SchemaError
from marketframe.stream._frames import SOURCES, STREAM_SCHEMAS

SAMPLES = Path(__file__).parents[1] / "data" / "samples"


@pytest.fixture(scope="module")
def client_backend() -> str:
    return "arrow"


def _sources() -> list[RowSource]:
    # the annotation is the check: mypy verifies that both kinds are RowSources
    return [get("stock.intraday.trades"), SOURCES["trades"]]


def test_rest_endpoints_and_stream_channels_are_one_kind_of_row_source() -> None:
    ep, channel = _sources()
    assert isinstance(channel, Channel) and channel.name == "stream.trades"
    assert channel.schema is STREAM_SCHEMAS["trades"]
    # the same staged conversion serves both: a streamed trade row and a REST body
    head = {"type": "EQUITY", "exchange": "TWSE", "market": "TSE", "symbol": "2330"}
    row = {"price": 1000.0, "size": 2, "time": 1769734800000000, "serial": 7}
    streamed = rows_to_table([{**head, **row}], channel)
    assert streamed.schema.metadata[b"marketframe.endpoint"] == b"stream.trades"
    assert streamed.column("price").to_pylist() == [1000.0]
    body = orjson.dumps({"date": "2026-01-30", **head, "data": [row]})
    rest = to_table(body, ep)
    assert rest.column("price").to_pylist() == [1000.0]
    assert rest.schema.metadata[b"marketframe.endpoint"] == b"stock.intraday.trades"


def test_the_session_date_comes_from_the_parsed_envelope_wherever_the_key_is() -> None:
    # a body whose envelope date follows the rows: a second parser that scanned the bytes
    # before "data" for a date (as the store did) found none here
    body = orjson.dumps(
        {"symbol": "2330", "data": [{"date": "2024-01-02", "close": 1.0}], "date": "2024-01-03"}
    )
    parsed = parse(body, get("stock.historical.candles"))
    assert parsed.session_date == dt.date(2024, 1, 3)
    assert "data" not in parsed.envelope and parsed.envelope["symbol"] == "2330"
    # no date, or not a date: None (the store then uses its clock)
    assert parse(b'{"data": []}', get("stock.historical.candles")).session_date is None
    assert (
        parse(b'{"date": "soon", "data": []}', get("stock.historical.candles")).session_date is None
    )


def test_client_fetch_keeps_the_envelope_of_each_response(client: Client) -> None:
    fetched = client.fetch("stock.intraday.trades", symbol=["2330", "2317"], limit=3)
    assert [e["symbol"] for e in fetched.envelopes] == ["2330", "2317"]
    assert all("data" not in e for e in fetched.envelopes)
    dates = {d.isoformat() for d in fetched.table.column("date").to_pylist()}
    assert {e["date"] for e in fetched.envelopes} == dates


def test_a_store_sync_converts_through_the_same_stages(client: Client, tmp_path: Path) -> None:
    store = Store(tmp_path / "s", client=client)
    store.sync(
        "stock.historical.candles", "2330", start="2026-11-02", end="2026-11-06", today="2026-11-20"
    )
    held = store.read(
        "stock.historical.candles", "2330", start="2026-11-02", end="2026-11-06", backend="arrow"
    )
    direct = client.fetch_table(
        "stock.historical.candles",
        symbol="2330",
        timeframe="D",
        from_="2026-11-02",
        to="2026-11-06",
        sort="asc",
    )
    assert held.column("close").to_pylist() == direct.column("close").to_pylist()


def test_both_row_readers_give_the_same_table() -> None:
    body = (SAMPLES / "stock_intraday_trades.json").read_bytes()
    ep = get("stock.intraday.trades")
    fast, slow = parse(body, ep, engine="arrow"), parse(body, ep, engine="python")
    assert isinstance(fast.rows, ArrowRows) and isinstance(slow.rows, PyRows)
    assert dict(fast.envelope) == dict(slow.envelope)
    assert build(fast, ep).equals(build(slow, ep), check_metadata=True)


def test_a_bad_body_fails_in_the_parse_stage_naming_the_source() -> None:
    channel = Channel("stream.test", STREAM_SCHEMAS["trades"])
    with pytest.raises(SchemaError, match="stream.test.*not valid JSON"):
        parse(b"{", channel)
    with pytest.raises(SchemaError, match="data.*not an array"):
        parse(b'{"data": 3}', channel)
    with pytest.raises(SchemaError, match="not objects"):
        rows_to_table([1, 2], channel)  # type: ignore[list-item]
    assert isinstance(build(parse(b'{"data": []}', channel), channel), pa.Table)


def test_concatenated_answers_are_one_chunk_per_column_with_their_units_merged() -> None:
    # a fan-out of one-row answers: one chunk per answer would make every reader after it
    # (the units cast, pandas, polars) pay per answer
    doc = orjson.loads((SAMPLES / "stock_intraday_quote.json").read_bytes())
    lots = to_table(orjson.dumps(doc), "stock.intraday.quote")
    odd = to_table(
        orjson.dumps({**doc, "symbol": "0050"}), "stock.intraday.quote", {"type": "oddlot"}
    )
    empty = lots.slice(0, 0)
    out = concat([lots, empty, odd])
    assert out.num_rows == 2 and all(c.num_chunks == 1 for c in out.columns)
    assert out.to_pylist() == pa.concat_tables([lots, odd]).to_pylist()
    symbol = doc["symbol"]
    assert table_units(lots)["last_size"] == "lots" and table_units(odd)["last_size"] == "shares"
    # the tables disagree: each is named by its first row's symbol (an empty one by its place)
    assert table_units(out)["last_size"] == f"mixed ({symbol}: lots, 1: lots, 0050: shares)"
    assert table_units(out)["total_trade_value"] == "TWD"
    assert out.schema.field("last_size").metadata[b"unit"].startswith(b"mixed (")
    # answers that agree keep their units as they are
    assert table_units(concat([lots, lots])) == table_units(lots)
