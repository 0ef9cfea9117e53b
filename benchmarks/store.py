"""Store benchmarks: ours and a baseline in the same run, printed as ratios.

1. Sync 50 symbols of daily candles 2010-01-01..2025-12-31 (16 windows each) against a sandbox
   running in ANOTHER process (so the server does not compete for our GIL) with 20 ms injected
   latency: ``Store.sync`` (concurrent windows through one client, conversion and Parquet
   writes included) against a sequential loop of plain ``requests.get`` over the same windows
   (JSON decoding only, nothing written). Target: at least 6x faster. One concurrent pass over
   every window first warms the sandbox's caches, so both timed runs see the same server; every
   request asks ``sort=asc`` as the store does, so the warmed answers are the ones both use.
   ``--pairs`` interleaved pairs (baseline then ours, then ours then baseline, ...), each sync
   into a fresh store; the ratio is the median of the pairs' ratios, printed with its spread.
2. Read one symbol's 15 years from a store holding 500 symbols (built with the store's own
   upsert path from the synced rows, relabelled) against ``pyarrow.parquet.read_table`` of one
   standalone file holding the same rows. Target: at most 2x.

3. The same read from a 500-symbol store on S3-compatible object storage (a SeaweedFS server
   on 127.0.0.1, started here) against fetching one standalone object of the same rows and
   parsing it (``pq.read_table`` of its bytes, through the same s3fs filesystem). Target: at
   most 2x. Median of interleaved pairs, with the spread.
4. A whole-board sync (``--board`` symbols x 16 yearly windows, daily 2010-2025) under the
   plan's rate limit (``--rate-limit`` requests per second), into a local and into an S3
   store, against the rate-limit floor: the first window's budget at once, then one budget
   per window, i.e. ``(ceil(requests / limit) - 1) * window`` seconds. Target: at most 1.2x.

Run from the repository root: ``python3 benchmarks/store.py [--quick] [--no-s3]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import requests  # noqa: E402
from _common import best, print_ratios, start_sandbox, write_held  # noqa: E402

from marketframe.client import Client  # noqa: E402
from marketframe.endpoints import split  # noqa: E402
from marketframe.store import Store, _io  # noqa: E402
from marketframe.store._dataset import resolve  # noqa: E402
from marketframe.store._log import Log  # noqa: E402
from marketframe.store._storage import LocalStorage  # noqa: E402

KEY = "sandbox-advanced"
NOW = "2026-01-05T14:00:00+08:00"


def bench_sync(
    n_symbols: int, first_year: int, workers: int, root: Path, pairs: int = 5
) -> tuple[list[tuple[str, float, str]], pa.Table]:
    proc, base, _ = start_sandbox(
        "--latency-ms", "20", "--rate-limit", "0", "--extra-equities", str(n_symbols), "--now", NOW
    )
    try:
        symbols = [str(9001 + i) for i in range(n_symbols)]
        import datetime as dt

        windows = split(dt.date(first_year, 1, 1), dt.date(2025, 12, 31))
        jobs = [(s, lo, hi) for s in symbols for lo, hi in windows]
        print(
            f"sync: {n_symbols} symbols x {len(windows)} windows = {len(jobs)} requests "
            f"({first_year}-01-01..2025-12-31, daily), sandbox in another process, "
            "20 ms latency"
        )
        session = requests.Session()
        session.headers["X-API-KEY"] = KEY

        def get(job: tuple[str, Any, Any]) -> Any:
            s, lo, hi = job
            r = session.get(
                f"{base}/stock/historical/candles/{s}",
                params={
                    "from": lo.isoformat(),
                    "to": hi.isoformat(),
                    "timeframe": "D",
                    "sort": "asc",
                },
                timeout=60,
            )
            r.raise_for_status()
            return r.json()

        t = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(get, jobs))
        print(f"  warm-up pass (concurrent, untimed baseline)   {time.perf_counter() - t:8.2f} s")

        def plain_get(job: tuple[str, Any, Any]) -> Any:  # the baseline, verbatim
            s, lo, hi = job
            r = requests.get(
                f"{base}/stock/historical/candles/{s}",
                params={
                    "from": lo.isoformat(),
                    "to": hi.isoformat(),
                    "timeframe": "D",
                    "sort": "asc",
                },
                headers={"X-API-KEY": KEY},
                timeout=60,
            )
            r.raise_for_status()
            return r.json()

        t = time.perf_counter()
        rows_s = sum(len(get(job)["data"]) for job in jobs)
        t_sess = time.perf_counter() - t
        print(f"  sequential Session.get (keep-alive), info     {t_sess:8.2f} s  ({rows_s} rows)")
        with Client(
            KEY, base_url=base, backend="arrow", cache=False, max_workers=workers
        ) as client:
            runs = 0

            def baseline() -> int:
                return sum(len(plain_get(job)["data"]) for job in jobs)

            def ours() -> Any:
                nonlocal runs
                runs += 1  # a fresh store each time: every window is fetched and written
                with Store(root / f"synced-{runs}", client) as store:
                    return store.sync(
                        "stock.historical.candles",
                        symbols,
                        f"{first_year}-01-01",
                        "2025-12-31",
                        progress=False,
                    )

            ratios, t_seqs, t_ourss = [], [], []
            for i in range(pairs):
                order = (baseline, ours) if i % 2 == 0 else (ours, baseline)
                took = {}
                for fn in order:
                    gc.collect()
                    t = time.perf_counter()
                    took[fn.__name__] = (fn(), time.perf_counter() - t)
                rows, t_seq = took["baseline"]
                report, t_ours = took["ours"]
                assert report.ok and report.requests == len(jobs), report
                assert report.rows_written == rows, (report.rows_written, rows)
                ratios.append(t_seq / t_ours)
                t_seqs.append(t_seq)
                t_ourss.append(t_ours)
                print(
                    f"  pair {i + 1}: sequential requests.get {t_seq:6.2f} s, "
                    f"Store.sync ({workers} workers) {t_ours:5.2f} s, ratio {t_seq / t_ours:5.2f}"
                    f"  ({report.rows_written} rows, {report.requests} requests)"
                )
            with Store(root / f"synced-{runs}", client) as store:
                t = time.perf_counter()
                again = store.sync(
                    "stock.historical.candles",
                    symbols,
                    f"{first_year}-01-01",
                    "2025-12-31",
                    progress=False,
                )
                t_again = time.perf_counter() - t
                assert again.requests == 0
                one = store.read("stock.historical.candles", symbols[0], backend="arrow")
        print(
            f"  Store.sync again (nothing missing)            {t_again:8.3f} s  "
            f"({again.requests} requests)"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ratio = statistics.median(ratios)
    spread = f"[{min(ratios):.2f}..{max(ratios):.2f}]"
    return [
        (
            f"sequential requests.get / Store.sync {spread} (target >= 6)",
            ratio,
            "met" if ratio >= 6 else "MISSED",
        ),
        (
            "sequential Session.get / Store.sync (info)",
            t_sess / statistics.median(t_ourss),
            "",
        ),
    ], one


def bench_read(
    template: pa.Table, n_symbols: int, repeat: int, root: Path
) -> list[tuple[str, float, str]]:
    spec = resolve("stock.historical.candles", "D", {})
    store_root = root / "big"
    years = len(_io.split_by_year(template))
    t = time.perf_counter()
    store_root.mkdir(parents=True)
    manifest = Log(LocalStorage(store_root))
    for i in range(n_symbols):
        sym = f"S{i:04d}"
        relabelled = template.set_column(
            template.schema.get_field_index("symbol"),
            "symbol",
            pa.array([sym] * template.num_rows, pa.string()),
        )
        write_held(LocalStorage(store_root), manifest, spec, sym, relabelled)
    manifest.commit()
    files = len(manifest.files(spec.ds))
    print(
        f"read: store of {n_symbols} symbols x {years} years of daily candles "
        f"({files} files: one per symbol) built in {time.perf_counter() - t:.1f} s "
        "with the store's write path (checksummed, hashed, fsynced)"
    )
    store = Store(store_root)
    target = "S0042" if n_symbols > 42 else "S0001"
    mine = store.read("stock.historical.candles", target, backend="arrow")
    standalone = root / "standalone.parquet"
    pq.write_table(mine, standalone, compression="zstd")
    assert pq.read_table(standalone).num_rows == mine.num_rows == template.num_rows
    assert pc.all(pc.equal(pq.read_table(standalone).column("close"), mine.column("close"))).as_py()
    t_file = best(lambda: pq.read_table(standalone), repeat)
    t_read = best(lambda: store.read("stock.historical.candles", target, backend="arrow"), repeat)
    files = [
        store_root / rel
        for rel, _ in _io.recorded(manifest.files(spec.ds), [target], None, spec.ds)
    ]
    t_floor = best(lambda: [pq.ParquetFile(p).read() for p in files], repeat)
    t_file_pd = best(lambda: pq.read_table(standalone).to_pandas(), repeat)
    t_read_pd = best(lambda: store.read("stock.historical.candles", target), repeat)
    print(
        f"  pyarrow.parquet.read_table(one file)          {t_file * 1e3:8.2f} ms "
        f"({mine.num_rows} rows)"
    )
    print(f"  Store.read(one symbol, arrow)                 {t_read * 1e3:8.2f} ms")
    label = f"ParquetFile(path).read() x {len(files)} partition file(s)"
    print(f"  {label:46s}{t_floor * 1e3:8.2f} ms")
    print(f"  read_table(...).to_pandas()                   {t_file_pd * 1e3:8.2f} ms")
    print(f"  Store.read(one symbol, pandas)                {t_read_pd * 1e3:8.2f} ms")
    ratio = t_read / t_file
    return [
        (
            "Store.read / read_table of one file (target <= 2)",
            ratio,
            "met" if ratio <= 2 else "MISSED",
        ),
        ("Store.read / ParquetFile.read of its files (info)", t_read / t_floor, ""),
        ("Store.read pandas / read_table+to_pandas (info)", t_read_pd / t_file_pd, ""),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 symbols from 2020, 50 in the store")
    ap.add_argument(
        "--workers", type=int, default=16, help="concurrent requests (the Store default: 16)"
    )
    ap.add_argument("--pairs", type=int, default=5, help="interleaved sync pairs (>= 5)")
    ap.add_argument("--no-s3", action="store_true", help="skip the object-storage figures")
    ap.add_argument("--board", type=int, default=40, help="symbols of the rate-limited board")
    ap.add_argument("--rate-limit", type=int, default=50, help="the plan: requests per second")
    args = ap.parse_args(argv)
    n_sync, first_year, n_store, repeat = (10, 2020, 50, 20) if args.quick else (50, 2010, 500, 50)
    with tempfile.TemporaryDirectory(prefix="marketframe-bench-") as tmp:
        results, one = bench_sync(n_sync, first_year, args.workers, Path(tmp), args.pairs)
        results += bench_read(one, n_store, repeat, Path(tmp))
        if not args.no_s3:
            from store_s3 import bench_board, bench_s3_read, s3_server

            with s3_server(Path(tmp)) as server:
                results += bench_s3_read(server, one, n_store, 9 if args.quick else 15, Path(tmp))
                results += bench_board(
                    server, 10 if args.quick else args.board, args.rate_limit, Path(tmp)
                )
    print_ratios(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
