"""The streaming client against the sandbox over real sockets (no mocks)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow.compute as pc
import pytest

from marketframe import (
    Client,
    InvalidParams,
    StreamAuthError,
    StreamClosed,
    StreamError,
    StreamSubscribeError,
    StreamTimeout,
)
from marketframe.convert import to_table as rest_to_table
from marketframe.sandbox import Sandbox
from marketframe.stream import STREAM_SCHEMAS, AsyncStream, read_recorded, ws_url

from .conftest import NOW, rest_trades


def test_ws_url_follows_the_client_origin() -> None:
    assert (
        ws_url("http://127.0.0.1:8000/marketdata/v1.0")
        == "ws://127.0.0.1:8000/marketdata/v1.0/stock/streaming"
    )
    assert (
        ws_url("https://api.fugle.tw/marketdata/v1.0")
        == "wss://api.fugle.tw/marketdata/v1.0/stock/streaming"
    )
    with pytest.raises(InvalidParams):
        ws_url("ftp://x")


def test_subscribe_many_list_and_unsubscribe(client: Client) -> None:
    with client.stream() as s:
        subs = s.subscribe("books", ["2330", "2454"])
        one = s.subscribe("candles", "2317")
        assert [x.symbol for x in subs] == ["2330", "2454"] and one[0].channel == "candles"
        listed = s.subscriptions()
        assert {(x.channel, x.symbol) for x in listed} == {
            ("books", "2330"),
            ("books", "2454"),
            ("candles", "2317"),
        }
        s.unsubscribe(subs)
        s.unsubscribe(one[0].id)
        assert s.subscriptions() == [] and s.subscribed == []
        with pytest.raises(InvalidParams, match="unknown ids"):
            s.unsubscribe("nope")


def test_unknown_channel_before_sending_unknown_symbol_upon_reply(client: Client) -> None:
    with client.stream() as s:
        with pytest.raises(InvalidParams, match="trades, candles, books, aggregates, indices"):
            s.subscribe("quotes", "2330")
        with pytest.raises(StreamSubscribeError, match="0000") as info:
            s.subscribe("trades", "0000")
        assert info.value.subscribed == []
        with pytest.raises(StreamSubscribeError) as info:
            s.subscribe("trades", ["2330", "0000"])
        assert list(info.value.failed) == ["0000"]
        assert [x.symbol for x in info.value.subscribed] == ["2330"]
        assert [x.symbol for x in s.subscriptions()] == ["2330"]
        with pytest.raises(StreamSubscribeError, match="IX0001"):
            s.subscribe("trades", "IX0001")


def test_bad_key_raises_at_once_and_never_shows_the_key(sb: Sandbox) -> None:
    secret = "not-a-key-0123456789"
    with Client(secret, base_url=sb.base_url, cache=False) as bad:
        s = bad.stream(connect_timeout=5, reply_timeout=5)
        with pytest.raises(StreamAuthError) as info:
            s.connect()
        assert "Invalid authentication credentials" in str(info.value)
        assert secret not in str(info.value) and secret not in repr(info.value)
        assert secret not in repr(s)


def test_a_server_that_never_answers_the_handshake_times_out(
    client: Client, silent_server: Any
) -> None:
    url = f"ws://127.0.0.1:{silent_server.port}/marketdata/v1.0/stock/streaming"
    s = client.stream(url=url, connect_timeout=0.5)
    with pytest.raises(StreamTimeout, match="no WebSocket handshake answer .* 0.5 s"):
        s.connect()
    assert isinstance(StreamTimeout("x"), StreamError | TimeoutError)


def test_ping_pong_and_heartbeats(sb: Sandbox, client: Client) -> None:
    sb.configure(heartbeat=0.1)
    try:
        # heartbeat_timeout small: the watchdog pings on quiet periods and gets pongs
        with client.stream(heartbeat_timeout=0.15) as s:
            pong = s.ping("abc")
            assert pong["state"] == "abc" and isinstance(pong["time"], int)
            assert "state" not in s.ping()
            assert s.next_batch(timeout=0.6) is None  # no subscription: no data
            assert s.stats.heartbeats >= 2 and s.last_heartbeat is not None
            assert s.stats.reconnects == 0
    finally:
        sb.configure(heartbeat=30.0)


def test_every_channel_with_rest_columns(client: Client) -> None:
    # one connection per channel: in the sandbox's fast replay a subscription starts where
    # the connection's replay already is
    got: dict[str, list] = {}
    for channel, symbol in (
        ("trades", "2330"),
        ("candles", "2454"),
        ("books", "2454"),
        ("aggregates", "0050"),
        ("indices", "IX0001"),
    ):
        with client.stream(backend="arrow") as s:
            s.subscribe(channel, symbol)
            for batch in s.batches(idle=1.0):
                got.setdefault(batch.channel, []).append(batch.table)
    import pyarrow as pa

    tables = {k: pa.concat_tables(v, promote_options="permissive") for k, v in got.items()}
    assert set(tables) == set(STREAM_SCHEMAS)
    for channel, t in tables.items():
        assert t.column_names == STREAM_SCHEMAS[channel].names, channel
    # an aggregates row converts like the REST quote: same columns, same types, same values
    quote = rest_to_table(
        client.fetch("stock.intraday.quote", symbol="0050", refresh=True).responses[0].body,
        "stock.intraday.quote",
    )
    last = tables["aggregates"].slice(tables["aggregates"].num_rows - 1)
    assert last.column_names == quote.column_names
    assert last.cast(quote.schema).to_pylist() == quote.to_pylist()
    # a streamed trade has a REST trade's typed columns (+ flags)
    rest = client.fetch_table("stock.intraday.trades", symbol="2330", sort="asc", limit=100000)
    for name in ("price", "size", "volume", "time", "serial"):
        assert tables["trades"].schema.field(name).type == rest.schema.field(name).type
    streamed = tables["trades"].filter(pc.invert(tables["trades"]["is_trial"]))
    assert streamed["serial"].to_pylist() == rest["serial"].to_pylist()
    assert tables["trades"]["is_open"].to_pylist().count(True) == 1
    assert tables["indices"].num_rows == 3240
    assert tables["books"]["bid_price_1"].null_count < tables["books"].num_rows
    candles = tables["candles"]
    assert str(candles.schema.field("date").type) == "timestamp[us, tz=Asia/Taipei]"


def test_odd_lot_trades_are_in_shares(client: Client) -> None:
    with client.stream(backend="arrow") as s:
        s.subscribe("trades", "2330", odd_lot=True)
        batches = list(s.batches(idle=0.8))
    assert batches and all(b.odd_lot for b in batches)
    assert all(
        orjson.loads(b.table.schema.metadata[b"marketframe.units"])["size"] == "shares"
        for b in batches
    )
    total = sum(pc.sum(b.table["size"]).as_py() for b in batches)
    quote = client.fetch_table("stock.intraday.quote", symbol="2330", type="oddlot")
    assert total == quote["total_trade_volume"][0].as_py()


def test_pandas_and_polars_frames(client: Client) -> None:
    import polars as pl

    with client.stream() as s:
        s.subscribe("trades", "2317")
        df = s.read("trades", idle=0.8)
    assert str(df["time"].dtype) == "datetime64[us, Asia/Taipei]"
    assert str(df["serial"].dtype) == "Int64" and df["is_close"].dtype == bool
    with client.stream(backend="polars") as s:
        s.subscribe("trades", "2317")
        frames = list(s.frames(idle=0.8))
    pdf = pl.concat([f for _, f in frames])
    assert pdf["serial"].to_list() == df["serial"].tolist()
    assert pdf.schema["time"] == pl.Datetime("us", "Asia/Taipei")


def test_async_form(client: Client) -> None:
    async def main() -> tuple[int, int]:
        async with client.stream(async_=True) as s:
            assert isinstance(s, AsyncStream)
            await s.subscribe("trades", ["2330", "2454"])
            n = 0
            while (batch := await s.next_batch(timeout=0.8)) is not None:
                n += batch.num_rows
            pong = await s.ping()
            return n, pong["time"]

    n, _ = asyncio.run(main())
    expected = sum(len(rest_trades(client, sym)) for sym in ("2330", "2454"))
    assert n == expected


def test_a_slow_consumer_gets_back_pressure_not_losses(client: Client) -> None:
    with client.stream(max_buffer=100, batch_rows=50) as s:
        s.subscribe("trades", ["2330", "2454", "2317"])
        rows = 0
        for batch in s.batches(idle=1.0):
            assert batch.num_rows <= 50
            rows += batch.num_rows
        assert s.stats.paused > 0 and s.stats.duplicates == 0
    assert rows == sum(len(rest_trades(client, sym)) for sym in ("2330", "2454", "2317"))


def test_a_closed_stream_says_why(make_sandbox: Any) -> None:
    with (
        make_sandbox(now=NOW, drop_after=30) as (sb, c),
        c.stream(reconnect=False) as s,
    ):
        s.subscribe("trades", "2330")
        rows = 0
        with pytest.raises(StreamClosed) as info:
            while True:
                batch = s.next_batch(timeout=10)
                assert batch is not None
                rows += batch.num_rows
        assert rows == 30
        assert info.value.code == 1011 and "drop_after" in (info.value.reason or "")
        with pytest.raises(StreamClosed):
            s.subscribe("trades", "2454")


def test_fast_replay_reconnects_drop_duplicates(make_sandbox: Any, tmp_path: Path) -> None:
    # stream_speed=0: each connection replays the day from the start (and is dropped after the
    # same 400 events): after every drop the client must drop what it already has
    with make_sandbox(now=NOW, drop_after=400) as (sb, c):
        with c.stream(backoff=0.01, max_reconnects=20, backend="arrow") as s:
            s.subscribe("trades", ["2330", "2454"])
            t = s.read("trades", idle=1.5)
            assert s.stats.reconnects >= 3 and s.stats.duplicates > 0
        for sym in ("2330", "2454"):
            mine = t.filter(pc.equal(t["symbol"], sym))["serial"].to_pylist()
            assert mine and mine == [r["serial"] for r in rest_trades(c, sym)][: len(mine)]
        assert t.num_rows == 400


@pytest.mark.slow
def test_drops_mid_session_backfill_and_record_the_whole_day(
    make_sandbox: Any, tmp_path: Path
) -> None:
    symbols = ("2330", "2454")
    with make_sandbox(now=NOW, stream_speed=3000.0, drop_after=150) as (sb, c):
        with c.stream(backfill=True, backoff=0.05, max_reconnects=50) as s:
            rec = s.record(tmp_path / "rec", rows_per_file=500)
            # restart the shared market clock at 07:30, an hour (1.2 s at 3000x) before the
            # first trial match, so the subscription is in place before it even on a busy
            # machine (a subscription starts at the market clock; it never backfills the past)
            sb.configure(stream_from="07:30")
            s.subscribe("trades", list(symbols))
            # 07:30-14:30 (the after-hours fixed-price trade) at 3000x lasts ~8.4 s, the quiet
            # hour 13:30-14:30 1.2 s; the sandbox drops the connection every 150 events
            for _ in s.batches(idle=2.5):
                pass
            stats, gaps = s.stats, list(s.gaps)
        assert stats.reconnects >= 3
        assert gaps and all(g.error is None for g in gaps)
        assert stats.backfilled > 0 and sum(g.filled or 0 for g in gaps) == stats.backfilled
        assert len(rec.files) >= 2 and not list((tmp_path / "rec").rglob("*.tmp"))
        recorded = read_recorded(tmp_path / "rec", "trades")
        for sym in symbols:
            mine = recorded.filter(pc.equal(recorded["symbol"], sym))
            serials = sorted(mine["serial"].to_pylist())
            rest = rest_trades(c, sym)
            assert serials == [r["serial"] for r in rest], sym  # complete, no duplicates
            by_serial = {r["serial"]: r for r in mine.to_pylist()}
            assert [by_serial[r["serial"]]["price"] for r in rest] == [r["price"] for r in rest]
        assert pc.any(recorded["backfilled"]).as_py()
        key = sb.api_key.encode()
        assert all(key not in f.read_bytes() for f in (tmp_path / "rec").rglob("*.parquet"))


CRASHING_RECORDER = r"""
import os, sys
from marketframe import Client
url, key, out = sys.argv[1:4]
with Client(key, base_url=url, cache=False) as c:
    s = c.stream()
    s.connect()
    s.record(out, rows_per_file=200)
    s.subscribe("trades", ["2330", "2454"])
    rows = 0
    for batch in s.batches(idle=5):
        rows += batch.num_rows
        if rows >= 700:
            os._exit(3)  # a crash: no close, no flush
