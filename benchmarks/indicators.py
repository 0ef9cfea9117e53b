"""Indicator kernels against TA-Lib, measured in the same process.

    python3 benchmarks/indicators.py           # panel 2,000 x 2,500 and a 10M-bar series
    python3 benchmarks/indicators.py --quick   # small sizes, for a smoke run

Panel: ours takes the (bars, symbols) array in one call; TA-Lib gets its best case, a loop
over the symbols of a pre-transposed contiguous (symbols, bars) copy (the copy not timed).
Each ratio (ours / TA-Lib) is the median of ``--pairs`` interleaved pairs (ours, then
TA-Lib, alternately, so that load from other processes hits both alike), printed with its
spread (lowest and highest ratio) and the load average; a target is printed as met or
MISSED. Also printed for context: the naive numpy EMA (a Python loop over bars, each
step vectorized across symbols), which is what the blocked recursion replaces.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import talib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.accessor import pairs  # noqa: E402
from marketframe import indicators as ind  # noqa: E402

SMA = talib.MA_Type.SMA

PANEL_TARGET = 1.0
SINGLE_TARGETS = {
    "SMA(20)": 1.5,
    "BBANDS(20,2)": 1.5,
    "KDJ(9,3,3)": 1.5,
    "RSI(14)": 2.0,
    "MACD(12,26,9)": 2.0,
}


def best(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up (page faults, BLAS threads)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def candles(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, shape), axis=0))
    spread = np.abs(rng.normal(0.0, 0.005, shape)) * close
    return close + spread, close - spread, close


def naive_ema(x: np.ndarray, n: int) -> np.ndarray:
    k = 2.0 / (n + 1)
    y = np.full(x.shape, np.nan)
    prev = x[:n].mean(axis=0)
    y[n - 1] = prev
    for t in range(n, x.shape[0]):
        prev = prev + k * (x[t] - prev)
        y[t] = prev
    return y


def cases(h: np.ndarray, lo: np.ndarray, c: np.ndarray, loop: bool):  # type: ignore[no-untyped-def]
    if loop:  # TA-Lib over symbols: rows of contiguous (symbols, bars) copies
        ht, lt, ct = (np.ascontiguousarray(a.T) for a in (h, lo, c))
        m = range(ct.shape[0])
        ta = {
            "SMA(20)": lambda: [talib.SMA(ct[j], 20) for j in m],
            "EMA(20)": lambda: [talib.EMA(ct[j], 20) for j in m],
            "RSI(14)": lambda: [talib.RSI(ct[j], 14) for j in m],
            "MACD(12,26,9)": lambda: [talib.MACD(ct[j], 12, 26, 9) for j in m],
            "BBANDS(20,2)": lambda: [talib.BBANDS(ct[j], 20, 2, 2, SMA) for j in m],
            "KDJ(9,3,3)": lambda: [talib.STOCH(ht[j], lt[j], ct[j], 9, 3, SMA, 3, SMA) for j in m],
        }
    else:
        ta = {
            "SMA(20)": lambda: talib.SMA(c, 20),
            "EMA(20)": lambda: talib.EMA(c, 20),
            "RSI(14)": lambda: talib.RSI(c, 14),
            "MACD(12,26,9)": lambda: talib.MACD(c, 12, 26, 9),
            "BBANDS(20,2)": lambda: talib.BBANDS(c, 20, 2, 2, SMA),
            "KDJ(9,3,3)": lambda: talib.STOCH(h, lo, c, 9, 3, SMA, 3, SMA),
        }
    ours = {
        "SMA(20)": lambda: ind.sma(c, 20),
        "EMA(20)": lambda: ind.ema(c, 20),
        "RSI(14)": lambda: ind.rsi(c, 14),
        "MACD(12,26,9)": lambda: ind.macd(c, 12, 26, 9),
        "BBANDS(20,2)": lambda: ind.bbands(c, 20, 2.0),
        "KDJ(9,3,3)": lambda: ind.kdj(h, lo, c, 9, 3, 3),
    }
    return ta, ours


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    p.add_argument("--pairs", type=int, default=5, help="interleaved pairs per ratio (>= 5)")
    p.add_argument("--only", default="", help="comma-separated indicator prefixes, e.g. RSI,MACD")
    p.add_argument("--skip", default="", help="'panel' or 'series': leave that case out")
    args = p.parse_args(argv)
    bars, symbols, single = (500, 200, 1_000_000) if args.quick else (2_500, 2_000, 10_000_000)
    repeat = 3 if args.quick else 5  # naive-loop context lines only
    wanted = [w for w in args.only.split(",") if w]
    load = os.getloadavg()
    print(
        f"numpy {np.__version__}, TA-Lib {talib.__version__}, {os.cpu_count()} cores, "
        f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"median of {args.pairs} interleaved pairs"
    )
    missed = 0

    def run(
        label: str,
        h: np.ndarray,
        lo: np.ndarray,
        c: np.ndarray,
        loop: bool,
        targets: dict[str, float],
    ) -> None:
        nonlocal missed
        ta, ours = cases(h, lo, c, loop)
        for name in ta:
            if wanted and not any(name.startswith(w) for w in wanted):
                continue
            ratio, lo_r, hi_r, t_us, t_ta = pairs(ours[name], ta[name], args.pairs)
            target = None if args.quick else targets.get(name)  # targets are for full sizes
            ok = target is None or ratio <= target
            missed += not ok
            status = "-" if target is None else ("met" if ok else "MISSED")
            tgt = "-" if target is None else f"<= {target:.1f}x"
            print(
                f"{label:<22} {name:<14} {t_ta * 1e3:9.1f} {t_us * 1e3:9.1f} {ratio:6.2f}x "
                f"{lo_r:5.2f}-{hi_r:5.2f}x  {tgt:>8}  {status}",
                flush=True,
            )

    print(
        f"{'case':<22} {'indicator':<14} {'TA-Lib ms':>9} {'ours ms':>9} "
        f"{'ratio':>7} {'spread':>13}  {'target':>8}  status"
    )
    if args.skip != "panel":
        h, lo, c = candles((bars, symbols), 1)
        label = f"panel {symbols}x{bars}"
        targets = {name: PANEL_TARGET for name in SINGLE_TARGETS} | {"EMA(20)": PANEL_TARGET}
        run(label, h, lo, c, True, targets)
        if not wanted:
            t_naive = best(lambda: naive_ema(c, 20), repeat)
            t_ta = best(lambda: [talib.EMA(row, 20) for row in np.ascontiguousarray(c.T)], repeat)
            print(
                f"{label:<22} {'EMA naive loop':<14} {t_ta * 1e3:9.1f} {t_naive * 1e3:9.1f} "
                f"{t_naive / t_ta:6.2f}x"
                f"  context  (Python loop over bars, numpy across symbols; best of {repeat})"
            )
        del h, lo, c
    if args.skip != "series":
        h, lo, c = candles((single,), 2)
        label = f"series {single:,}"
        run(label, h, lo, c, False, SINGLE_TARGETS)
        if not wanted:
            sub = c[: single // 10]
            t_naive = best(lambda: naive_ema(sub, 20), 1) * 10
            t_ta = best(lambda: talib.EMA(c, 20), repeat)
            print(
                f"{label:<22} {'EMA naive loop':<14} {t_ta * 1e3:9.1f} {t_naive * 1e3:9.1f} "
                f"{t_naive / t_ta:6.2f}x"
                f"  context  (Python loop over bars; timed on 1/10 of the bars, x10)"
            )
    load = os.getloadavg()
    print(f"load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.quick:
        print("quick run: targets apply to the full sizes only (run without --quick)")
    else:
        print(f"targets missed: {missed}" if missed else "all targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
