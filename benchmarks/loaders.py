"""Loader benchmarks: baselines and ours in the same process, printed as ratios.

1. bytes -> frame for a 200,000-row trades payload, against ``orjson.loads`` alone (target: at
   most 2.5x) and ``pandas.json_normalize(json.loads(...))`` (target: at least 5x faster).
2. 200 quote requests against the sandbox with 20 ms injected latency: ``client.stock.intraday
   .quote(symbol=[...])`` against a sequential loop of plain ``requests.get`` (target: >= 5x).

Run from the repository root: ``python3 benchmarks/loaders.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson  # noqa: E402
import pandas as pd  # noqa: E402
from _common import best, print_ratios  # noqa: E402

from marketframe.convert import to_pandas, to_polars, to_table  # noqa: E402


def trades_payload(n: int) -> bytes:
    base = 1769734800000000
    rows = []
    for i in range(n):
        price = 1775 + (i % 7) * 5
        row: dict[str, Any] = {
            "bid": price - 5,
            "ask": price,
            "price": price,
            "size": i % 97 + 1,
            "volume": n - i,
            "time": base + (n - i) * 117_000,
            "serial": 16618755 - i,
        }
        if i % 1000 == 0:  # trial / fixed-price rows omit bid, ask and volume
            del row["bid"], row["ask"], row["volume"]
        if i % 10 == 0:
            row["price"] = price + 0.5
        rows.append(row)
    doc = {
        "date": "2026-01-30",
        "type": "EQUITY",
        "exchange": "TWSE",
        "market": "TSE",
        "symbol": "2330",
        "data": rows,
    }
    return orjson.dumps(doc)


def bench_convert(n: int, repeat: int) -> list[tuple[str, float, str]]:
    body = trades_payload(n)
    print(f"trades payload: {n:,} rows, {len(body) / 1e6:.1f} MB")
    t_orjson = best(lambda: orjson.loads(body), repeat)
    t_pandas = best(lambda: to_pandas(to_table(body, "stock.intraday.trades")), repeat)
    t_polars = best(lambda: to_polars(to_table(body, "stock.intraday.trades")), repeat)
    # the orjson path alone (what payloads under 1 MB, and any the Arrow reader refuses, take)
    t_python = best(
        lambda: to_pandas(to_table(body, "stock.intraday.trades", engine="python")), repeat
    )

    def normalize() -> pd.DataFrame:
        return pd.json_normalize(
            json.loads(body),
            record_path="data",
            meta=["date", "type", "exchange", "market", "symbol"],
        )

    t_norm = best(normalize, max(1, repeat // 2))
    print(f"  orjson.loads alone            {t_orjson * 1e3:9.1f} ms")
    print(f"  marketframe -> pandas         {t_pandas * 1e3:9.1f} ms")
    print(f"  marketframe -> polars         {t_polars * 1e3:9.1f} ms")
    print(f"  marketframe, orjson path only {t_python * 1e3:9.1f} ms")
    print(f"  json_normalize(json.loads)    {t_norm * 1e3:9.1f} ms")
    return [
        (
            "bytes->pandas / orjson.loads (target <= 2.5)",
            t_pandas / t_orjson,
            "met" if t_pandas / t_orjson <= 2.5 else "MISSED",
        ),
        (
            "bytes->polars / orjson.loads (target <= 2.5)",
            t_polars / t_orjson,
            "met" if t_polars / t_orjson <= 2.5 else "MISSED",
        ),
        (
            "json_normalize / bytes->pandas (target >= 5)",
            t_norm / t_pandas,
            "met" if t_norm / t_pandas >= 5 else "MISSED",
        ),
        ("orjson path only: / orjson.loads (info)", t_python / t_orjson, ""),
        ("orjson path only: json_normalize / it (info)", t_norm / t_python, ""),
    ]


def bench_requests(n: int, workers: int) -> list[tuple[str, float, str]]:
    import requests

    from marketframe import Client
    from marketframe.sandbox import Sandbox

    with Sandbox(
        seed=7, now="2026-11-20T14:00:00+08:00", rate_limit=1_000_000, latency=0.0, fault_rate=0.0
    ) as sb:
        key = sb.keys["advanced"]
        with Client(key, base_url=sb.base_url, cache=False, max_workers=workers) as client:
            listed = client.stock.intraday.tickers(type="EQUITY")["symbol"].tolist()
            symbols = (listed * (n // max(1, len(listed)) + 1))[:n]
            print(f"{n} quote requests over {len(set(symbols))} distinct symbols, 20 ms latency")
            sb.configure(latency=0.02)
            t = time.perf_counter()
            for s in symbols:
                r = requests.get(
                    f"{sb.base_url}/stock/intraday/quote/{s}",
                    headers={"X-API-KEY": key},
                    timeout=30,
                )
                r.raise_for_status()
                r.json()
            t_seq = time.perf_counter() - t
            t = time.perf_counter()
            df = client.stock.intraday.quote(symbol=symbols)
            t_ours = time.perf_counter() - t
            assert len(df) == n
    print(f"  sequential requests.get       {t_seq * 1e3:9.1f} ms")
    label = f"marketframe ({workers} workers)"
    print(f"  {label:30s}{t_ours * 1e3:9.1f} ms  (frame of {len(df)} rows)")
    ratio = t_seq / t_ours
    return [
        (
            "sequential requests.get / marketframe (target >= 5)",
            ratio,
            "met" if ratio >= 5 else "MISSED",
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller payload, fewer repeats")
    ap.add_argument("--workers", type=int, default=8, help="max_workers (Client default: 8)")
    args = ap.parse_args(argv)
    rows, repeat, n_req = (20_000, 2, 50) if args.quick else (200_000, 5, 200)
    results = bench_convert(rows, repeat)
    results += bench_requests(n_req, args.workers)
    print_ratios(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
