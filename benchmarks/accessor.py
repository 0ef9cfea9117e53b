"""The ``df.md`` accessor at whole-market scale, against the alternatives, in one process.

    python3 benchmarks/accessor.py            # 2,000 symbols x 2,500 days (5 million rows)
    python3 benchmarks/accessor.py --quick    # 200 x 500, a smoke run (no targets)

The frame is what our loaders and store return for a market: one row per symbol and day,
sorted by symbol and date, ``symbol`` categorical. For each indicator, each ratio is the
median of ``--pairs`` interleaved pairs (ours, then the baseline, alternately, so that load
from other processes hits both alike); the spread (lowest and highest ratio) is printed
too. Baselines:

* panel: the same kernel on the equivalent (days, symbols) panel, built beforehand;
* TA-Lib: pandas ``groupby("symbol").close.transform(lambda s: talib.X(s.to_numpy()))``;
* polars: polars' own expression ``.over("symbol")`` where it has one (``rolling_mean``,
  ``rolling_std``, ``ewm_mean``; also ``rolling_min``/``rolling_max`` for KDJ);
* LazyFrame: ``lf.md.X().collect()`` against the eager ``df.md.X()``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import talib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import marketframe  # noqa: E402,F401  (registers df.md)
from benchmarks._common import print_ratios  # noqa: E402
from marketframe import indicators as ind  # noqa: E402

SMA = talib.MA_Type.SMA
TARGETS = {"panel": 2.0, "talib": 0.3, "polars": 0.7, "lazy": 1.2}


def frame(symbols: int, days: int, seed: int = 1) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, (symbols, days)), axis=1))
    spread = np.abs(rng.normal(0.0, 0.005, (symbols, days))) * close
    dates = pd.bdate_range("2015-01-01", periods=days).values
    names = [f"{1000 + i}" for i in range(symbols)]
    df = pd.DataFrame(
        {
            "symbol": pd.Categorical(np.repeat(names, days), categories=names),
            "date": np.tile(dates, symbols),
            "open": close.ravel(),
            "high": (close + spread).ravel(),
            "low": (close - spread).ravel(),
            "close": close.ravel(),
        }
    )
    panels = {
        k: np.ascontiguousarray(v.T)
        for k, v in (("high", close + spread), ("low", close - spread), ("close", close))
    }
    return df, panels


def talib_transform(df: pd.DataFrame, fn: Callable[..., Any]) -> Any:
    return df.groupby("symbol", observed=True, sort=False)["close"].transform(
        lambda s: fn(s.to_numpy())
    )


def talib_kdj(df: pd.DataFrame) -> Any:
    out = []
    for _, g in df.groupby("symbol", observed=True, sort=False):
        out.append(
            talib.STOCH(
                g["high"].to_numpy(), g["low"].to_numpy(), g["close"].to_numpy(), 9, 3, SMA, 3, SMA
            )
        )
    return out


def polars_native(name: str) -> list[pl.Expr] | None:
    c = pl.col("close")
    over = "symbol"
    if name == "SMA(20)":
        return [c.rolling_mean(20).over(over).alias("sma")]
    if name == "EMA(20)":
        return [c.ewm_mean(span=20, adjust=False).over(over).alias("ema")]
    if name == "BBANDS(20,2)":
        mid = c.rolling_mean(20).over(over)
        std = c.rolling_std(20, ddof=0).over(over)
        return [(mid + 2 * std).alias("u"), mid.alias("m"), (mid - 2 * std).alias("l")]
    if name == "MACD(12,26,9)":
        line = (c.ewm_mean(span=12, adjust=False) - c.ewm_mean(span=26, adjust=False)).over(over)
        sig = line.ewm_mean(span=9, adjust=False).over(over)
        return [line.alias("line"), sig.alias("sig"), (line - sig).alias("hist")]
    return None


def cases(df: pd.DataFrame, panels: dict[str, np.ndarray]) -> list[tuple[str, dict[str, Any]]]:
    p, h, lo = panels["close"], panels["high"], panels["low"]
    return [
        (
            "SMA(20)",
            {
                "md": lambda f: f.md.sma(20),
                "panel": lambda: ind.sma(p, 20),
                "talib": lambda: talib_transform(df, lambda x: talib.SMA(x, 20)),
            },
        ),
        (
            "EMA(20)",
            {
                "md": lambda f: f.md.ema(20),
                "panel": lambda: ind.ema(p, 20),
                "talib": lambda: talib_transform(df, lambda x: talib.EMA(x, 20)),
            },
        ),
        (
            "RSI(14)",
            {
                "md": lambda f: f.md.rsi(14),
                "panel": lambda: ind.rsi(p, 14),
                "talib": lambda: talib_transform(df, lambda x: talib.RSI(x, 14)),
            },
        ),
        (
            "MACD(12,26,9)",
            {
                "md": lambda f: f.md.macd(),
                "panel": lambda: ind.macd(p),
                "talib": lambda: talib_transform(df, lambda x: talib.MACD(x, 12, 26, 9)[0]),
            },
        ),
        (
            "BBANDS(20,2)",
            {
                "md": lambda f: f.md.bbands(),
                "panel": lambda: ind.bbands(p, 20, 2.0),
                "talib": lambda: talib_transform(df, lambda x: talib.BBANDS(x, 20, 2, 2, SMA)[0]),
            },
        ),
        (
            "KDJ(9,3,3)",
            {
                "md": lambda f: f.md.kdj(),
                "panel": lambda: ind.kdj(h, lo, p),
                "talib": lambda: talib_kdj(df),
            },
        ),
    ]


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    t = clock()
    fn()
    return clock() - t


def pairs(
    ours: Callable[[], Any], base: Callable[[], Any], n: int
) -> tuple[float, float, float, float, float]:
    """Median ratio ours/base over ``n`` interleaved pairs, its min and max, and the median
    times (seconds) of each side."""
    ours(), base()  # warm-up
    ratios, t_ours, t_base = [], [], []
    for i in range(n):
        if i % 2:  # alternate which side goes first
            b, o = timed(base), timed(ours)
        else:
            o, b = timed(ours), timed(base)
        ratios.append(o / b)
        t_ours.append(o)
        t_base.append(b)
    return (
        statistics.median(ratios),
        min(ratios),
        max(ratios),
        statistics.median(t_ours),
        statistics.median(t_base),
    )


def memory(
    df: pd.DataFrame, name: str, call: Callable[[pd.DataFrame], pd.DataFrame], inputs: int
) -> float:
    """Peak memory of ``call(df)`` beyond its output, in units of the input columns it
    reads (``tracemalloc`` sees numpy's allocations)."""
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = call(df)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    new = out.columns[len(df.columns) :]
    output = sum(out[c].to_numpy().nbytes for c in new)
    return (peak - output) / (inputs * len(df) * 8)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (smoke run, no targets)")
    p.add_argument("--pairs", type=int, default=5, help="interleaved pairs per ratio (>= 5)")
    p.add_argument("--only", default="", help="comma-separated indicator prefixes, e.g. SMA,RSI")
    p.add_argument(
        "--memory",
        action="store_true",
        help="only the peak memory beyond the output, per indicator (target <= 2x)",
    )
    p.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time (the figures), or this process's CPU time: on a machine busy with "
        "other work, time spent waiting for a core is not counted against either side",
    )
    args = p.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    symbols, days = (200, 500) if args.quick else (2_000, 2_500)
    df, panels = frame(symbols, days)
    pf = pl.from_pandas(df)
    lf = pf.lazy()
    load = os.getloadavg()
    print(
        f"{len(df):,} rows ({symbols:,} symbols x {days:,} days), numpy {np.__version__}, "
        f"pandas {pd.__version__}, polars {pl.__version__}, TA-Lib {talib.__version__}, "
        f"{os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"median of {args.pairs} interleaved pairs, {args.clock} clock"
    )
    print(
        f"{'indicator':<14} {'against':<8} {'ours ms':>9} {'base ms':>9} {'ratio':>7} "
        f"{'spread':>13}  {'target':>8}  status"
    )
    results: list[tuple[str, float, str]] = []
    missed = 0
    wanted = [w for w in args.only.split(",") if w]
    if args.memory:
        for name, fns in cases(df, panels):
            if wanted and not any(name.startswith(w) for w in wanted):
                continue
            ratio = memory(df, name, fns["md"], 3 if name.startswith("KDJ") else 1)
            verdict = "met" if ratio <= 2.0 else "MISSED"
            missed += ratio > 2.0
            results.append((f"{name} pandas md peak memory beyond output / input", ratio, verdict))
        print_ratios(results)
        return 1 if missed else 0
    for name, fns in cases(df, panels):
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        native = polars_native(name)
        runs: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("panel", lambda fns=fns: fns["md"](df), fns["panel"]),
            ("talib", lambda fns=fns: fns["md"](df), fns["talib"]),
        ]
        if native is not None:
            runs.append(
                (
                    "polars",
                    lambda fns=fns: fns["md"](pf),
                    lambda native=native: pf.with_columns(native),
                )
            )
        runs.append(
            ("lazy", lambda fns=fns: fns["md"](lf).collect(), lambda fns=fns: fns["md"](pf))
        )
        for against, ours, base in runs:
            ratio, lo, hi, t_o, t_b = pairs(ours, base, args.pairs)
            target = None if args.quick else TARGETS[against]
            ok = target is None or ratio <= target
            missed += not ok
            verdict = "-" if target is None else ("met" if ok else "MISSED")
            tgt = "-" if target is None else f"<= {target:.1f}x"
            side = {
                "panel": "pandas md vs panel kernel",
                "talib": "pandas md vs TA-Lib groupby",
                "polars": "polars md vs native expr",
                "lazy": "LazyFrame md vs eager",
            }[against]
            print(
                f"{name:<14} {against:<8} {t_o * 1e3:9.1f} {t_b * 1e3:9.1f} {ratio:6.2f}x "
                f"{lo:5.2f}-{hi:5.2f}x  {tgt:>8}  {verdict}",
                flush=True,
            )
            results.append((f"{name} {side}", ratio, verdict))
    print_ratios(results)
    load = os.getloadavg()
    print(f"load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if not args.quick:
        print(f"targets missed: {missed}" if missed else "all targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
