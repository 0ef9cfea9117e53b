"""The store's log at market scale: bookkeeping, the store's own time, growth, opening, as_of.

A daily sync of a market: N symbols of daily candles held for a year, then one new day
synced, against a sandbox in ANOTHER process with ``--extra-equities`` (symbols 9001...).

1. **Bookkeeping** of the new day's sync (the real sync, HTTP included): bytes the log wrote
   (entries and checkpoints) against the bytes of the records those entries changed; the
   commits against the sync's time (at most one per ``commit_every`` = 2 s, plus one).
2. **The store's own time** (everything but HTTP): the day's answers are fetched and typed
   once; then ``commit_symbol`` for every symbol through one group commit, exactly the
   sync's write path (the cheap check of each file, the merge, staging, the log's entries,
   publishing with the replaced version kept) against **pyarrow alone** writing the same part
   files (read the partition, append the rows, ``pq.write_table`` to a temporary file,
   fsync, rename, fsync the directory). Interleaved pairs on fresh copies of the store;
   median ratio and spread. Target: at most 1.3x.
3. **Growth**: the store's time per symbol at each N (500, 1,000, 2,000, 4,000 by default).
   Target: within +-25 % of each other.
4. **Opening and reading as of**: a store whose state (2,000 symbols' records) was committed
   in 10,000 generations, against the same state as one ``_manifest.json`` of the layout
   before the log (read by the same code that opens such stores). Target: at most 2x. Then
   ``read(as_of=snapshot)`` of one symbol against the current read. Target: at most 1.5x.

Run from the repository root: ``python3 benchmarks/store_log.py [--sizes 500 1000 ...]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _common import print_ratios, start_sandbox  # noqa: E402

from marketframe.client import Client  # noqa: E402
from marketframe.store import Store, SyncReport  # noqa: E402
from marketframe.store._dataset import Fetch, resolve  # noqa: E402
from marketframe.store._log import Log  # noqa: E402
from marketframe.store._storage import LocalStorage, fsync_dir  # noqa: E402
from marketframe.store._sync._batch import Batch  # noqa: E402
from marketframe.store._sync._commit import commit_symbol, forget_damaged  # noqa: E402

KEY = "sandbox-advanced"
NOW = "2026-11-20T14:00:00+08:00"  # a Friday after the close
C = "stock.historical.candles"
HELD = ("2025-11-20", "2026-11-19")  # the year held before the new day
DAY = dt.date(2026, 11, 20)


def symbols(n: int) -> list[str]:
    """The sandbox's extra equities 1..n (9001..9999, then 91000...)."""
    return [f"9{i:03d}" if i < 1000 else f"9{i:04d}" for i in range(1, n + 1)]


def build(base: str, n: int, root: Path) -> None:
    with Store(root, api_key=KEY, base_url=base, max_workers=16) as st:
        st.sync(C, symbols(n), *HELD, progress=False)


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, copy_function=shutil.copy2)  # times kept: the cheap check holds
    return dst


def day_tables(base: str, syms: list[str]) -> dict[str, pa.Table]:
    """The new day's answer of every symbol, fetched and typed once."""
    with Client(KEY, base_url=base, backend="arrow", cache=False, max_workers=16) as client:
        reqs = [
            client.prepare(C, symbol=s, from_=DAY, to=DAY, timeframe="D", sort="asc", refresh=True)
            for s in syms
        ]
        out = {}
        for s, got in zip(syms, client.send_all(reqs), strict=True):
            assert got.error is None, got.error
            out[s] = got.result.table
        return out


def store_side(root: Path, tables: dict[str, pa.Table]) -> float:
    """The sync's write path over answers already typed: seconds."""
    spec = resolve(C, "D", {})
    storage = LocalStorage(root)
    t0 = time.perf_counter()
    log = Log(storage)
    report = SyncReport(spec.ds.key)
    forget_damaged(storage, log, spec.ds, list(tables), report)
    batch = Batch(storage, log, f"sync {C}")
    lock = threading.Lock()
    for sym, table in tables.items():
        task = Fetch(sym, (DAY, DAY), DAY)
        log.final(spec.ds, sym)  # the plan's look at what is held
        commit_symbol(batch, storage, log, spec, sym, [(task, table, DAY)], report, lock)
    batch.close()
    took = time.perf_counter() - t0
    assert report.rows_written == sum(t.num_rows for t in tables.values())
    return took


