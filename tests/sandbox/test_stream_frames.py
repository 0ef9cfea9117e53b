"""The sandbox writes a connection's data frames together (one socket write for the frames
between two awaits): each still arrives as a whole message, in market-time order, a
compressed connection gets the same events, and replies are never reordered with them."""

from __future__ import annotations

import asyncio

import aiohttp

from marketframe.sandbox import Sandbox

NOW = "2026-11-20T14:45:00+08:00"
SYMBOLS = ["2330", "2317", "9001"]


async def _auth(ws: aiohttp.ClientWebSocketResponse) -> None:
    await ws.send_json({"event": "auth", "data": {"apikey": "sandbox-advanced"}})
    assert (await ws.receive_json(timeout=30))["event"] == "authenticated"


async def _events(box: Sandbox, compress: int, expected: int) -> tuple[int, list[dict]]:
    """The negotiated compression and the first ``expected`` data events of the trades of
    SYMBOLS on a new connection."""
    async with (
        aiohttp.ClientSession() as s,
        s.ws_connect(box.ws_url, compress=compress, max_msg_size=0) as ws,
    ):
        await _auth(ws)
        await ws.send_json(
            {"event": "subscribe", "data": {"channel": "trades", "symbols": SYMBOLS}}
        )
        got = []
        while len(got) < expected:
            body = await ws.receive_json(timeout=30)
            if body["event"] == "data":
                got.append(body)
        return ws.compress, got


def test_frames_written_together_arrive_whole_and_equal_to_compressed_ones() -> None:
    with Sandbox(seed=5, now=NOW, rate_limit=None, extra_equities=1) as box:
        expected = sum(len(box.streaming.events("trades", s, False)) for s in SYMBOLS)

        async def both() -> list[tuple[int, list[dict]]]:
            return await asyncio.gather(_events(box, 0, expected), _events(box, 15, expected))

        plain, deflate = asyncio.run(both())
    assert plain[0] == 0 and deflate[0] == 15  # the second connection negotiated deflate
    assert expected > 5000  # 2330 alone trades thousands of times: many frames per write
    assert plain[1] == deflate[1]
    assert {e["channel"] for e in plain[1]} == {"trades"}
    assert {e["data"]["symbol"] for e in plain[1]} == set(SYMBOLS)
    times = [e["data"]["time"] for e in plain[1]]
    assert times == sorted(times)


def test_replies_are_not_reordered_with_the_frames_written_together() -> None:
    """Data follows its ``subscribed`` reply, and none of a subscription follows its
    ``unsubscribed`` reply, though the replies go out amid frames written in batches."""
    with Sandbox(seed=5, now=NOW, rate_limit=None) as box:

        async def script() -> list[dict]:
            async with aiohttp.ClientSession() as s, s.ws_connect(box.ws_url) as ws:
                await _auth(ws)
                req = {"channel": "trades", "symbols": ["2330", "2317"]}
                await ws.send_json({"event": "subscribe", "data": req})
                seen: list[dict] = []
                while sum(m["event"] == "data" for m in seen) < 50:
                    seen.append(await ws.receive_json(timeout=30))
                gone = next(m["data"][1]["id"] for m in seen if m["event"] == "subscribed")
                await ws.send_json({"event": "unsubscribe", "data": {"id": gone}})
                while seen[-1]["event"] != "unsubscribed":
                    seen.append(await ws.receive_json(timeout=30))
                # the rest of the day of 2330 (a pause of 2 s ends it)
                while True:
                    try:
                        seen.append(await ws.receive_json(timeout=2))
                    except TimeoutError:
                        return seen

        seen = asyncio.run(script())
    kinds = [m["event"] for m in seen]
    gone = seen[kinds.index("subscribed")]["data"][1]["id"]
    data = [i for i, k in enumerate(kinds) if k == "data"]
    assert data and data[0] > kinds.index("subscribed")
    of_gone = [i for i in data if seen[i]["id"] == gone]
    assert of_gone and of_gone[-1] < kinds.index("unsubscribed")
    assert {seen[i]["data"]["symbol"] for i in data if i > kinds.index("unsubscribed")} <= {"2330"}
