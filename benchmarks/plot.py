"""Charts: ``df.md.plot()`` of 10 symbols x 5 years of daily candles plus ``savefig``.

Prints, for the default window (the last 120 bars of each symbol) and for every bar
(``last=None``), the time to draw and to save the chart, beside matplotlib drawing the same
number of candle bodies as one ``PolyCollection`` on one axes of the same size and saving
it (the least any candlestick chart can cost). Target: chart + ``savefig`` <= 2 s for the
10 x 5 years frame (default window). Not a timed test: run it on an idle machine,
``python3 benchmarks/plot.py`` (``--repeat N``, best of N; ``--quick`` for 3 symbols;
``--clock cpu`` counts this process's CPU time, for a machine busy with other work: drawing
is single-threaded, so waiting for a core counts against neither side).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import sys
import time
from typing import Any

import matplotlib

matplotlib.use("agg")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import marketframe  # noqa: E402
from marketframe import plot  # noqa: E402
from marketframe.plot import _artists  # noqa: E402

SYMBOLS = ["2330", "2317", "2454", "0050", "0056", "2412", "2881", "2882", "1301", "2002"]
TARGET = 2.0
clock = time.perf_counter


def frame(symbols: list[str]) -> Any:
    with marketframe.Client.sandbox(now="2026-11-20T14:00:00+08:00") as client:
        candles = marketframe.download(symbols, "2021-11-21", "2026-11-20", client=client)
    return candles.md.sma(20).md.bbands().md.rsi(14).md.kdj().md.macd()


def chart(df: Any, last: int | None) -> tuple[float, float]:
    import matplotlib.pyplot as plt

    gc.collect()  # the last run's closed figure is garbage: not this run's cost
    t0 = clock()
    fig = df.md.plot(last=last)
    t1 = clock()
    fig.savefig(io.BytesIO(), format="png", dpi=110)
    t2 = clock()
    plt.close(fig)
    return t1 - t0, t2 - t1


def baseline(bars: int, figsize: tuple[float, float]) -> float:
    """One PolyCollection of ``bars`` rectangles on one axes, then savefig."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    rng = np.random.default_rng(0)
    x = np.arange(bars, dtype="float64")
    lo = 100 + rng.standard_normal(bars).cumsum()
    hi = lo + rng.uniform(0.1, 2.0, bars)
    gc.collect()
    t0 = clock()
    fig = plt.figure(figsize=figsize)
    ax = fig.add_subplot()
    ax.add_collection(
        PolyCollection(_artists._rectangles(x, lo, hi), facecolors=plot.UP, edgecolors=plot.UP)
    )
    ax.set_xlim(-1, bars)
    ax.set_ylim(float(lo.min()), float(hi.max()))
    fig.savefig(io.BytesIO(), format="png", dpi=110)
    t1 = clock()
    plt.close(fig)
    return t1 - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    ap.add_argument("--quick", action="store_true", help="3 symbols")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args()
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    symbols = SYMBOLS[:3] if args.quick else SYMBOLS
    df = frame(symbols)
    per = df.groupby("symbol", observed=True).size()
    print(
        f"{len(symbols)} symbols x 5 years: {len(df):,} daily candles; {args.clock} clock; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    chart(df, plot.LAST)  # warm-up: imports, fonts
    for last in (plot.LAST, None):
        runs = [chart(df, last) for _ in range(args.repeat)]
        draw, save = min(runs, key=sum)
        bars = int(per.clip(upper=last).sum()) if last else len(df)
        size = (11.0, 5.0 * len(symbols))
        base = min(baseline(bars, size) for _ in range(args.repeat))
        total = draw + save
        verdict = ""
        if last == plot.LAST:
            verdict = f"target <= {TARGET:.1f} s: {'met' if total <= TARGET else 'MISSED'}"
        print(
            f"last={last!s:5}: draw {draw:.2f} s + savefig {save:.2f} s = {total:.2f} s; "
            f"one PolyCollection of the same {bars:,} bodies + savefig {base:.2f} s "
            f"({total / base:.1f}x)  {verdict}"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
