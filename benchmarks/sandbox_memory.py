"""The sandbox's memory while WebSocket clients subscribe to everything, or stop reading.

The sandbox runs in its own process (``marketframe sandbox --extra-equities 400``: 421
equities). Two scenarios:

* the attack (default): this process opens one connection and sends the subscribe requests
  an attack sent: every equity on each of the 4 channels (trades, candles, books,
  aggregates), with the odd-lot flag off and on, 8 requests of 421 symbols. Past the cap of
  subscriptions per connection those are refused with an ``error`` event; the connection
  then fills the cap with the largest replays (trades and books) one request at a time, and
  reads everything the replay sends. The bar is a peak under 1 GiB (before the cap and the
  shared replays: ~5 GiB).
* ``--stalled N``: N connections subscribe the ``books`` of the same ``--symbols`` equities
  and never read, for ``--seconds``; then they close. Before them, one REST quote of each of
  those equities warms the market (the days their books replay), so that what the
  connections hold is told apart from the market the REST routes keep anyway. The bars: a
  peak under 1 GiB, and after they close the RSS back within 10 % of the warmed idle
  (the fresh idle is printed too). With ``--stream-speed S`` the streams run on a market
  clock: a client past the send buffer is told (an ``error`` event) and dropped; after the
  run each connection reads what it was sent, and the drops it was told of are counted.

The sandbox's resident memory (RSS, psutil) is sampled throughout.

    python benchmarks/sandbox_memory.py [--seconds 20] [--max-subscriptions 200]
    python benchmarks/sandbox_memory.py --stalled 30 --symbols 200 --seconds 60
    python benchmarks/sandbox_memory.py --stalled 30 --symbols 200 --seconds 60 --stream-speed 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp
import psutil
import requests
import websocket

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import start_sandbox  # noqa: E402

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


class Sampler:
    """The RSS of process ``pid``, sampled every 0.1 s on a thread of its own."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.proc.memory_info().rss)
            self._stop.wait(0.1)

    def stop(self) -> int:
        """The peak."""
        self._stop.set()
        self._thread.join()
        return max(self.samples)


def settled(pid: int, seconds: float = 10.0) -> int:
    """The RSS of ``pid`` once it stops falling (at most ``seconds``): the least sampled."""
    proc = psutil.Process(pid)
    low = proc.memory_info().rss
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.5)
        low = min(low, proc.memory_info().rss)
    return low


def told_and_closed(ws: websocket.WebSocket) -> bool:
    """Read what the sandbox sent ``ws``: whether it ends with the ``error`` event and the
    close of a dropped client (False: still open, nothing more to read for 5 s)."""
    ws.settimeout(5)
    told = False
    try:
        while True:
            op, data = ws.recv_data(control_frame=True)
            if op == websocket.ABNF.OPCODE_CLOSE:
                return told
            if op == websocket.ABNF.OPCODE_TEXT and data.startswith(b'{"event":"error"'):
                told = "Slow consumer" in json.loads(data)["data"]["message"]
    except (websocket.WebSocketTimeoutException, TimeoutError):
        return False
    except (websocket.WebSocketConnectionClosedException, ConnectionError):
        return told


def stalled(a: argparse.Namespace, symbols: list[str]) -> int:
    """``--stalled N``: N connections subscribe ``books`` and never read, then close."""
    options = ["--extra-equities", "400", "--rate-limit", "0", "--now", "2026-11-20T13:30:00+08:00"]
    proc, base_url, ws_url = start_sandbox(*options, "--stream-speed", str(a.stream_speed))
    pid = proc.pid
    chosen = symbols[: a.symbols]
    try:
        time.sleep(1.0)
        fresh = settled(pid, 2.0)
        with requests.Session() as http:  # the market of those symbols' day, as REST keeps it
            http.headers["X-API-KEY"] = "sandbox-advanced"
            for sym in chosen:
                http.get(f"{base_url}/stock/intraday/quote/{sym}", timeout=60).raise_for_status()
        idle = settled(pid, 3.0)
        sampler = Sampler(pid)
        t0 = time.monotonic()
        conns = []
        for _ in range(a.stalled):
            # a small receive buffer: what waits for the client is the sandbox's, not the OS's
            ws = websocket.create_connection(
                ws_url, sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 18),)
            )
            ws.send(json.dumps({"event": "auth", "data": {"apikey": "sandbox-advanced"}}))
            data = {"channel": "books", "symbols": chosen}
            ws.send(json.dumps({"event": "subscribe", "data": data}))
            conns.append(ws)
        time.sleep(max(0.0, a.seconds - (time.monotonic() - t0)))
        during = sampler.samples[-1]
        peak = sampler.stop()
        dropped = sum(told_and_closed(ws) for ws in conns) if a.stream_speed else 0
        for ws in conns:
            ws.close(timeout=1)
        after = settled(pid, 10.0)
    finally:
        proc.terminate()
        proc.wait(30)
    mode = f"market clock {a.stream_speed:g}x" if a.stream_speed else "as fast as each reads"
    print(
        f"{a.stalled} stalled connections x {len(chosen)} symbols' books for {a.seconds:.0f} s "
        f"({mode})"
    )
    print(
        f"sandbox RSS: fresh idle {fresh / 2**20:.0f} MiB, warmed idle {idle / 2**20:.0f} MiB, "
        f"peak {peak / 2**20:.0f} MiB, at the end {during / 2**20:.0f} MiB, "
        f"after they closed {after / 2**20:.0f} MiB"
    )
    if a.stream_speed:
        print(f"told and dropped: {dropped} of {a.stalled}")
    back = after / idle - 1
    ok = peak < LIMIT and back <= 0.10
    print(
        f"{'OK' if ok else 'MISSED'}: peak {'<' if peak < LIMIT else '>='} 1 GiB; after closing "
        f"{back:+.1%} of the warmed idle ({after / fresh - 1:+.1%} of the fresh idle), "
        "target <= +10%"
    )
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="reading time after subscribing")
    ap.add_argument("--max-subscriptions", type=int, default=200)
    ap.add_argument("--stalled", type=int, default=0, help="N stalled books consumers instead")
    ap.add_argument("--symbols", type=int, default=200, help="equities of each stalled consumer")
    ap.add_argument(
        "--stream-speed", type=float, default=0.0, help="the sandbox's market clock (stalled)"
    )
    a = ap.parse_args()
    from marketframe.sandbox._universe import Universe, synthetic_equity

    base = [i.symbol for i in Universe().instruments.values() if i.type == "EQUITY"]
    symbols = base + [synthetic_equity(i).symbol for i in range(1, 401)]
    if a.stalled:
        return stalled(a, symbols)
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