def pyarrow_alone(root: Path, tables: dict[str, pa.Table]) -> float:
    """The same files written with pyarrow alone: read, append, write, fsync, rename."""
    base = root / f"dataset={C}" / "params=default" / "tf=D"
    t0 = time.perf_counter()
    for sym, table in tables.items():
        path = base / f"sym={sym}" / "part-0.parquet"
        old = pq.read_table(path, partitioning=None)
        new = pa.concat_tables([old, table.select(old.column_names).cast(old.schema)])
        tmp = path.with_name(".part-0.parquet.tmp")
        pq.write_table(new, tmp, compression="snappy")
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    return time.perf_counter() - t0


def bookkeeping(base: str, held: Path, work: Path) -> dict[str, Any]:
    """The real sync of the new day: what its log wrote, against what it changed."""
    root = copy(held, work / "real")
    with Store(root, api_key=KEY, base_url=base, max_workers=16) as st:
        log = st._parts.log
        first, written0 = log.generation, log.written
        t0 = time.perf_counter()
        report = st.sync(C, list(symbols_of(held)), HELD[0], DAY, progress=False)
        took = time.perf_counter() - t0
        assert report.ok and report.rows_written > 0
        changed = 0
        for g in range(first + 1, log.generation + 1):
            body = orjson.loads((root / "_log" / f"{g:020d}.json").read_bytes().split(b"\n")[0])
            for kind in ("datasets", "symbols", "files", "versions"):
                for v in body["changes"].get(kind, {}).values():
                    changed += len(orjson.dumps(v))
        state = len(orjson.dumps(log._data))
        return {
            "seconds": took,
            "commits": log.commits,
            "written": log.written - written0,
            "changed": changed,
            "state": state,
        }


def symbols_of(root: Path) -> list[str]:
    base = root / f"dataset={C}" / "params=default" / "tf=D"
    return sorted(p.name.removeprefix("sym=") for p in base.iterdir())


def bench_size(base: str, n: int, work: Path, pairs: int) -> tuple[list[float], list[float]]:
    held = work / f"held{n}"
    t0 = time.perf_counter()
    build(base, n, held)
    print(f"  {n} symbols: a year held, built in {time.perf_counter() - t0:.0f} s")
    tables = day_tables(base, symbols(n))
    ours, theirs = [], []
    for i in range(pairs):
        a, b = copy(held, work / f"a{n}.{i}"), copy(held, work / f"b{n}.{i}")
        if i % 2:
            ours.append(store_side(a, tables))
            theirs.append(pyarrow_alone(b, tables))
        else:
            theirs.append(pyarrow_alone(b, tables))
            ours.append(store_side(a, tables))
        shutil.rmtree(a)
        shutil.rmtree(b)
    return ours, theirs


