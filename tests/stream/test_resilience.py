"""The stream heals and never loses data to a drop in the middle of a request, a malformed
frame or a bad row (against a scripted real WebSocket server, see ``scripted.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from marketframe import Client, StreamClosed, StreamSubscribeError

from .scripted import Conn, ScriptedServer, dumps, trade


def us(when: str) -> int:
    """Epoch microseconds of a Taipei wall time."""
    return int(datetime.fromisoformat(when + "+08:00").timestamp() * 1_000_000)


def events_of(server: ScriptedServer, conn: int) -> list[str]:
    return [b.get("event", "?") for n, b in server.requests if n == conn]


def drop_on(event: str, channel: str | None = None, conn_no: int = 1) -> Any:
    """A hook that closes connection ``conn_no`` when ``event`` (on ``channel``) arrives,
    without answering it."""

    async def hook(conn: Conn, body: dict[str, Any]) -> bool:
        if (
            conn.number == conn_no
            and body.get("event") == event
            and (channel is None or (body.get("data") or {}).get("channel") == channel)
        ):
            await conn.ws.close(code=1011, message=b"dropped mid-request")
            return True
        return False

    return hook


def test_a_subscribe_in_flight_when_the_connection_drops_completes_after_the_reconnect(
    client: Client, scripted: ScriptedServer
) -> None:
    # the notebook's race (issue 11.1), made deterministic: the server drops the connection
    # right when 'subscribe aggregates' arrives, before answering it
    scripted.on_request = drop_on("subscribe", "aggregates")
    with client.stream(url=scripted.url, backoff=0.01) as s:
        s.subscribe("trades", ["2330", "2317"])
        subs = s.subscribe("aggregates", "2330")
        assert [(x.channel, x.symbol) for x in subs] == [("aggregates", "2330")]
        assert {(x.channel, x.symbol) for x in s.subscriptions()} == {
            ("trades", "2330"),
            ("trades", "2317"),
            ("aggregates", "2330"),
        }
        assert {(x.channel, x.symbol) for x in s.subscribed} == {
            ("trades", "2330"),
            ("trades", "2317"),
            ("aggregates", "2330"),
        }
        assert s.stats.reconnects == 1
    # second connection: auth, the acknowledged subscription restored, the request replayed
    assert events_of(scripted, 2)[:3] == ["auth", "subscribe", "subscribe"]


def test_without_reconnecting_a_request_cut_by_a_drop_raises_stream_closed(
    client: Client, scripted: ScriptedServer
) -> None:
    scripted.on_request = drop_on("subscribe")
    with client.stream(url=scripted.url, reconnect=False) as s:
        with pytest.raises(StreamClosed, match="closed before the reply") as info:
            s.subscribe("trades", "2330")
        assert info.value.code == 1011


def test_unsubscribe_and_subscriptions_in_flight_survive_a_drop(
    client: Client, scripted: ScriptedServer
) -> None:
    scripted.on_request = drop_on("unsubscribe")
    with client.stream(url=scripted.url, backoff=0.01) as s:
        subs = s.subscribe("trades", ["2330", "2317"])
        s.unsubscribe(subs[0])  # dropped before the reply: not restored by the reconnect
        assert [x.symbol for x in s.subscribed] == ["2317"]
        assert [x.symbol for x in s.subscriptions()] == ["2317"]
        scripted.on_request = drop_on("subscriptions", conn_no=2)
        assert [x.symbol for x in s.subscriptions()] == ["2317"]  # asked again on conn 3
        assert s.stats.reconnects == 2


def test_exhausted_reconnects_fail_the_request_with_a_typed_error(
    client: Client, scripted: ScriptedServer
) -> None:
    scripted.on_request = drop_on("subscribe", "candles")
    # every later connection answers auth with garbage: each attempt fails, none crashes
    scripted.auth_reply = lambda conn: (
        dumps("authenticated", {"message": "ok"}) if conn.number == 1 else "{garbage"
    )
    with client.stream(url=scripted.url, backoff=0.01, max_reconnects=3) as s:
        s.subscribe("trades", "2330")
        with pytest.raises(StreamClosed, match="3 reconnect attempts failed"):
            s.subscribe("candles", "2330")
        assert s.stats.malformed == 3 and len(scripted.connections) == 4


def test_garbage_in_the_auth_reply_during_a_reconnect_is_retried(
    client: Client, scripted: ScriptedServer
) -> None:
    day = "2026-11-20T10:00:0"

    async def hook(conn: Conn, body: dict[str, Any]) -> bool:
        if body.get("event") != "subscribe":
            return False
        await scripted.reply(conn, body)
        await conn.send(
            trade("2330", 10 * conn.number, us(day + str(conn.number))),
            trade("2330", 10 * conn.number + 1, us(day + str(conn.number))),
        )
        if conn.number == 1:
            await conn.ws.close()
        return True

    scripted.on_request = hook
    scripted.auth_reply = lambda conn: (
        '{"event": "authenticated", "data": '
        if conn.number == 2
        else dumps("authenticated", {"message": "ok"})
    )
    with client.stream(url=scripted.url, backoff=0.01, backend="arrow") as s:
        s.subscribe("trades", "2330")
        t = s.read("trades", idle=1.0)
        assert t["serial"].to_pylist() == [10, 11, 30, 31]
        assert s.stats.reconnects == 1 and s.stats.malformed == 1
        assert s.ping()["time"] == 1  # alive
    assert len(scripted.connections) == 3


def test_an_unrelated_error_event_during_a_subscribe_is_not_a_refusal(
    client: Client, scripted: ScriptedServer
) -> None:
    async def hook(conn: Conn, body: dict[str, Any]) -> bool:
        if body.get("event") == "subscribe":
            await conn.send(dumps("error", {"message": "Too many requests, slow down"}))
        return False

    scripted.on_request = hook
    with client.stream(url=scripted.url) as s:
        subs = s.subscribe("trades", ["2330", "2317"])
        assert [x.symbol for x in subs] == ["2330", "2317"]
        subs = s.subscribe("candles", "2330")
        assert [x.symbol for x in subs] == ["2330"]

    async def refuse(conn: Conn, body: dict[str, Any]) -> bool:
        if body.get("event") == "subscribe":
            await conn.send(dumps("error", {"message": "Subscription failed"}))
            return True
        return False

    scripted.on_request = refuse
    with client.stream(url=scripted.url) as s, pytest.raises(StreamSubscribeError):
        s.subscribe("trades", "2330")


#: malformed frames: (what, frame); each must be counted in stats.malformed and skipped
MALFORMED: list[tuple[str, str | bytes]] = [
    ("invalid JSON", "{not json"),
    ("a JSON array", "[1, 2, 3]"),
    ("a JSON number", "42"),
    ("a JSON string", '"data"'),
    ("trade data null", dumps("data", None, id="trades:2330", channel="trades")),
    ("trade data a list", dumps("data", [1], id="trades:2330", channel="trades")),
    ("trade data a string", dumps("data", "x", id="trades:2330", channel="trades")),
    ("heartbeat data a string", dumps("heartbeat", "soon")),
    ("heartbeat data null", dumps("heartbeat", None)),
    ("data on an unknown channel", dumps("data", {"symbol": "2330"}, id="x", channel="quotes")),
    ("data without a channel", dumps("data", {"symbol": "2330"}, id="x")),
    ("an unknown event", dumps("surprise", {})),
    ("no event", '{"data": {}}'),
    ("a binary frame", b"\x00\x01binary"),
    ("subscribed without an id", dumps("subscribed", {"channel": "trades"})),
]
#: rows that parse but cannot be converted: each must be quarantined, the rest delivered
BAD_ROWS: list[tuple[str, dict[str, Any]]] = [
    ("price not a number", {"price": "abc"}),
    ("time not a number", {"time": "noon"}),
    ("size a list", {"size": [1]}),
    ("symbol missing", {"symbol": None}),
]


def test_malformed_frames_are_counted_and_skipped_never_end_the_stream(
    client: Client, scripted: ScriptedServer
) -> None:
    t0 = us("2026-11-20T10:00:00")
    frames: list[str | bytes] = []
    for serial, (_, frame) in enumerate(MALFORMED, start=1001):
        frames += [trade("2330", serial, t0 + serial), frame]
    for i, (_, bad) in enumerate(BAD_ROWS):
        row = {
            "symbol": "2330",
            "type": "EQUITY",
            "exchange": "TWSE",
            "price": 1.5,
            "size": 1,
            "time": t0 + 5000 + i,
            "serial": 5000 + i,
            **bad,
        }
        frames.append(dumps("data", row, id="trades:2330", channel="trades"))
    frames += [
        dumps("error", "a string"),
        dumps("heartbeat", {"time": "123"}),
        trade("2330", 9000, t0 + 9000),
    ]
    scripted.after_subscribe(lambda conn: frames)
    with client.stream(url=scripted.url, backend="arrow") as s:
        s.subscribe("trades", "2330")
        t = s.read("trades", idle=1.0)
        assert t["serial"].to_pylist() == [*range(1001, 1001 + len(MALFORMED)), 9000]
        assert s.stats.malformed == len(MALFORMED), list(s.malformed)
        assert len(s.malformed) == len(MALFORMED)
        assert s.stats.quarantined == len(BAD_ROWS) == len(s.quarantine)
        assert [row["serial"] for _, row, _ in s.quarantine] == [5000, 5001, 5002, 5003]
        assert s.quarantine[0][1]["price"] == "abc"  # kept raw
        assert s.last_heartbeat == 123 and s.stats.reconnects == 0
        assert s.ping()["time"] == 1  # still alive


def test_one_bad_row_is_quarantined_and_the_rest_of_its_batch_delivered(
    client: Client, scripted: ScriptedServer
) -> None:
    t0 = us("2026-11-20T10:00:00")
    scripted.after_subscribe(
        lambda conn: [
            trade("2330", i, t0 + i, price="abc" if i == 1000 else 10.5) for i in range(2000)
        ]
    )
    with client.stream(url=scripted.url, backend="arrow", batch_rows=5000) as s:
        s.subscribe("trades", "2330")
        t = s.read("trades", idle=1.0)
        assert t.num_rows == 1999 and 1000 not in t["serial"].to_pylist()
        assert s.stats.quarantined == 1
        channel, row, why = s.quarantine[0]
        assert channel == "trades" and row["serial"] == 1000 and row["price"] == "abc"
        assert "price" in why


def test_serials_restarting_after_the_fixed_price_trade_are_new_trades(
    client: Client, scripted: ScriptedServer
) -> None:
    # issue 17.1 on one connection: 500000, 500010, 99999999 (14:30 fixed price), then the
    # next day's 10001, 10005; a replayed 500010 is the only duplicate
    frames = [
        trade("2330", 500000, us("2026-11-20T13:20:00")),
        trade("2330", 500010, us("2026-11-20T13:30:00")),
        trade("2330", 99999999, us("2026-11-20T14:30:00")),
        trade("2330", 10001, us("2026-11-23T09:00:00"), isOpen=True),
        trade("2330", 10005, us("2026-11-23T09:00:02")),
        trade("2330", 500010, us("2026-11-20T13:30:00")),
    ]

    scripted.after_subscribe(lambda conn: frames)
    with client.stream(url=scripted.url, backend="arrow") as s:
        s.subscribe("trades", "2330")
        t = s.read("trades", idle=1.0)
        assert t["serial"].to_pylist() == [500000, 500010, 99999999, 10001, 10005]
        assert s.stats.duplicates == 1


def wait_until_paused(s: Any) -> None:
    """Until the reader has paused on a full buffer (a bound, not a timing assertion)."""
    import time

    for _ in range(3000):
        if s.stats.paused:
            return
        time.sleep(0.01)
    raise AssertionError("the buffer never filled")


def test_an_exception_with_a_full_buffer_closes_and_records_what_was_buffered(
    client: Client, tmp_path: Any
) -> None:
    from marketframe.stream import read_recorded

    from .conftest import rest_trades

    class Boom(Exception):
        pass

    with pytest.raises(Boom), client.stream(max_buffer=50, batch_rows=20) as s:
        rec = s.record(tmp_path, rows_per_file=1000)
        s.subscribe("trades", "2330")
        wait_until_paused(s)
        raise Boom  # the with block's exit must close the stream, not hang on the reader
    assert rec.files and not list(tmp_path.rglob("*.tmp"))
    got = read_recorded(tmp_path, "trades")["serial"].to_pylist()
    assert len(got) >= 50  # everything that was buffered reached the disk
    assert got == [r["serial"] for r in rest_trades(client, "2330")][: len(got)]


def test_a_request_while_the_buffer_is_full_gets_its_reply(client: Client) -> None:
    with client.stream(max_buffer=50, batch_rows=20, reply_timeout=10) as s:
        s.subscribe("trades", "2330")
        wait_until_paused(s)
        assert [x.symbol for x in s.subscribe("trades", "2454")] == ["2454"]
        assert len(s.subscriptions()) == 2 and "time" in s.ping()


def test_a_drop_while_the_buffer_is_full_heals_the_request() -> None:
    import time

    from marketframe.sandbox import Sandbox

    from .conftest import NOW

    # the sandbox (market clock at 60x) closes each connection after 60 events; the reader
    # pauses at 50 buffered rows, so it has not read the close when the subscribe is sent:
    # the request must be answered after the reconnect, not fail with an aiohttp error
    with (
        Sandbox(
            seed=7, now=NOW, rate_limit=None, stream_speed=60, stream_from="09:00", drop_after=60
        ) as sb,
        Client(sb.api_key, base_url=sb.base_url, cache=False) as c,
        c.stream(max_buffer=50, batch_rows=20, backoff=0.01) as s,
    ):
        s.subscribe("trades", "2330")
        wait_until_paused(s)
        for _ in range(3000):  # until the server has dropped the connection
            if sb.streaming.connections == 0:
                break
            time.sleep(0.01)
        assert sb.streaming.connections == 0 and s.stats.reconnects == 0
        assert [x.symbol for x in s.subscribe("candles", "2454")] == ["2454"]
        assert s.stats.reconnects >= 1
        assert {(x.channel, x.symbol) for x in s.subscriptions()} == {
            ("trades", "2330"),
            ("candles", "2454"),
        }


def rest_kinds(client: Client, symbol: str) -> list[tuple[bool, int]]:
    """(trial?, serial) of every REST trade of the day, regular and trial matches, sorted."""
    import orjson

    return sorted(
        (trial, r["serial"])
        for trial in (False, True)
        for r in orjson.loads(
            client.fetch(
                "stock.intraday.trades",
                symbol=symbol,
                limit=100000,
                refresh=True,
                **({"isTrial": True} if trial else {}),
            )
            .responses[0]
            .body
        )["data"]
    )


def test_a_drop_after_the_days_last_streamed_trade_is_filled_while_rest_serves_the_day(
    client: Client, scripted: ScriptedServer
) -> None:
    # connection 1 sends the day's first regular trade and drops; connection 2 stays quiet
    # (the rest of the day passed during the drop): no trade will close the gap before the
    # next day's open, when REST no longer serves this day, so the reconnected stream fills
    # it up to now after a quiet second
    from .conftest import rest_trades

    want = rest_kinds(client, "2330")
    regular = rest_trades(client, "2330")  # without isTrial: the regular trades
    regular = [r for r in regular if (False, r["serial"]) in set(want)]
    first = regular[0]

    async def hook(conn: Conn, body: dict[str, Any]) -> bool:
        if body.get("event") != "subscribe":
            return False
        await scripted.reply(conn, body)
        if conn.number == 1:
            keep = ("price", "size", "volume", "bid", "ask")
            extra = {k: v for k, v in first.items() if k in keep}
            await conn.send(trade("2330", first["serial"], first["time"], **extra))
            await conn.ws.close(code=1011, message=b"dropped")
        return True

    scripted.on_request = hook
    with client.stream(url=scripted.url, backfill=True, backoff=0.01, backend="arrow") as s:
        s.subscribe("trades", "2330")
        got: list[tuple[bool, int]] = []
        for b in s.batches(idle=3.0):  # before close(): filled by the reconnected stream
            got += zip(b.table["is_trial"].to_pylist(), b.table["serial"].to_pylist(), strict=True)
        gaps = list(s.gaps)
    assert sorted(got) == want
    by_kind = {g.trial: g for g in gaps}
    assert len(gaps) == 2 and all(g.error is None and g.before is None for g in gaps)
    assert by_kind[False].after == first["serial"] and by_kind[False].date == "2026-11-20"
    assert by_kind[False].filled == len(regular) - 1


def test_a_gap_open_across_the_day_change_keeps_the_new_days_trades(make_sandbox: Any) -> None:
    # the drop came after day 1's last trade (the fixed-price trade, or an earlier one) and
    # no trade of day 2 closed it: REST now serves day 2, whose trades belong to the gap too
    import asyncio

    from marketframe.stream import AsyncStream
    from marketframe.stream._ledger import TradeLedger
    from marketframe.stream._protocol import Subscription

    day1_fixed = {"symbol": "2330", "time": us("2026-11-20T14:30:00"), "serial": 99999999}
    day1_mid = {"symbol": "2330", "time": us("2026-11-20T12:00:00"), "serial": 400000}
    with make_sandbox(now="2026-11-23T09:10:00+08:00") as (sb, c):
        day2 = [serial for trial, serial in rest_kinds(c, "2330") if not trial]
        for last, old_error in ((day1_fixed, False), (day1_mid, True)):
            ledger = TradeLedger()
            ledger.accept(last, False)
            ledger.dropped([Subscription("x", "trades", "2330")])
            (gap,) = ledger.close_open()[:1]
            s = AsyncStream(sb.api_key, sb.ws_url, rest=c, backfill=True)
            s._ledger = ledger

            async def fill(s: AsyncStream = s, gap: Any = gap) -> None:
                await s._backfill(gap)

            asyncio.run(fill())
            old, new = [g for g in ledger.gaps if not g.trial]
            assert (old.date, old.after, old.before) == ("2026-11-20", last["serial"], None)
            assert (old.error is not None) == old_error and old.filled == (None if old_error else 0)
            assert (new.date, new.after, new.before, new.error) == ("2026-11-23", None, None, None)
            assert new.filled == len(day2)
            taken = s._buf.take()
            assert taken is not None and [r["serial"] for r in taken[2]] == day2
