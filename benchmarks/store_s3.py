"""The object-storage figures of ``benchmarks/store.py`` (run from there, not alone).

The S3 server is the test suite's SeaweedFS fixture (``tests/store/_s3.py``), started on
127.0.0.1 with its own credentials, given to the code measured through the AWS variables.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import io
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from _common import ROOT, start_sandbox, write_held

from marketframe.client import Client
from marketframe.endpoints import split
from marketframe.store import Store
from marketframe.store._dataset import resolve
from marketframe.store._log import Log
from marketframe.store._storage import ObjectStorage

KEY = "sandbox-advanced"
NOW = "2026-01-05T14:00:00+08:00"
PAIRS = 7


@contextmanager
def s3_server(tmp: Path) -> Iterator[Any]:
    spec = importlib.util.spec_from_file_location("_s3", ROOT / "tests" / "store" / "_s3.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_s3"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    work = tmp / "seaweedfs"
    work.mkdir()
    server = mod.start(work)
    saved = {k: os.environ.get(k) for k in server.env()}
    os.environ.update(server.env())
    try:
        print(f"\nS3: SeaweedFS on {server.endpoint} (credentials in the AWS variables)")
        yield server
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def pairs(
    base: Callable[[], Any], ours: Callable[[], Any], n: int, inner: int = 1
) -> tuple[float, float, float, float, float]:
    """Interleaved timings: median baseline and ours (seconds per call), and the median,
    lowest and highest ratio ours / baseline of ``n`` pairs."""
    tb, to, ratios = [], [], []
    for _ in range(n):
        t = time.perf_counter()
        for _ in range(inner):
            base()
        b = (time.perf_counter() - t) / inner
        t = time.perf_counter()
        for _ in range(inner):
            ours()
        o = (time.perf_counter() - t) / inner
        tb.append(b)
        to.append(o)
        ratios.append(o / b)
    return (
        statistics.median(tb),
        statistics.median(to),
        statistics.median(ratios),
        min(ratios),
        max(ratios),
    )


def bench_s3_read(
    server: Any, template: pa.Table, n_symbols: int, n_pairs: int, tmp: Path
) -> list[tuple[str, float, str]]:
    bucket = server.bucket()
    url = f"s3://{bucket}/big"
    storage = ObjectStorage(url, server.options())
    spec = resolve("stock.historical.candles", "D", {})
    manifest = Log(storage)
    t = time.perf_counter()
    for i in range(n_symbols):
        sym = f"S{i:04d}"
        relabelled = template.set_column(
            template.schema.get_field_index("symbol"),
            "symbol",
            pa.array([sym] * template.num_rows, pa.string()),
        )
        write_held(storage, manifest, spec, sym, relabelled)
    manifest.commit()
    print(
        f"read: S3 store of {n_symbols} symbols built in {time.perf_counter() - t:.1f} s "
        "with the store's write path"
    )
    store = Store(url, storage_options=server.options())
    target = "S0042" if n_symbols > 42 else "S0001"
    mine = store.read("stock.historical.candles", target, backend="arrow")
    buf = io.BytesIO()
    pq.write_table(mine, buf, compression="zstd")
    key = f"{bucket}/standalone.parquet"
    storage.fs.pipe_file(key, buf.getvalue())

    def standalone() -> pa.Table:
        return pq.read_table(pa.BufferReader(storage.fs.cat_file(key)))

    assert standalone().num_rows == mine.num_rows
    tb, to, med, lo, hi = pairs(
        standalone,
        lambda: store.read("stock.historical.candles", target, backend="arrow"),
        n_pairs,
        inner=20,
    )
    print(
        f"  one standalone S3 object: GET + read_table    {tb * 1e3:8.2f} ms ({mine.num_rows} rows)"
    )
    print(
        f"  Store.read(one symbol, arrow) from S3         {to * 1e3:8.2f} ms "
        f"(manifest HEAD + GET + hash + page checksums)"
    )
    print(f"  ratio, median of {n_pairs} interleaved pairs: {med:.2f} (spread {lo:.2f}-{hi:.2f})")
    return [
        (
            "S3 Store.read / one standalone object (target <= 2)",
            med,
            "met" if med <= 2 else "MISSED",
        )
    ]


def bench_board(server: Any, n_symbols: int, rate: int, tmp: Path) -> list[tuple[str, float, str]]:
    proc, base, _ = start_sandbox(
        "--latency-ms",
        "20",
        "--rate-limit",
        str(rate),
        "--rate-window",
        "1",
        "--extra-equities",
        str(n_symbols),
        "--now",
        NOW,
    )
    out = []
    try:
        symbols = [str(9001 + i) for i in range(n_symbols)]
        n = n_symbols * len(split(dt.date(2010, 1, 1), dt.date(2025, 12, 31)))
        floor = (math.ceil(n / rate) - 1) * 1.0
        print(
            f"\nwhole board: {n_symbols} symbols x 16 windows = {n} requests, plan {rate} "
            f"requests/s, 20 ms latency; rate-limit floor {floor:.1f} s"
        )
        with Client(KEY, base_url=base, backend="arrow", cache=False, max_workers=16) as client:
            jobs = [
                (s, lo, hi)
                for s in symbols
                for lo, hi in split(dt.date(2010, 1, 1), dt.date(2025, 12, 31))
            ]
            time.sleep(1.1)  # a fresh rate-limit window, as for the syncs below
            t = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                list(
                    pool.map(
                        lambda j: client.fetch(
                            "stock.historical.candles",
                            symbol=j[0],
                            from_=j[1],
                            to=j[2],
                            timeframe="D",
                            sort="asc",
                            refresh=True,
                        ),
                        jobs,
                    )
                )
            took = time.perf_counter() - t
        print(f"  the client alone, same windows (no store)     {took:8.2f} s")
        out.append(("client alone / rate-limit floor (info)", took / floor, ""))
        for kind, where, opts in (
            ("local", str(tmp / "board"), {}),
            ("S3", f"s3://{server.bucket()}/board", {"storage_options": server.options()}),
        ):
            with (
                Client(KEY, base_url=base, backend="arrow", cache=False, max_workers=16) as client,
                Store(where, client, **opts) as st,
            ):
                # the plan's window starts afresh: wait for the sandbox's window to roll
                time.sleep(1.1)
                t = time.perf_counter()
                report = st.sync(
                    "stock.historical.candles", symbols, "2010-01-01", "2025-12-31", progress=False
                )
                took = time.perf_counter() - t
                assert report.ok and report.windows_fetched == n, report
            ratio = took / floor
            print(
                f"  Store.sync into a {kind:5s} store                {took:8.2f} s  "
                f"({report.requests} requests, {report.retries} retries)"
            )
            out.append(
                (
                    f"board sync ({kind}) / rate-limit floor (target <= 1.2)",
                    ratio,
                    "met" if ratio <= 1.2 else "MISSED",
                )
            )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return out
