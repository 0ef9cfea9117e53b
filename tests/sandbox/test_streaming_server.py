"""The sandbox's WebSocket endpoint, driven by a plain aiohttp WebSocket client over loopback."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
import requests

from marketframe.sandbox import Sandbox

NOW = "2026-11-20T14:45:00+08:00"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(seed=7, now=NOW, rate_limit=None) as s:
        yield s


def rest(sb, path: str, **params):
    return requests.get(
        f"{sb.base_url}/{path}", params=params, headers={"X-API-KEY": sb.api_key}, timeout=30
    ).json()


async def session(sb, script):
    async with aiohttp.ClientSession() as s, s.ws_connect(sb.ws_url) as ws:
        return await script(ws)


async def auth(ws, key="sandbox-advanced"):
    await ws.send_json({"event": "auth", "data": {"apikey": key}})
    return await ws.receive_json(timeout=5)


async def drain(ws, idle=0.5, want=None, total=20.0):
    """Collect messages until none arrives for `idle` seconds, `want` data events arrived,
    or `total` seconds passed."""
    out = []
    end = asyncio.get_running_loop().time() + total
    while asyncio.get_running_loop().time() < end:
        try:
            msg = await ws.receive(timeout=idle)
        except TimeoutError:
            return out
        if msg.type != aiohttp.WSMsgType.TEXT:
            return out
        body = msg.json()
        out.append(body)
        if want and sum(m["event"] == "data" for m in out) >= want:
            return out
    return out


async def until(ws, event: str, timeout: float = 5):
    """The next message of kind `event`, skipping data events and heartbeats (each within
    ``timeout`` seconds)."""
    while True:
        body = await ws.receive_json(timeout=timeout)
        if body["event"] == event or body["event"] == "error":
            return body


def run(coro):
    return asyncio.run(coro)


def test_auth_ping_and_heartbeat(sb) -> None:
    sb.configure(heartbeat=0.2)

    async def script(ws):
        first = await auth(ws)
        await ws.send_json({"event": "ping", "data": {"state": "abc"}})
        pong = await ws.receive_json(timeout=5)
        await ws.send_json({"event": "ping"})
        pong2 = await ws.receive_json(timeout=5)
        beats = [m for m in await drain(ws, idle=0.5, total=1.0) if m["event"] == "heartbeat"]
        return first, pong, pong2, beats

    try:
        first, pong, pong2, beats = run(session(sb, script))
    finally:
        sb.configure(heartbeat=30.0)
    assert first == {"event": "authenticated", "data": {"message": "Authenticated successfully"}}
    assert pong["event"] == "pong" and pong["data"]["state"] == "abc"
    assert isinstance(pong["data"]["time"], int)
    assert "state" not in pong2["data"]
    assert beats and all(m["data"]["time"].isdigit() for m in beats)


def test_bad_key_and_subscribing_before_auth(sb) -> None:
    async def script(ws):
        await ws.send_json({"event": "subscribe", "data": {"channel": "trades", "symbol": "2330"}})
        early = await ws.receive_json(timeout=5)
        bad = await auth(ws, "nope")
        return early, bad

    early, bad = run(session(sb, script))
    assert early["event"] == "error" and "auth" in early["data"]["message"]
    # the real frame (ws_control_messages.json, auth_failed): nothing beside event and data
    assert bad == {"event": "error", "data": {"message": "Invalid authentication credentials"}}


def test_subscriptions_lifecycle_and_errors(sb) -> None:
    async def script(ws):
        await auth(ws)
        out = {}
        await ws.send_json(
            {"event": "subscribe", "data": {"channel": "books", "symbols": ["3293", "6446"]}}
        )
        out["many"] = await until(ws, "subscribed")
        await ws.send_json({"event": "subscribe", "data": {"channel": "candles", "symbol": "2317"}})
        out["one"] = await until(ws, "subscribed")
        await ws.send_json({"event": "subscribe", "data": {"channel": "quotes", "symbol": "2317"}})
        out["bad_channel"] = await drain(ws, 0.3)
        await ws.send_json({"event": "subscribe", "data": {"channel": "trades", "symbol": "0000"}})
        out["bad_symbol"] = await drain(ws, 0.3)
        await ws.send_json({"event": "subscriptions"})
        msgs = await drain(ws, 0.3)
        out["list"] = next(m for m in msgs if m["event"] == "subscriptions")
        ids = [d["id"] for d in out["many"]["data"]]
        await ws.send_json({"event": "unsubscribe", "data": {"ids": ids}})
        await ws.send_json({"event": "unsubscribe", "data": {"id": out["one"]["data"]["id"]}})
        msgs = await drain(ws, 0.3)
        out["unsub"] = [m for m in msgs if m["event"] == "unsubscribed"]
        await ws.send_json({"event": "subscriptions"})
        out["after"] = next(m for m in await drain(ws, 0.3) if m["event"] == "subscriptions")
        return out

    out = run(session(sb, script))
    assert [d["symbol"] for d in out["many"]["data"]] == ["3293", "6446"]
    assert out["one"]["data"]["channel"] == "candles" and out["one"]["data"]["symbol"] == "2317"
    assert any(
        m["event"] == "error"
        and "trades, candles, books, aggregates, indices" in m["data"]["message"]
        for m in out["bad_channel"]
    )
    assert any(m["event"] == "error" and "0000" in m["data"]["message"] for m in out["bad_symbol"])
    assert len(out["list"]["data"]) == 3
    assert out["unsub"][0]["data"] == [{"id": i} for i in [d["id"] for d in out["many"]["data"]]]
    assert out["unsub"][1]["data"] == {"id": out["one"]["data"]["id"]}
    assert out["after"]["data"] == []


def expected_events(sb, channel: str, symbol: str, oddlot: bool = False) -> int:
    """How many data events a fast replay of the (closed) day sends, counted from REST:
    a trade and a candle update per trade; a book per trade and the books' updates between
    trades (the sandbox makes two per trade); a quote per distinct trade or trial time."""
    extra = {"type": "oddlot"} if oddlot else {}
    regular = rest(sb, f"stock/intraday/trades/{symbol}", limit=100000, **extra)["data"]
    trials = rest(sb, f"stock/intraday/trades/{symbol}", isTrial="true", limit=100000, **extra)[
        "data"
    ]
    fixed = [t for t in regular if t["serial"] == 99999999]  # not a candle, book or quote
    if channel == "trades":
        return len(regular) + len(trials)
    if channel == "candles":
        return len(regular) - len(fixed)
    if channel == "books":
        return 3 * (len(regular) - len(fixed))
    return len({t["time"] for t in regular if t not in fixed} | {t["time"] for t in trials})


def collect(sb, channel: str, symbol: str, oddlot: bool = False, want: int | None = None):
    """The data events of a subscription, until ``want`` of them (default: as many as the
    replay holds, counted from REST) arrived. Completion is decided by the count, never by a
    quiet period: building a channel's events may take long on a busy machine."""
    if want is None:
        want = expected_events(sb, channel, symbol, oddlot)

    async def script(ws):
        await auth(ws)
        data = {"channel": channel, "symbol": symbol}
        if oddlot:
            data["intradayOddLot"] = True
        await ws.send_json({"event": "subscribe", "data": data})
        msgs = await drain(ws, idle=60.0, want=want, total=300.0)
        return [m for m in msgs if m["event"] == "data"]

    events = run(session(sb, script))
    assert len(events) == want, (channel, symbol)
    return events


