"""The live engine left running: its memory and its checkpoint over several sessions.

Synthetic trades (a random walk per symbol, ``--trades`` per symbol per minute at random
seconds, serials rising) for ``--symbols`` symbols over ``--sessions`` regular sessions
(09:00-13:30, consecutive weekdays), fed to ``LiveIndicators`` (the five indicators) in
batches of ``--batch`` rows, as the stream delivers them. After each session (its bars
closed by ``flush()``) and mid-session it reports the engine's memory (``tracemalloc``: the
Python objects the run holds, measured as the increase since before the engine was made;
and the process's RSS), the closed bars and serials the engine keeps (the session's, at
most), and the checkpoint's size; on the mid-session checkpoint (the forming bars and their
serials, as ``Stream.indicators`` saves) it times ``save()`` and ``load()``, median and
spread of ``--repeat`` calls.

The bar: engine memory and checkpoint size after the last session within 10 % of after the
first; ``save()`` <= 50 ms (300 symbols).

    python benchmarks/live_state.py [--symbols 300] [--sessions 4] [--trades 4]
    python benchmarks/live_state.py --quick     # 30 symbols, 2 trades a minute
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

from marketframe.stream import LiveIndicators

SPECS = ["sma", "rsi", "kdj", "macd", "bbands"]
MINUTES = 271  # 09:00 to 13:30, the closing call's minute included


def sessions(count: int) -> list[pd.Timestamp]:
    """``count`` weekdays from Monday 2026-11-02 on (9:00 Taipei each)."""
    days = pd.bdate_range("2026-11-02", periods=count)
    return [pd.Timestamp(f"{d.date()} 09:00", tz="Asia/Taipei") for d in days]


def minutes(
    t0: pd.Timestamp, symbols: pd.Categorical, per: int, rng: np.random.Generator, serial: list[int]
) -> Iterator[pd.DataFrame]:
    """A session's trades, a frame per minute in time order."""
    n = len(symbols)
    price = 100 + rng.normal(0, 5, n)
    codes = np.repeat(np.arange(n), per)
    for m in range(MINUTES):
        secs = rng.integers(0, 60_000_000, n * per)
        order = np.argsort(secs, kind="stable")
        k = len(order)
        price = np.round(price + rng.normal(0, 0.05, n), 2)
        yield pd.DataFrame(
            {
                "symbol": pd.Categorical.from_codes(codes[order], dtype=symbols.dtype),
                "time": t0 + pd.to_timedelta(m * 60_000_000 + secs[order], unit="us"),
                "price": price[codes[order]],
                "size": rng.integers(1, 20, k).astype(float),
                "serial": np.arange(serial[0], serial[0] + k),
            }
        )
        serial[0] += k


def timed(fn: object, repeat: int) -> tuple[float, float, float]:
    """Median, fastest and slowest of ``repeat`` calls, in ms."""
    out = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out), min(out), max(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--symbols", type=int, default=300)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--trades", type=int, default=4, help="trades per symbol per minute")
    ap.add_argument("--batch", type=int, default=500, help="rows per batch fed")
    ap.add_argument("--repeat", type=int, default=7, help="save()/load() calls timed")
    ap.add_argument("--quick", action="store_true", help="30 symbols, 2 trades a minute")
    args = ap.parse_args()
    if args.quick:
        args.symbols, args.trades, args.repeat = 30, 2, 3
    names = [f"{1000 + i}" for i in range(args.symbols)]
    symbols = pd.Categorical(names, categories=names)
    rng = np.random.default_rng(7)
    proc = psutil.Process()
    tmp = Path(tempfile.mkdtemp(prefix="live_state_"))
    print(
        f"{args.symbols} symbols, {args.sessions} sessions of {MINUTES} minutes, "
        f"{args.trades} trades a symbol a minute, batches of {args.batch} rows",
        file=sys.stderr,
    )
    gc.collect()
    tracemalloc.start()  # the run's Python objects: the engine and what it keeps
    base = tracemalloc.get_traced_memory()[0]
    eng = LiveIndicators(names, SPECS)
    serial = [0]
    rows = []
    for k, t0 in enumerate(sessions(args.sessions), start=1):
        for m, frame in enumerate(minutes(t0, symbols, args.trades, rng, serial)):
            for lo in range(0, len(frame), args.batch):
                eng.feed(frame.iloc[lo : lo + args.batch], peek=False)
            if m == MINUTES // 2:  # mid-session: the session's bars and serials held
                eng.save(tmp / f"mid-{k}.npz")
                gc.collect()
                mid_mb = (tracemalloc.get_traced_memory()[0] - base) / 2**20
                mid_kept = eng._steps.kept()
        eng.flush()
        eng.save(tmp / f"end-{k}.npz")
        gc.collect()
        rows.append(
            {
                "traced MB": (tracemalloc.get_traced_memory()[0] - base) / 2**20,
                "mid MB": mid_mb,
                "mid kept": mid_kept,
                "rss MB": proc.memory_info().rss / 2**20,
                # counted as kept (``eng.bars`` would fold the logged arrays into lists)
                **dict(zip(("bars", "serials"), eng._steps.kept(), strict=True)),
                "kB": (tmp / f"end-{k}.npz").stat().st_size / 1e3,
                "mid kB": (tmp / f"mid-{k}.npz").stat().st_size / 1e3,
            }
        )
    tracemalloc.stop()
    # save()/load() timed untraced, on each session's mid-session checkpoint (the engine
    # loaded from it saves what the running one saved: states, forming bars, serials)
    for k, r in enumerate(rows, start=1):
        mid = tmp / f"mid-{k}.npz"
        again = LiveIndicators.load(mid)
        r["save"] = timed(lambda e=again: e.save(tmp / "again.npz"), args.repeat)
        r["load"] = timed(lambda p=mid: LiveIndicators.load(p), args.repeat)
        sv, ld = r["save"], r["load"]
        print(
            f"session {k}: engine {r['mid MB']:.2f} MB traced mid-session "
            f"({r['mid kept'][0]} closed bars, {r['mid kept'][1]} serials kept), "
            f"{r['traced MB']:.2f} MB at its end ({r['bars']} bars, {r['serials']} serials); "
            f"RSS {r['rss MB']:.0f} MB; checkpoint "
            f"{r['kB']:.1f} kB (mid-session {r['mid kB']:.1f} kB); mid-session save "
            f"{sv[0]:.1f} ms [{sv[1]:.1f}-{sv[2]:.1f}], load {ld[0]:.1f} ms "
            f"[{ld[1]:.1f}-{ld[2]:.1f}]"
        )
    first, last = rows[0], rows[-1]
    print(
        f"last / first session: engine memory {last['mid MB'] / first['mid MB']:.3f}x "
        f"mid-session, {last['traced MB'] / first['traced MB']:.3f}x at its end, "
        f"checkpoint {last['kB'] / first['kB']:.3f}x, mid-session "
        f"{last['mid kB'] / first['mid kB']:.3f}x (bar: <= 1.10x); save median "
        f"{statistics.median(r['save'][0] for r in rows):.1f} ms (bar: <= 50 ms)"
    )
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
