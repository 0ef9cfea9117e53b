"""Live indicator updates: one closed bar per symbol per step, against TA-Lib's handles.

    python3 benchmarks/stateful.py            # 2,000 symbols, 20 steps per timing, 7 pairs
    python3 benchmarks/stateful.py --quick    # 200 symbols, a smoke run (no targets)

Each symbol carries SMA(20), RSI(14), KDJ(9,3,3), MACD(12,26,9) and Bollinger(20,2) under
TA-Lib's conventions, warmed on 300 bars of history. A step feeds the next closed bar of
every symbol:

* ours: ``marketframe.indicators.stateful.step`` once per indicator, all symbols at once
  (``inplace=True``: the hot loop keeps one state per indicator; ``--copying`` also times
  the value form, which copies the state each step);
* TA-Lib 0.8: its streaming handles (``talib.stream.SMA(history, ...)`` opened on the same
  history), ``update`` called per symbol per indicator: 5 x 2,000 calls a step.

``--live``: the live engine instead (``marketframe.stream.LiveIndicators``, what
``stream.indicators(...)`` runs): 2,000 symbols warmed on 300 one-minute bars, then each step
is one trades frame with one trade per symbol in the next minute, which closes every
symbol's bar: bars built, all five indicators stepped for every symbol whose bar closed (one
vectorised step), the output frame of final rows built; with forming-bar peeks (the
default) and without, each interleaved with TA-Lib's handles stepped on the same bars (CPU
time). Targets: <= 5 us per symbol-update, <= 0.5x TA-Lib.

Reported: microseconds per symbol-update (one symbol's bar through all five indicators)
for each side, and the ratio ours/TA-Lib as the median of ``--pairs`` interleaved pairs
(ours first in even pairs, TA-Lib first in odd ones, each on the same fresh bars), with
the spread (lowest-highest) and the load average. Targets: <= 5 us per symbol-update,
<= 0.5x TA-Lib. The last values of both sides are compared before timing.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from talib import stream as tstream

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._common import print_ratios  # noqa: E402
from marketframe.indicators import stateful as sf  # noqa: E402

NAMES = ("sma", "rsi", "kdj", "macd", "bbands")
TARGET_US, TARGET_RATIO = 5.0, 0.5


def market(symbols: int, bars: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    close = np.round(100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, (bars, symbols)), 0)), 2)
    spread = np.round(np.abs(rng.normal(0.0, 0.005, (bars, symbols))) * close, 2)
    return close + spread, close - spread, close


def open_talib(h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> list[list[Any]]:
    """One handle per indicator per symbol, opened on the history (as ours is warmed)."""
    out = []
    for j in range(c.shape[1]):
        hj, lj, cj = (np.ascontiguousarray(a[:, j]) for a in (h, lo, c))
        out.append(
            [
                tstream.SMA(cj, timeperiod=20),
                tstream.RSI(cj, timeperiod=14),
                tstream.STOCH(hj, lj, cj, 9, 3, 0, 3, 0),
                tstream.MACD(cj, fastperiod=12, slowperiod=26, signalperiod=9),
                tstream.BBANDS(cj, timeperiod=20, nbdevup=2.0, nbdevdn=2.0, matype=0),
            ]
        )
    return out


def run_talib(handles: list[list[Any]], h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> Any:
    last = None
    hl, ll, cl = h.tolist(), lo.tolist(), c.tolist()  # floats, as a feed delivers them
    for t in range(len(cl)):
        ht, lt, ct = hl[t], ll[t], cl[t]
        for j, (sma, rsi, kdj, macd, bb) in enumerate(handles):
            x = ct[j]
            last = (
                sma.update(x),
                rsi.update(x),
                kdj.update(ht[j], lt[j], x),
                macd.update(x),
                bb.update(x),
            )
    return last


def run_ours(
    states: dict[str, sf.State], h: np.ndarray, lo: np.ndarray, c: np.ndarray, inplace: bool
) -> Any:
    out = None
    for t in range(c.shape[0]):
        bar, hlc = c[t], (h[t], lo[t], c[t])
        out = {}
        for name, state in states.items():
            res, new = sf.step(hlc if name == "kdj" else bar, state.spec, state, inplace=inplace)
            states[name] = new
            out[name] = res
    return out


def live(args: argparse.Namespace) -> int:
    import pandas as pd

    from marketframe.stream import LiveIndicators

    n, history = args.symbols, 300
    steps = args.steps * args.pairs
    h, lo, c = market(n, history + steps + 1)
    syms = [f"S{j:04d}" for j in range(n)]
    t0 = pd.Timestamp("2026-11-20 03:00", tz="Asia/Taipei")  # all before the 13:35 cut
    minutes = pd.date_range(t0, periods=history + steps + 1, freq="min")
    warm = pd.DataFrame(
        {
            "symbol": np.repeat(syms, history),
            "date": np.tile(minutes[:history], n),
            "open": c[:history].T.ravel(),
            "high": h[:history].T.ravel(),
            "low": lo[:history].T.ravel(),
            "close": c[:history].T.ravel(),
            "volume": 1000.0,
        }
    )
    serial = 0

    def trades(t: int) -> pd.DataFrame:
        nonlocal serial
        serial += n
        return pd.DataFrame(
            {
                "symbol": syms,
                "time": minutes[t] + pd.Timedelta(seconds=1),
                "price": c[t],
                "size": 1.0,
                "serial": np.arange(serial - n, serial),
            }
        )

    load = os.getloadavg()
    print(f"live engine: {n} symbols x 5 indicators, {args.steps} closing steps per timing,"
          f" {args.pairs} interleaved pairs with TA-Lib's handles on the same bars, CPU time;"
          f" load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")  # fmt: skip
    results = []
    for label, peek in (("final rows only", False), ("with peeks", True)):
        eng = LiveIndicators(syms, [sf.spec(x, convention="talib") for x in NAMES])
        t = time.process_time()
        eng.warm(warm)
        print(f"  warm-up of {n} x {history} bars: {time.process_time() - t:.2f} s CPU")
        handles = open_talib(h[:history], lo[:history], c[:history])
        frames = [trades(history + k) for k in range(steps + 1)]
        eng.feed(frames[0], peek=peek)  # opens the first forming bars
        # TA-Lib steps bar t when ours closes it (the frame of minute t + 1 closes minute t)
        per, base, ratios = [], [], []
        for k in range(args.pairs):
            lo_, hi_ = 1 + k * args.steps, 1 + (k + 1) * args.steps
            gc.collect()
            times = {}
            for side in ("base", "ours") if k % 2 else ("ours", "base"):
                t = time.process_time()
                if side == "ours":
                    for f in frames[lo_:hi_]:
                        out = eng.feed(f, peek=peek)
                else:
                    bars = slice(history + lo_ - 1, history + hi_ - 1)
                    run_talib(handles, h[bars], lo[bars], c[bars])
                times[side] = time.process_time() - t
            assert int(out["is_final"].sum()) == n
            per.append(times["ours"] / (args.steps * n) * 1e6)
            base.append(times["base"] / (args.steps * n) * 1e6)
            ratios.append(times["ours"] / times["base"])
        us, ratio = statistics.median(per), statistics.median(ratios)
        print(f"  {label}: {us:.2f} us/symbol-update (spread {min(per):.2f}-{max(per):.2f});"
              f" TA-Lib handles {statistics.median(base):.2f} us; ratio {ratio:.3f}x"
              f" (spread {min(ratios):.3f}-{max(ratios):.3f})")  # fmt: skip
        verdict = "" if args.quick else ("met" if us <= TARGET_US else "MISSED")
        results.append(
            (f"live, {label}: us per symbol-update (target <= {TARGET_US})", us, verdict)
        )
        verdict = "" if args.quick else ("met" if ratio <= TARGET_RATIO else "MISSED")
        results.append(
            (f"live, {label}: / TA-Lib handles (target <= {TARGET_RATIO})", ratio, verdict)
        )
    print_ratios(results)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="200 symbols, 3 pairs, no targets")
    p.add_argument("--symbols", type=int, default=2000)
    p.add_argument("--steps", type=int, default=20, help="bars per timed run")
    p.add_argument("--pairs", type=int, default=7, help="interleaved pairs (>= 5)")
    p.add_argument("--copying", action="store_true", help="also time the value (copying) form")
    p.add_argument("--live", action="store_true", help="time the live engine (LiveIndicators)")
    args = p.parse_args(argv)
    if args.quick:
        args.symbols, args.pairs = 200, 3
    if args.live:
        return live(args)
    history = 300
    total = history + args.steps * (2 * args.pairs + 4)
    h, lo, c = market(args.symbols, total)
    specs = {name: sf.spec(name, convention="talib") for name in NAMES}
    states = {}
    for name, sp in specs.items():
        hist = (h[:history], lo[:history], c[:history]) if name == "kdj" else c[:history]
        states[name] = sf.apply(hist, sp)[1]
    t0 = time.perf_counter()
    handles = open_talib(h[:history], lo[:history], c[:history])
    opened = time.perf_counter() - t0
    cursor = history

    def feed() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        nonlocal cursor
        s = slice(cursor, cursor + args.steps)
        cursor += args.steps
        return h[s], lo[s], c[s]

    # the check (and warm-up): both sides on the same first bars, then equal last values
    bh, bl, bc = feed()
    theirs = run_talib(handles, bh, bl, bc)
    ours = run_ours(states, bh, bl, bc, True)
    last = args.symbols - 1
    for name, t_val in zip(NAMES, theirs, strict=True):
        o = ours[name]
        o_val = [float(a[last]) for a in o] if isinstance(o, tuple) else [float(o[last])]
        t_vals = [float(v) for v in np.atleast_1d(np.asarray(t_val, dtype=float))]
        assert np.allclose(o_val[: len(t_vals)], t_vals, rtol=1e-12, atol=1e-10), name
    updates = args.steps * args.symbols
    load = os.getloadavg()
    print(
        f"{args.symbols} symbols x 5 indicators, {args.steps} bars per timing, median of"
        f" {args.pairs} interleaved pairs; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"TA-Lib handles opened on {history} bars in {opened * 1e3:.0f} ms (not timed below)")
    results = []
    forms = [("in place", True)] + ([("copying", False)] if args.copying else [])
    for label, inplace in forms:
        ratios, t_o, t_b = [], [], []
        for i in range(args.pairs):
            bars = feed()
            gc.collect()
            sides = ("base", "ours") if i % 2 else ("ours", "base")
            times = {}
            for side in sides:
                t = time.perf_counter()
                if side == "ours":
                    run_ours(states, *bars, inplace)
                else:
                    run_talib(handles, *bars)
                times[side] = time.perf_counter() - t
            ratios.append(times["ours"] / times["base"])
            t_o.append(times["ours"] / updates * 1e6)
            t_b.append(times["base"] / updates * 1e6)
        ratio = statistics.median(ratios)
        us = statistics.median(t_o)
        print(
            f"  ours ({label}): {us:6.2f} us/symbol-update (spread {min(t_o):.2f}-{max(t_o):.2f});"
            f" TA-Lib handles {statistics.median(t_b):6.2f} us (spread {min(t_b):.2f}-"
            f"{max(t_b):.2f}); ratio {ratio:.3f}x (spread {min(ratios):.3f}-{max(ratios):.3f}x)"
        )
        verdict = "" if args.quick else ("met" if ratio <= TARGET_RATIO else "MISSED")
        results.append(
            (f"{label}: ours / TA-Lib handles (target <= {TARGET_RATIO})", ratio, verdict)
        )
        verdict = "" if args.quick else ("met" if us <= TARGET_US else "MISSED")
        results.append((f"{label}: us per symbol-update (target <= {TARGET_US})", us, verdict))
    print_ratios(results)
    load = os.getloadavg()
    print(f"load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