def opening(work: Path) -> tuple[float, float, float]:
    """Open a 10,000-generation store and the same state as one layout-2 manifest; then
    read one symbol as of a snapshot against the current read. Medians of seconds."""
    from marketframe.store._log._legacy import MANIFEST

    spec = resolve(C, "D", {})
    logroot, oldroot = work / "log10k", work / "manifest"
    logroot.mkdir()
    oldroot.mkdir()
    log = Log(LocalStorage(logroot))
    day = dt.date(2025, 1, 1)
    syms = [str(9001 + i) for i in range(2000)]
    g = 0
    while g < 10_000:  # every symbol's record changed five times, one commit each
        sym = syms[g % len(syms)]
        log.record(spec.ds, sym, (day, day + dt.timedelta(days=g // 2000)), day, empty=False)
        log.commit_file(
            spec.ds,
            f"dataset={C}/params=default/tf=D/sym={sym}/part-0.parquet",
            {"size": 9000 + g, "rows": 250, "hash": f"{g:064x}", "mtime_ns": 10**18 + g},
        )
        log.commit()
        g += 1
    doc = {**log._data, "version": 2}
    doc.pop("versions", None)
    (oldroot / MANIFEST).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    opens_log, opens_old = [], []
    for _ in range(7):
        t = time.perf_counter()
        Log(LocalStorage(oldroot))
        opens_old.append(time.perf_counter() - t)
        t = time.perf_counter()
        Log(LocalStorage(logroot))
        opens_log.append(time.perf_counter() - t)
    return statistics.median(opens_log), statistics.median(opens_old), 0.0


def as_of_read(base: str, work: Path) -> tuple[float, float]:
    root = work / "asof"
    with Store(root, api_key=KEY, base_url=base) as st:
        st.sync(C, symbols(50), HELD[0], "2026-11-18", progress=False)
        st.snapshot("before")
        st.sync(C, symbols(50), HELD[0], DAY, progress=False)
        st.read(C, "9001", as_of="before")  # the snapshot's state loaded once
        now, then = [], []
        for _ in range(31):
            t = time.perf_counter()
            st.read(C, "9001", backend="arrow")
            now.append(time.perf_counter() - t)
            t = time.perf_counter()
            st.read(C, "9001", backend="arrow", as_of="before")
            then.append(time.perf_counter() - t)
    return statistics.median(then), statistics.median(now)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    ap.add_argument("--pairs", type=int, default=4)
    args = ap.parse_args()
    most = max(args.sizes)
    proc, base, _ = start_sandbox("--now", NOW, "--rate-limit", "0", "--extra-equities", str(most))
    results: list[tuple[str, float, str]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="mf-log-") as tmp:
            work = Path(tmp)
            per_symbol = {}
            for n in args.sizes:
                ours, theirs = bench_size(base, n, work, args.pairs)
                ratios = [o / t for o, t in zip(ours, theirs, strict=True)]
                per_symbol[n] = statistics.median(ours) / n
                print(
                    f"  {n} symbols: store {statistics.median(ours):.2f} s, pyarrow alone "
                    f"{statistics.median(theirs):.2f} s, ratio {statistics.median(ratios):.2f} "
                    f"[{min(ratios):.2f}-{max(ratios):.2f}], {per_symbol[n] * 1e3:.2f} ms/symbol"
                )
                if n == 2000 or n == most:
                    r = statistics.median(ratios)
                    results.append(
                        (
                            f"store time / pyarrow alone, {n} symbols",
                            r,
                            "met" if r <= 1.3 else "MISSED",
                        )
                    )
                    book = bookkeeping(base, work / f"held{n}", work / f"book{n}")
                    ratio = book["written"] / book["changed"]
                    allowed = math.ceil(book["seconds"] / 2) + 1
                    print(
                        f"  {n} symbols, a real sync of the new day: {book['seconds']:.1f} s, "
                        f"{book['commits']} commits (allowed {allowed:.1f}), log wrote "
                        f"{book['written'] / 1e6:.2f} MB for {book['changed'] / 1e6:.2f} MB of "
                        f"changed records (state {book['state'] / 1e6:.2f} MB)"
                    )
                    results.append(
                        (
                            f"log bytes / changed records, {n} symbols",
                            ratio,
                            "met" if ratio <= 4 else "MISSED",
                        )
                    )
                    results.append(
                        (
                            f"commits / (sync seconds / 2 + 1), {n} symbols",
                            book["commits"] / allowed,
                            "met" if book["commits"] <= allowed else "MISSED",
                        )
                    )
                shutil.rmtree(work / f"held{n}")
            mid = statistics.median(per_symbol.values())
            spread = max(abs(v / mid - 1) for v in per_symbol.values())
            results.append(
                (
                    "growth: worst time per symbol vs the median, +-",
                    spread,
                    "met" if spread <= 0.25 else "MISSED",
                )
            )
            log_open, old_open, _ = opening(work)
            print(
                f"  open: 10,000 generations {log_open * 1e3:.1f} ms, one manifest "
                f"{old_open * 1e3:.1f} ms"
            )
            results.append(
                (
                    "open 10,000 generations / one manifest",
                    log_open / old_open,
                    "met" if log_open <= 2 * old_open else "MISSED",
                )
            )
            then, now = as_of_read(base, work)
            print(
                f"  read one symbol: as of a snapshot {then * 1e3:.2f} ms, now {now * 1e3:.2f} ms"
            )
            results.append(
                (
                    "read(as_of=snapshot) / read",
                    then / now,
                    "met" if then <= 1.5 * now else "MISSED",
                )
            )
    finally:
        proc.terminate()
        proc.wait()
    print_ratios(results)


if __name__ == "__main__":
    main()