"""


def test_a_crash_leaves_only_complete_files(sb: Sandbox, tmp_path: Path) -> None:
    import subprocess
    import sys

    import pyarrow.parquet as pq

    out = tmp_path / "rec"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_RECORDER, sb.base_url, sb.api_key, str(out)],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3, proc.stderr
    assert sb.api_key not in proc.stdout + proc.stderr
    done = sorted((out / "trades").glob("*.parquet"))
    assert len(done) >= 3 and all(pq.read_metadata(f).num_rows == 200 for f in done)
    assert len(list((out / "trades").glob("*.tmp"))) <= 1
    table = read_recorded(out, "trades")
    assert table.num_rows == 200 * len(done)
    assert table.column_names == STREAM_SCHEMAS["trades"].names


def test_maximum_connections_is_a_clear_error(make_sandbox: Any) -> None:
    with (
        make_sandbox(now=NOW, max_connections=1) as (sb, c),
        c.stream(),
    ):
        with pytest.raises(StreamError, match="Maximum number of connections reached"):
            c.stream().connect()
    with pytest.raises(InvalidParams, match="backfill"):
        AsyncStream("k", "ws://127.0.0.1:1/x", backfill=True)


@pytest.fixture
def mute_server() -> Iterator[tuple[str, list[int]]]:
    """A WebSocket server that authenticates anyone, then never sends anything (no heartbeat,
    no pong): the client's watchdog must notice and reconnect. Yields (url, connections)."""
    from aiohttp import web

    connections: list[int] = []
    ready = threading.Event()
    box: dict[str, object] = {}

    async def handle(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        connections.append(1)
        async for msg in ws:
            if orjson.loads(msg.data).get("event") == "auth":
                await ws.send_str('{"event":"authenticated","data":{"message":"ok"}}')
        return ws

    def serve() -> None:
        loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_get("/marketdata/v1.0/stock/streaming", handle)
        runner = web.AppRunner(app)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        box["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        box["loop"] = loop
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    ready.wait(10)
    yield f"ws://127.0.0.1:{box['port']}/marketdata/v1.0/stock/streaming", connections
    loop = box["loop"]
    loop.call_soon_threadsafe(loop.stop)  # type: ignore[attr-defined]
    t.join(10)


def test_no_heartbeat_and_no_pong_forces_a_reconnect(
    client: Client, mute_server: tuple[str, list[int]]
) -> None:
    url, connections = mute_server
    with client.stream(url=url, heartbeat_timeout=0.3, reply_timeout=0.3, backoff=0.01) as s:
        for _ in range(150):  # a bound, not a timing assertion: the watchdog needs ~1 s
            assert s.next_batch(timeout=0.2) is None  # nothing ever arrives
            if s.stats.reconnects >= 2:
                break
        assert s.stats.reconnects >= 2
    assert len(connections) >= 3
