"""How many small REST responses per second the sandbox serves on loopback.

The sandbox runs in its own process (as `marketframe sandbox`), the load comes from this one:
an aiohttp client keeping CONCURRENCY keep-alive connections busy. The target of the
foundation issue is 1,000 responses per second on a 2-core machine, so that the sandbox is
never the bottleneck of the other benchmarks. As a baseline, the same load runs against
Python's standard-library ``http.server`` (ThreadingHTTPServer) answering a fixed JSON body:
the simplest server one could write, doing no work at all.

    python benchmarks/sandbox.py [--requests 6000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time

import aiohttp

PATHS = [
    "stock/intraday/ticker/2330",
    "stock/intraday/ticker/2317",
    "futopt/intraday/products?type=FUTURE",
    "stock/intraday/tickers?type=INDEX",
    "stock/historical/stats/0050",
]

BASELINE = r"""
import http.server, json, sys
body = json.dumps({"date": "2026-11-20", "symbol": "2330", "name": "台積電",
                   "referencePrice": 971}, ensure_ascii=False).encode()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(f"base URL http://127.0.0.1:{s.server_address[1]}/marketdata/v1.0", flush=True)
s.serve_forever()
"""


def start(cmd: list[str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"(http://127\.0\.0\.1:\d+/marketdata/v1\.0)", line)
        if m:
            return proc, m.group(1)
    raise RuntimeError("server did not start")


async def load(base_url: str, n: int, concurrency: int) -> tuple[float, int]:
    headers = {"X-API-KEY": "sandbox-advanced"}
    conn = aiohttp.TCPConnector(limit=concurrency)
    ok = 0
    async with aiohttp.ClientSession(connector=conn, headers=headers) as session:
        # warm up: caches of the market and the connections
        for p in PATHS:
            async with session.get(f"{base_url}/{p}") as r:
                await r.read()
        queue = list(range(n))

        async def worker() -> None:
            nonlocal ok
            while queue:
                i = queue.pop()
                async with session.get(f"{base_url}/{PATHS[i % len(PATHS)]}") as r:
                    await r.read()
                    ok += r.status == 200

        t = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=6000)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args()
    results = {}
    for name, cmd in (
        (
            "sandbox (aiohttp, real bodies)",
            [
                sys.executable,
                "-m",
                "marketframe",
                "sandbox",
                "--port",
                "0",
                "--rate-limit",
                "0",
                "--now",
                "2026-11-20T14:00:00+08:00",
            ],
        ),
        ("baseline: http.server, fixed body", [sys.executable, "-c", BASELINE]),
    ):
        proc, base_url = start(cmd)
        try:
            secs, ok = asyncio.run(load(base_url, args.requests, args.concurrency))
        finally:
            proc.terminate()
            proc.wait(10)
        rate = args.requests / secs
        results[name] = rate
        print(
            f"{name:<36} {args.requests} requests ({ok} ok) in {secs:.2f} s "
            f"= {rate:,.0f} responses/s"
        )
    sandbox_rate = results["sandbox (aiohttp, real bodies)"]
    base_rate = results["baseline: http.server, fixed body"]
    print(
        json.dumps(
            {
                "sandbox_rps": round(sandbox_rate),
                "baseline_rps": round(base_rate),
                "ratio_to_baseline": round(sandbox_rate / base_rate, 2),
                "ratio_to_target_1000": round(sandbox_rate / 1000, 2),
                "target_met": sandbox_rate >= 1000,
            }
        )
    )
    return 0 if sandbox_rate >= 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
