"""``marketframe.download`` benchmark: ours and two baselines in the same run, as ratios.

Daily candles of 50 symbols x 15 years (2011-01-01..2025-12-31: 15 windows each, 750
requests) from a sandbox running in ANOTHER process (so the server does not compete for our
GIL) with 20 ms injected latency:

1. ``download(symbols, start, end)`` against a sequential loop of the loader over the same
   under-one-year windows (``client.stock.historical.candles(...)`` one window after another,
   frames concatenated and sorted): what a user writes without ``download``. Target: at
   least 6x faster.
2. ``download`` against ``Store.sync`` + ``Store.read`` into a fresh store (the incremental
   path ``download(store=...)`` takes): Target: at most 1.1x the time.

All three use one :class:`Client` (``--workers`` concurrent requests, pacing on, no HTTP
cache) and end with the same pandas frame (checked). A concurrent pass over every window
first warms the sandbox's caches. The timings are interleaved pairs (baseline then ours, then
ours then baseline, ...); each ratio is the median of the pairs' ratios, printed with its
spread (min..max).

Run from the repository root: ``python3 benchmarks/download.py [--quick] [--pairs N]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402
from _common import print_ratios, start_sandbox  # noqa: E402

import marketframe  # noqa: E402
from marketframe.client import Client  # noqa: E402
from marketframe.endpoints import split  # noqa: E402
from marketframe.store import Store  # noqa: E402

KEY = "sandbox-advanced"
NOW = "2026-01-05T14:00:00+08:00"
EP = "stock.historical.candles"


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _pairs(
    name: str,
    base: Callable[[], Any],
    ours: Callable[[], Any],
    n: int,
    check: Callable[[Any, Any], None],
) -> list[float]:
    """``n`` interleaved (baseline, ours) timings -> the ratios baseline / ours."""
    ratios = []
    for i in range(n):
        if i % 2 == 0:
            t_b, got_b = _timed(base)
            t_o, got_o = _timed(ours)
        else:
            t_o, got_o = _timed(ours)
            t_b, got_b = _timed(base)
        check(got_b, got_o)
        ratios.append(t_b / t_o)
        print(f"  pair {i + 1}: {name} {t_b:7.2f} s, download {t_o:7.2f} s, ratio {t_b / t_o:5.2f}")
    return ratios


def _summary(
    label: str, ratios: list[float], ok: Callable[[float], bool]
) -> tuple[str, float, str]:
    med = statistics.median(ratios)
    spread = f"[{min(ratios):.2f}..{max(ratios):.2f}]"
    return (f"{label} {spread}", med, "met" if ok(med) else "MISSED")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 symbols x 5 years")
    ap.add_argument("--pairs", type=int, default=5, help="interleaved pairs per ratio (>= 5)")
    ap.add_argument("--workers", type=int, default=16, help="concurrent requests")
    args = ap.parse_args(argv)
    n_symbols, first_year = (10, 2021) if args.quick else (50, 2011)
    start, end = dt.date(first_year, 1, 1), dt.date(2025, 12, 31)
    proc, base, _ = start_sandbox(
        "--latency-ms", "20", "--rate-limit", "0", "--extra-equities", str(n_symbols), "--now", NOW
    )
    try:
        symbols = [str(9001 + i) for i in range(n_symbols)]
        windows = split(start, end)
        print(
            f"{n_symbols} symbols x {len(windows)} windows = {n_symbols * len(windows)} "
            f"requests ({start}..{end}, daily), sandbox in another process, 20 ms latency, "
            f"{args.workers} workers"
        )
        with (
            Client(KEY, base_url=base, cache=False, max_workers=args.workers) as client,
            tempfile.TemporaryDirectory(prefix="marketframe-bench-") as tmp,
        ):

            def ours() -> pd.DataFrame:
                return marketframe.download(symbols, start, end, client=client, progress=False)

            def loop() -> pd.DataFrame:
                frames = [
                    client.stock.historical.candles(symbol=s, from_=lo, to=hi)
                    for s in symbols
                    for lo, hi in windows
                ]
                df = pd.concat(frames, ignore_index=True)
                return df.sort_values(["symbol", "date"], kind="stable", ignore_index=True)

            runs = iter(range(10**6))

            def store() -> pd.DataFrame:
                with Store(Path(tmp) / f"s{next(runs)}", client) as st:
                    st.sync(EP, symbols, start, end, progress=False)
                    return st.read(EP, sorted(symbols), start, end)

            t, warm = _timed(ours)  # warms the sandbox's caches for every window
            print(f"  warm-up download (untimed)  {t:7.2f} s  ({len(warm)} rows)")

            def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
                pd.testing.assert_frame_equal(a, b, check_categorical=False)

            print("download vs a sequential loop of the loader:")
            seq = _pairs("loop", loop, ours, args.pairs, same)
            print("download vs Store.sync + Store.read (fresh store each time):")
            st = _pairs("sync+read", store, ours, args.pairs, same)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print_ratios(
        [
            _summary("sequential loop / download (target >= 6)", seq, lambda r: r >= 6),
            # download takes at most 1.2x the time of sync+read <=> (sync+read)/download >= 1/1.2
            _summary(
                "download / (Store.sync + read) (target <= 1.1)",
                [1 / r for r in st],
                lambda r: r <= 1.1,
            ),
        ]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
