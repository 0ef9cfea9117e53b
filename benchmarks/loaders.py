"""Loader benchmarks: baselines and ours in the same process, printed as ratios.

1. bytes -> frame for a 200,000-row trades payload, against ``orjson.loads`` alone (target: at
   most 2.5x) and ``pandas.json_normalize(json.loads(...))`` (target: at least 5x faster).
2. Small calls' client CPU (the sandbox in its own process; this process's CPU time, median
   of interleaved pairs): a one-row quote against ``requests.Session.get`` + ``orjson.loads``
   + ``pandas.json_normalize`` (target: at most 1.2x), one year of daily candles against
   ``pd.DataFrame(data)`` + ``to_datetime`` + sort (target: at most 1.0x).
3. 200 quote requests with 20 ms injected latency (sandbox in its own process):
   ``client.stock.intraday.quote(symbol=[...])`` against a sequential loop (target: >= 6x)
   and a ``ThreadPoolExecutor(8)`` (target: >= 1.0x) of requests + orjson + json_normalize.

Run from the repository root: ``python3 benchmarks/loaders.py [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson  # noqa: E402
import pandas as pd  # noqa: E402
from _common import best, print_ratios, start_sandbox  # noqa: E402

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


def _pairs(base: Any, ours: Any, n: int, clock: Any) -> tuple[float, float, float, float, float]:
    """``n`` interleaved (baseline, ours) timings with ``clock``: median of the ratios
    ours / baseline, their spread, and the median times of each."""
    ratios, tb, to = [], [], []
    for i in range(n):
        order = (base, ours) if i % 2 == 0 else (ours, base)
        got = {}
        for fn in order:
            gc.collect()
            t = clock()
            fn()
            got[fn] = clock() - t
        ratios.append(got[ours] / got[base])
        tb.append(got[base])
        to.append(got[ours])
    med = statistics.median
    return med(ratios), min(ratios), max(ratios), med(tb), med(to)


def bench_small(base_url: str, pairs: int, calls: int) -> list[tuple[str, float, str]]:
    """Client CPU of small calls (``--clock cpu`` semantics: this process's CPU time; the
    sandbox runs in another process): a one-row quote, one year of daily candles."""
    import requests

    from marketframe import Client

    key = "sandbox-advanced"
    session = requests.Session()
    session.headers["X-API-KEY"] = key
    quote_url = f"{base_url}/stock/intraday/quote/2330"
    candles_url = f"{base_url}/stock/historical/candles/2330"
    span = {"from": "2025-01-01", "to": "2025-12-31"}
    out = []
    with Client(key, base_url=base_url, cache=False) as client:

        def base_quote() -> None:
            for _ in range(calls):
                pd.json_normalize(orjson.loads(session.get(quote_url).content))

        def ours_quote() -> None:
            for _ in range(calls):
                client.stock.intraday.quote(symbol="2330")

        def base_candles() -> None:
            for _ in range(calls // 4):
                body = orjson.loads(session.get(candles_url, params=span).content)
                df = pd.DataFrame(body["data"])
                df["date"] = pd.to_datetime(df["date"])
                df.sort_values("date", ignore_index=True)

        def ours_candles() -> None:
            for _ in range(calls // 4):
                client.stock.historical.candles(symbol="2330", from_=span["from"], to=span["to"])

        base_quote(), ours_quote(), base_candles(), ours_candles()  # warm up
        df = client.stock.intraday.quote(symbol="2330")
        print(f"small calls, client CPU (median of {pairs} interleaved pairs [spread]):")
        r, lo, hi, tb, to = _pairs(base_quote, ours_quote, pairs, time.process_time)
        print(
            f"  one-row quote ({df.shape[1]} columns): ours {to / calls * 1e3:.2f} ms, "
            f"Session.get+orjson+json_normalize {tb / calls * 1e3:.2f} ms"
        )
        out.append(
            (
                f"quote CPU / requests+orjson+json_normalize [{lo:.2f}..{hi:.2f}] (<= 1.2)",
                r,
                "met" if r <= 1.2 else "MISSED",
            )
        )
        r, lo, hi, tb, to = _pairs(base_candles, ours_candles, pairs, time.process_time)
        n = calls // 4
        print(
            f"  one year of daily candles: ours {to / n * 1e3:.2f} ms, "
            f"Session.get+orjson+DataFrame+to_datetime+sort {tb / n * 1e3:.2f} ms"
        )
        out.append(
            (
                f"candles CPU / requests+orjson+DataFrame [{lo:.2f}..{hi:.2f}] (<= 1.0)",
                r,
                "met" if r <= 1.0 else "MISSED",
            )
        )
    return out


def bench_requests(base_url: str, n: int, workers: int, pairs: int) -> list[tuple[str, float, str]]:
    """``n`` quotes at 20 ms latency: ``quote(symbol=[...])`` against a sequential loop and a
    ``ThreadPoolExecutor(8)`` of requests + orjson + json_normalize (wall clock)."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    from marketframe import Client

    key = "sandbox-advanced"
    session = requests.Session()
    session.headers["X-API-KEY"] = key
    session.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=16))

    def one(s: str) -> pd.DataFrame:
        r = session.get(f"{base_url}/stock/intraday/quote/{s}", timeout=30)
        r.raise_for_status()
        return pd.json_normalize(orjson.loads(r.content))

    with Client(key, base_url=base_url, cache=False, max_workers=workers) as client:
        listed = client.stock.intraday.tickers(type="EQUITY")["symbol"].tolist()
        symbols = (listed * (n // max(1, len(listed)) + 1))[:n]
        print(f"{n} quote requests over {len(set(symbols))} symbols, 20 ms latency:")

        def seq() -> None:
            pd.concat([one(s) for s in symbols], ignore_index=True)

        def pool() -> None:
            with ThreadPoolExecutor(8) as ex:
                pd.concat(list(ex.map(one, symbols)), ignore_index=True)

        def ours() -> None:
            assert len(client.stock.intraday.quote(symbol=symbols)) == n

        ours(), pool()  # warm up
        r1, lo1, hi1, t_seq, t_ours = _pairs(seq, ours, pairs, time.perf_counter)
        r2, lo2, hi2, t_pool, _ = _pairs(pool, ours, pairs, time.perf_counter)
    print(
        f"  sequential {t_seq * 1e3:.0f} ms, ThreadPoolExecutor(8) {t_pool * 1e3:.0f} ms, "
        f"marketframe ({workers} workers) {t_ours * 1e3:.0f} ms"
    )
    return [
        (
            f"sequential / marketframe [{1 / hi1:.2f}..{1 / lo1:.2f}] (>= 6)",
            1 / r1,
            "met" if 1 / r1 >= 6 else "MISSED",
        ),
        (
            f"ThreadPoolExecutor(8) / marketframe [{1 / hi2:.2f}..{1 / lo2:.2f}] (>= 1.0)",
            1 / r2,
            "met" if 1 / r2 >= 1.0 else "MISSED",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller payload, fewer repeats")
    ap.add_argument("--workers", type=int, default=8, help="max_workers (Client default: 8)")
    ap.add_argument("--pairs", type=int, default=7, help="interleaved pairs per ratio")
    args = ap.parse_args(argv)
    rows, repeat, n_req = (20_000, 2, 50) if args.quick else (200_000, 5, 200)
    results = bench_convert(rows, repeat)
    now = "2026-11-20T14:00:00+08:00"
    proc, base_url, _ = start_sandbox("--rate-limit", "0", "--now", now)
    try:
        results += bench_small(base_url, args.pairs, 40 if args.quick else 200)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    proc, base_url, _ = start_sandbox("--rate-limit", "0", "--latency-ms", "20", "--now", now)
    try:
        results += bench_requests(base_url, n_req, args.workers, args.pairs)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print_ratios(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
