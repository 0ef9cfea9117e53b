"""Trade messages per second ingested into Arrow batches, from a sandbox in another process.

The sandbox runs in its own process (``marketframe sandbox``, as a user would run it) with
``--extra-equities`` synthetic stocks; one WebSocket subscribes the ``trades`` channel of all
of them and the sandbox replays their day as fast as it can over loopback. Three clients read
the same messages, each on a fresh connection:

* raw: an aiohttp WebSocket that only counts frames (the ceiling set by the server and the
  socket);
* marketframe: ``client.stream(async_=True)``; every message becomes a row of a typed Arrow
  batch (``next_batch``), with serial de-duplication and the REST trades' types;
* baseline: the official SDK's way: a callback per message that ``json.loads`` it and appends
  the ``data`` dict to a list, turned into a pandas DataFrame at the end (same aiohttp socket,
  so the ratio measures the client-side work only).

A warm-up connection first makes the sandbox build its replay of every symbol. Each run ends
when all the warm-up's messages arrived. On loopback the sandbox itself is the ceiling (raw
line), so the client-process CPU time per message is printed too: it is the client-side cost
whatever the server's speed.

    python benchmarks/stream.py [--symbols 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import start_sandbox  # noqa: E402

from marketframe import Client  # noqa: E402

KEY = "sandbox-advanced"
TARGET = 50_000
IDLE = 1.0


async def raw_session(
    ws_url: str, syms: list[str], on_message: Callable[[str], bool], expected: int | None
) -> float:
    """Seconds from subscribe to the last data message. ``on_message`` returns True for a
    data message; the session ends after ``expected`` of them (``None``: after IDLE s of
    silence, for the warm-up)."""
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url, max_msg_size=0) as ws:
        await ws.send_str(json.dumps({"event": "auth", "data": {"apikey": KEY}}))
        await ws.receive()
        t0 = time.perf_counter()
        await ws.send_str(
            json.dumps({"event": "subscribe", "data": {"channel": "trades", "symbols": syms}})
        )
        n = 0
        last = t0
        while expected is None or n < expected:
            if expected is None:
                try:
                    msg = await ws.receive(timeout=IDLE if n else 120)
                except TimeoutError:
                    break
            else:
                msg = await ws.receive()
            n += on_message(msg.data)
            last = time.perf_counter()
        return last - t0


async def raw(ws_url: str, syms: list[str], expected: int | None = None) -> tuple[int, float]:
    n = 0

    def count(text: str) -> bool:
        nonlocal n
        data = text.startswith('{"event":"data"')  # the sandbox's frames start so
        n += data
        return data

    secs = await raw_session(ws_url, syms, count, expected)
    return n, secs


async def baseline(ws_url: str, syms: list[str], expected: int) -> tuple[int, float]:
    import pandas as pd

    rows: list[dict] = []

    def callback(text: str) -> bool:
        msg = json.loads(text)
        if msg.get("event") == "data":
            rows.append(msg["data"])
            return True
        return False

    secs = await raw_session(ws_url, syms, callback, expected)
    t = time.perf_counter()
    df = pd.DataFrame(rows)
    return len(df), secs + time.perf_counter() - t


async def marketframe(base_url: str, syms: list[str], expected: int) -> tuple[int, float]:
    client = Client(KEY, base_url=base_url, cache=False)
    async with client.stream(async_=True) as s:
        t0 = time.perf_counter()
        await s.subscribe("trades", syms)
        n = 0
        while n < expected:
            batch = await s.next_batch(timeout=120)
            if batch is None:
                break
            n += batch.num_rows  # a typed pyarrow table of the REST trades' columns
        secs = time.perf_counter() - t0
    client.close()
    return n, secs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--symbols", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    proc, base_url, ws_url = start_sandbox(
        "--rate-limit",
        "0",
        "--now",
        "2026-11-20T14:45:00+08:00",
        "--extra-equities",
        str(args.symbols),
    )
    syms = [f"9{i:03d}" if i < 1000 else f"9{i:04d}" for i in range(1, args.symbols + 1)]
    rates: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}  # client-process CPU microseconds per message
    try:
        n_warm, secs = asyncio.run(raw(ws_url, syms))
        print(
            f"warm-up: {n_warm:,} trade messages of {len(syms)} symbols "
            f"(the sandbox built its replay)"
        )
        runs: list[tuple[str, Callable[[], Awaitable[tuple[int, float]]]]] = [
            ("raw frames (count only)", lambda: raw(ws_url, syms, n_warm)),
            ("marketframe -> Arrow batches", lambda: marketframe(base_url, syms, n_warm)),
            ("baseline json.loads + DataFrame", lambda: baseline(ws_url, syms, n_warm)),
        ]
        for _ in range(args.rounds):
            for name, run in runs:
                cpu = time.process_time()
                n, secs = asyncio.run(run())
                cpu = time.process_time() - cpu
                if n != n_warm:
                    raise SystemExit(f"{name}: {n} messages, expected {n_warm}")
                rates.setdefault(name, []).append(n / secs)
                cpus.setdefault(name, []).append(cpu / n * 1e6)
    finally:
        proc.terminate()
        proc.wait(10)
    for name, rs in rates.items():
        print(
            f"{name:<34} median {statistics.median(rs):>9,.0f} msg/s  "
            f"client CPU {statistics.median(cpus[name]):5.2f} us/msg  "
            f"(runs: {', '.join(f'{r:,.0f}' for r in rs)})"
        )
    ours = statistics.median(rates["marketframe -> Arrow batches"])
    base = statistics.median(rates["baseline json.loads + DataFrame"])
    ceiling = statistics.median(rates["raw frames (count only)"])
    print(
        json.dumps(
            {
                "messages_per_round": n_warm,
                "marketframe_msgs_per_s": round(ours),
                "baseline_msgs_per_s": round(base),
                "raw_msgs_per_s": round(ceiling),
                "ratio_to_baseline": round(ours / base, 2),
                "ratio_to_raw": round(ours / ceiling, 2),
                "client_cpu_us_per_msg": {
                    k: round(statistics.median(v), 2) for k, v in cpus.items()
                },
                "ratio_to_target_50000": round(ours / TARGET, 2),
                "target_met": ours >= TARGET,
            }
        )
    )
    return 0 if ours >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