def test_streamed_trades_are_the_rest_trades(sb) -> None:
    events = collect(sb, "trades", "2330")
    assert all(e["channel"] == "trades" and e["id"] for e in events)
    streamed = [e["data"] for e in events if not e["data"].get("isTrial")]
    rest_rows = rest(sb, "stock/intraday/trades/2330", sort="asc", limit=100000)["data"]
    keys = ("price", "size", "time", "serial")
    assert [tuple(r.get(k) for k in keys) for r in streamed] == [
        tuple(r.get(k) for k in keys) for r in rest_rows
    ]
    assert [r.get("volume") for r in streamed] == [r.get("volume") for r in rest_rows]
    trials = [e["data"] for e in events if e["data"].get("isTrial")]
    rest_trials = rest(sb, "stock/intraday/trades/2330", isTrial="true", sort="asc", limit=1000)[
        "data"
    ]
    assert [t["serial"] for t in trials] == [t["serial"] for t in rest_trials]
    assert [e["data"]["time"] for e in events] == sorted(e["data"]["time"] for e in events)
    assert streamed[0].get("isOpen") and streamed[-2].get("isClose")


def test_candles_books_aggregates_and_indices_agree_with_rest(sb) -> None:
    candles = collect(sb, "candles", "2454")
    last_per_minute = {}
    for e in candles:
        last_per_minute[e["data"]["date"]] = e["data"]
    rest_c = rest(sb, "stock/intraday/candles/2454")["data"]
    assert [
        last_per_minute[c["date"]][k]
        for c in rest_c
        for k in ("open", "high", "low", "close", "volume", "average")
    ] == [c[k] for c in rest_c for k in ("open", "high", "low", "close", "volume", "average")]
    books = collect(sb, "books", "2454")
    assert books and all(1 <= len(b["data"]["bids"]) <= 5 for b in books)
    # the books move between trades too, in time order, and end as the closing quote's
    traded = {t["time"] for t in rest(sb, "stock/intraday/trades/2454", limit=100000)["data"]}
    times = [b["data"]["time"] for b in books]
    assert times == sorted(times)
    between = [b for b in books if b["data"]["time"] not in traded]
    assert len(between) > len(books) // 2
    assert len({(str(b["data"]["bids"]), str(b["data"]["asks"])) for b in between}) > 1
    closing = rest(sb, "stock/intraday/quote/2454")
    assert (books[-1]["data"]["bids"], books[-1]["data"]["asks"]) == (
        closing["bids"],
        closing["asks"],
    )
    aggs = collect(sb, "aggregates", "0050")
    q = rest(sb, "stock/intraday/quote/0050")
    assert aggs[-1]["data"] == q
    idx = collect(sb, "indices", "IX0001", want=3240)
    assert len(idx) == 3240 and set(idx[0]["data"]) == {
        "symbol",
        "type",
        "exchange",
        "index",
        "time",
    }
    assert idx[-1]["data"]["index"] == rest(sb, "stock/intraday/quote/IX0001")["closePrice"]
    odd = [e["data"] for e in collect(sb, "trades", "2330", oddlot=True)]
    assert (
        sum(r["size"] for r in odd)
        == rest(sb, "stock/intraday/quote/2330", type="oddlot")["total"]["tradeVolume"]
    )


