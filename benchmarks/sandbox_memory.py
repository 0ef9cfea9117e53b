"""The sandbox's memory while one WebSocket connection subscribes to everything.

The sandbox runs in its own process (``marketframe sandbox --extra-equities 400``: 421
equities); this process opens one connection and sends the subscribe requests an attack
sent: every equity on each of the 4 channels (trades, candles, books, aggregates), with the
odd-lot flag off and on, 8 requests of 421 symbols. Past the cap of subscriptions per
connection those are refused with an ``error`` event; the connection then fills the cap with
the largest replays (trades and books) one request at a time, and reads everything the
replay sends. The sandbox's resident memory (RSS, psutil) is sampled throughout; the bar is
a peak under 1 GiB (before the cap and the shared replays: ~5 GiB).

    python benchmarks/sandbox_memory.py [--seconds 20] [--max-subscriptions 200]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import time

import aiohttp
import psutil

CHANNELS = ("trades", "candles", "books", "aggregates")
LIMIT = 1 << 30


def start(max_subs: int) -> tuple[subprocess.Popen[str], str]:
    cmd = [
        sys.executable,
        "-m",
        "marketframe",
        "sandbox",
        "--port",
        "0",
        "--extra-equities",
        "400",
        "--rate-limit",
        "0",
        "--now",
        "2026-11-20T13:30:00+08:00",
        "--max-subscriptions",
        str(max_subs),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"streaming\s+(ws://\S+)", line)
        if m:
            return proc, m.group(1)
    raise RuntimeError("the sandbox did not start")


async def load(ws_url: str, symbols: list[str], seconds: float, sample: list[int], pid: int):
    proc = psutil.Process(pid)
    stats = {"refused": 0, "subscribed": 0, "data": 0, "errors": []}

    async def sampler() -> None:
        while True:
            sample.append(proc.memory_info().rss)
            await asyncio.sleep(0.1)

    tick = asyncio.ensure_future(sampler())
    try:
        async with aiohttp.ClientSession() as s, s.ws_connect(ws_url, max_msg_size=0) as ws:
            await ws.send_json({"event": "auth", "data": {"apikey": "sandbox-advanced"}})
            assert (await ws.receive_json(timeout=30))["event"] == "authenticated"

            async def reply() -> dict:
                while True:
                    body = await ws.receive_json(timeout=120)
                    if body["event"] == "data":
                        stats["data"] += 1
                    elif body["event"] in ("subscribed", "error"):
                        return body

            # the attack: everything, in 8 requests
            for oddlot in (False, True):
                for ch in CHANNELS:
                    data = {"channel": ch, "symbols": symbols, "intradayOddLot": oddlot}
                    await ws.send_json({"event": "subscribe", "data": data})
                    body = await reply()
                    if body["event"] == "error":
                        stats["refused"] += 1
                        stats["errors"].append(body["data"])
                    else:
                        stats["subscribed"] += len(body["data"])
            # then as much as the cap allows, the largest replays first
            for sym in symbols:
                for ch in ("trades", "books"):
                    data = {"channel": ch, "symbol": sym}
                    await ws.send_json({"event": "subscribe", "data": data})
                    body = await reply()
                    if body["event"] == "error":
                        break
                    stats["subscribed"] += 1
                else:
                    continue
                break
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    msg = await ws.receive(timeout=1.0)
                except TimeoutError:
                    continue
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                stats["data"] += msg.data.startswith('{"event":"data"')
    finally:
        tick.cancel()
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="reading time after subscribing")
    ap.add_argument("--max-subscriptions", type=int, default=200)
    a = ap.parse_args()
    from marketframe.sandbox._universe import Universe, synthetic_equity

    base = [i.symbol for i in Universe().instruments.values() if i.type == "EQUITY"]
    symbols = base + [synthetic_equity(i).symbol for i in range(1, 401)]
    proc, ws_url = start(a.max_subscriptions)
    sample: list[int] = []
    try:
        idle = psutil.Process(proc.pid).memory_info().rss
        t0 = time.monotonic()
        stats = asyncio.run(load(ws_url, symbols, a.seconds, sample, proc.pid))
        took = time.monotonic() - t0
    finally:
        proc.terminate()
        proc.wait(30)
    peak = max(sample) if sample else 0
    print(f"symbols: {len(symbols)} equities x {len(CHANNELS)} channels x odd-lot off/on")
    print(
        f"refused requests: {stats['refused']} of 8; subscriptions held: {stats['subscribed']} "
        f"(cap {a.max_subscriptions}); data events read: {stats['data']} in {took:.0f} s"
    )
    if stats["errors"]:
        print(f"error event: {stats['errors'][0]}")
    print(f"sandbox RSS: idle {idle / 2**20:.0f} MiB, peak {peak / 2**20:.0f} MiB")
    ok = peak < LIMIT
    print(f"{'OK' if ok else 'OVER'}: peak {'<' if ok else '>='} 1 GiB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