def test_the_rest_quote_at_any_moment_shows_the_last_streamed_book(sb) -> None:
    """The quote's bids and asks at a moment of the session are the last `books` event's by
    then, between trades too: one book per update, whichever route asks for it."""
    books = [e["data"] for e in collect(sb, "books", "2454")]
    traded = {t["time"] for t in rest(sb, "stock/intraday/trades/2454", limit=100000)["data"]}
    picks = books[:: len(books) // 15]
    assert any(b["time"] not in traded for b in picks) and any(b["time"] in traded for b in picks)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    try:
        for pick in picks:
            sb.set_now(epoch + timedelta(microseconds=pick["time"]))
            q = rest(sb, "stock/intraday/quote/2454")
            last = [b for b in books if b["time"] <= pick["time"]][-1]
            assert (q["bids"], q["asks"]) == (last["bids"], last["asks"]), pick["time"]
    finally:
        sb.set_now(NOW)


def test_drop_after_and_max_connections() -> None:
    with Sandbox(seed=7, now=NOW, drop_after=25) as sb:

        async def script(ws):
            await auth(ws)
            await ws.send_json(
                {"event": "subscribe", "data": {"channel": "trades", "symbol": "2330"}}
            )
            # until the server's close (a busy machine may pause the replay for seconds)
            msgs = await drain(ws, idle=30.0, total=60.0)
            return msgs, ws.close_code

        msgs, code = run(session(sb, script))
        assert sum(m["event"] == "data" for m in msgs) == 25 and code == 1011
    with Sandbox(seed=7, now=NOW, max_connections=1) as sb:

        async def two():
            async with aiohttp.ClientSession() as s:
                async with s.ws_connect(sb.ws_url) as first:
                    await auth(first)
                    async with s.ws_connect(sb.ws_url) as second:
                        return await second.receive_json(timeout=5)

        refused = run(two())
        assert refused == {
            "event": "error",
            "data": {"code": 1001, "message": "Maximum number of connections reached"},
        }


def test_a_shared_market_clock_leaves_a_gap_after_a_reconnect() -> None:
    with Sandbox(seed=7, now=NOW, stream_speed=600.0, stream_from="09:00", drop_after=40) as sb:

        async def once(ws):
            await auth(ws)
            await ws.send_json(
                {"event": "subscribe", "data": {"channel": "trades", "symbol": "2330"}}
            )
            msgs = await drain(ws, idle=2.0)
            return [m["data"]["serial"] for m in msgs if m["event"] == "data"]

        first = run(session(sb, once))
        time.sleep(0.5)  # 300 s of market time pass while disconnected
        second = run(session(sb, once))
        trades = rest(sb, "stock/intraday/trades/2330", sort="asc", limit=100000)["data"]
        serials = [t["serial"] for t in trades]
        assert len(first) == len(second) == 40
        assert serials.index(second[0]) > serials.index(first[-1]) + 1  # trades were missed
        assert first == serials[serials.index(first[0]) : serials.index(first[0]) + 40]


def test_the_stream_never_runs_ahead_of_the_sandbox_clock() -> None:
    with Sandbox(seed=7, now="2026-11-20T10:15:00+08:00") as sb:
        rest_rows = rest(sb, "stock/intraday/trades/2330", sort="asc", limit=100000)["data"]
        last = rest_rows[-1]["serial"]  # the last trade up to the sandbox's clock

        async def script(ws):
            await auth(ws)
            await ws.send_json(
                {"event": "subscribe", "data": {"channel": "trades", "symbol": "2330"}}
            )
            # every trade up to the clock (however long a busy machine takes to build and
            # send them; 60 s only bounds a hang), then anything that would come after it
            msgs = [await ws.receive_json(timeout=60)]
            while not (
                msgs[-1]["event"] == "data"
                and msgs[-1]["data"]["serial"] == last
                and not msgs[-1]["data"].get("isTrial")
            ):
                msgs.append(await ws.receive_json(timeout=60))
            msgs += await drain(ws, idle=1.5)
            return [m["data"] for m in msgs if m["event"] == "data"]

        events = run(session(sb, script))
        limit = datetime.fromisoformat("2026-11-20T10:15:00+08:00").timestamp() * 1e6
        assert events and all(e["time"] <= limit for e in events)
        regular = [e["serial"] for e in events if not e.get("isTrial")]
        assert regular == [r["serial"] for r in rest_rows]


#: requests the server cannot read: each gets an error event, the connection stays open
BAD_REQUESTS = [
    {"event": "subscribe", "data": "trades"},
    {"event": "subscribe", "data": [1, 2]},
    {"event": "subscribe", "data": {"channel": "trades", "symbols": 5}},
    {"event": "subscribe", "data": {"channel": "trades", "symbols": ["2330", 5]}},
    {"event": "subscribe", "data": {"channel": "trades", "symbols": [["2330"]]}},
    {"event": "subscribe", "data": {"channel": "trades", "symbols": []}},
    {"event": "subscribe", "data": {"channel": "trades", "symbol": {"a": 1}}},
    {"event": "subscribe", "data": {"channel": ["trades"], "symbol": "2330"}},
    {"event": "unsubscribe", "data": {"ids": [[1]]}},
    {"event": "unsubscribe", "data": {"ids": "abc"}},
    {"event": "unsubscribe", "data": {"id": {"x": 1}}},
    {"event": "ping", "data": "x"},
    {"event": 5},
    {"data": {}},
    [1, 2],
    "not json",
]


def test_unreadable_requests_get_an_error_event_and_the_connection_stays(sb, caplog) -> None:
    import json
    import logging

    async def script(ws):
        await auth(ws)
        answers = []
        for req in BAD_REQUESTS:
            await ws.send_str(req if isinstance(req, str) else json.dumps(req))
            answers.append(await ws.receive_json(timeout=10))
        await ws.send_json({"event": "ping", "data": {"state": "still here"}})
        return answers, await ws.receive_json(timeout=10)

    with caplog.at_level(logging.ERROR):
        answers, pong = run(session(sb, script))
    assert [a["event"] for a in answers] == ["error"] * len(BAD_REQUESTS)
    assert all(isinstance(a["data"]["message"], str) for a in answers)
    assert pong == {"event": "pong", "data": {"time": pong["data"]["time"], "state": "still here"}}
    assert not [r for r in caplog.records if r.exc_info], caplog.text


def test_a_drop_while_a_request_is_answered_leaves_no_traceback(caplog) -> None:
    import logging

    # the sandbox drops the connection (drop_after) while it builds the events of a second
    # subscribe; its reply then meets a closing transport (the notebook's traceback)
    with Sandbox(seed=7, now=NOW, drop_after=5) as box, caplog.at_level(logging.ERROR):

        async def script(ws):
            await auth(ws)
            await ws.send_json(
                {"event": "subscribe", "data": {"channel": "trades", "symbol": "2330"}}
            )
            await ws.send_json(
                {
                    "event": "subscribe",
                    "data": {"channel": "books", "symbols": ["2454", "2317", "0050", "2603"]},
                }
            )
            return await drain(ws, idle=10.0)

        run(session(box, script))
        for _ in range(3000):  # until the server finished with the connection
            if box.streaming.connections == 0:
                break
            time.sleep(0.01)
        assert box.streaming.connections == 0
        rest(box, "stock/intraday/quote/2330")  # the server's loop went past the handler
    assert not [r for r in caplog.records if r.exc_info], caplog.text


@pytest.mark.slow
def test_subscribers_arriving_together_share_one_build_per_channel_and_symbol() -> None:
    """100 clients subscribing to everything at once used to build each (channel, symbol,
    day) replay once per client, on the server's threads: REST stalled for seconds and the
    memory grew. Concurrent subscribers now wait for the one build in progress."""
    symbols = ["2330", "2317", "2454", "0050", "2603"]
    channels = ("trades", "books", "candles", "aggregates")
    with Sandbox(seed=3, now=NOW, rate_limit=None) as box:

        async def one(s: aiohttp.ClientSession) -> set[str]:
            async with s.ws_connect(box.ws_url) as ws:
                await auth(ws)
                for ch in channels:
                    await ws.send_json(
                        {"event": "subscribe", "data": {"channel": ch, "symbols": symbols}}
                    )
                ids = set()
                while len(ids) < len(channels) * len(symbols):
                    # a subscribe is answered once its replays are built: the books of 2330
                    # take 4 s of CPU, longer on a busy machine, and the trades subscribed
                    # first may all be sent by then (a quiet connection, not a stuck one)
                    body = await until(ws, "subscribed", timeout=120)
                    assert body["event"] == "subscribed", body
                    ids |= {r["id"] for r in body["data"]}
                return ids

        async def many() -> list[set[str]]:
            async with aiohttp.ClientSession() as s:
                return await asyncio.gather(*[one(s) for _ in range(20)])

        got = run(many())
        assert all(ids == got[0] for ids in got)
        assert box.streaming.builds == len(channels) * len(symbols)
