"""``Store.compute`` over a synthetic store of one-minute bars (not in CI).

    python3 benchmarks/compute.py                # 2e8 bars: 300 symbols x ~10 years
    python3 benchmarks/compute.py --rows 2e7     # the reduced run of this 2-core machine

The store is written straight in the store layout (one Parquet file per symbol and year,
recorded in the manifest as a sync records them). Measured, for all five indicators:
peak RSS of the computing process (target <= 1.5 GB), throughput in bars per second per core
against ``df.md`` over the same rows in memory, both in CPU time (>= 0.7x), two worker
processes against one, wall clock, median of interleaved pairs on fresh stores (>= 1.7x), and
an appended day recomputed against the full run, CPU time (<= 2%): three days appended one
after another, each computed on its own, and their median.

Two yardsticks beside the throughput, on one symbol's rows scaled to the store: a user's own
pipeline without ``compute`` (read the symbol's history into memory, ``df.md``,
``to_parquet``), and the throughput's ceiling: ``df.md`` plus the least a file of the store
costs to write (the outputs as plain Parquet pages with page checksums, hashed with SHA-256;
no reading, statistics, symbol or bar-time columns, disk or fsync).

Two workers against one: the worker pool's server is started (and its imports paid) once
before the pairs, as in any process that computes more than once; the first start is printed
on its own. Beside each pair the machine's own ceiling is measured the same way: a fixed
CPU-bound function (no I/O, no shared state) run twice in this process against once in each
of two processes of a forkserver pool like compute's. On a shared 2-core host that ceiling is
itself well below 2x and moves between minutes, so the script prints both and their quotient.

The machine's speed drifts by up to 2x between minutes here, so with pairs the throughput
and the appended day are also measured per pair, beside that pair's one-worker run
(``df.md`` over every symbol's rows; one day appended to that store), and printed as a
median with its spread; the first run's single figures are kept for the 2e8 run.

``--pairs 0`` skips the pairs (a 2e8-bar run holds one store of about 21 GB, not three).

Against what users run instead (``--against compute,polars,compute-windowed,duckdb --rows
2e7 --symbols 300``): on the same store, compute of the five indicators against polars lazy
(``scan_parquet`` of the source dataset, the closest polars expressions over each symbol,
``sink_parquet``; see :func:`polars_job` for which are exact), and compute of SMA and
Bollinger alone against DuckDB's window SQL of the same two (``COPY ... TO`` Parquet; window
SQL has no recursion). Each job runs in a fresh process of its own (compute over a fresh copy
of the store, ``max_workers=1``); its CPU time counts all its threads, from just before the
work to just after (no imports), and its peak RSS is the process's. Rounds interleave the
jobs, the order rotating; the ratios are per round, printed as median [spread].

Fixed cost per symbol (``--fixed --rows 4e6``): full runs over 300 symbols and over 3,000
with the same bar count, in interleaved rounds, each in a fresh process; then, in the last
round, ``--appended`` days appended to each store one after another, each computed on its
own: CPU per symbol.

How an appended day's cost grows with the history held (``--history --years 4``): stores of
``--symbols`` (100) symbols built as a daily job builds them, ``--chunk`` (10) days synced and
computed at a time, over one year and over ``--years``, each in a fresh process; then
``--appended`` days appended one at a time: CPU a symbol, and the derived files the log
records a symbol and indicator (what every rerun checks and plans). Rounds interleave the
two lengths.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import marketframe  # noqa: E402,F401
from marketframe.store import Store, _io  # noqa: E402
from marketframe.store._dataset import resolve  # noqa: E402

SPECS = ["sma", "rsi", "kdj", "macd", "bbands"]
PER_DAY = 270
YEAR_DAYS = 245
APPENDED = 3  # days appended after the full run, each computed on its own


def write_store(
    root: Path, symbols: int, days: int, first: int = 0, store: Store | None = None
) -> Store:
    """Days ``first .. first+days-1`` of every symbol, one file per (symbol, year)."""
    st = store or Store(root)
    spec = resolve("stock.historical.candles", "1", {})
    rng = np.random.default_rng(first + 1)
    for j in range(symbols):
        sym = f"{1000 + j}"
        n = days * PER_DAY
        close = np.round(100 * np.exp(np.cumsum(rng.normal(0, 1e-3, n))), 2)
        spread = np.round(np.abs(rng.normal(0, 5e-4, n)) * close, 2)
        day = np.repeat(np.arange(first, first + days), PER_DAY)
        minute = np.tile(np.arange(PER_DAY), days)
        t0 = np.datetime64("2010-01-04T01:00", "us")  # 09:00 Taipei
        ts = (
            t0 + (day // 5 * 7 + day % 5).astype("timedelta64[D]") + minute.astype("timedelta64[m]")
        )
        year = ts.astype("datetime64[Y]").astype(int) + 1970
        for y in np.unique(year):
            m = year == y
            tab = pa.table(
                {
                    "symbol": pa.array([sym] * int(m.sum())),
                    "timeframe": pa.array(["1"] * int(m.sum())),
                    "date": pa.array(ts[m], pa.timestamp("us", "Asia/Taipei")),
                    "open": close[m],
                    "high": close[m] + spread[m],
                    "low": close[m] - spread[m],
                    "close": close[m],
                    "volume": pa.array(np.full(int(m.sum()), 1000), pa.int64()),
                }
            )
            from marketframe.store._report import SyncReport
            from marketframe.store._sync import _commit

            _commit.write_rows(
                st._parts.storage, st._parts.log, spec, sym, tab, SyncReport(spec.ds)
            )
        span = ts[[0, -1]].astype("datetime64[D]").tolist()
        st._parts.log.record(
            spec.ds, sym, (span[0], span[1]), None, empty=False, params=spec.params
        )
        if j % 100 == 99:  # a commit per symbol made a 3,000-symbol store take minutes
            st._parts.log.commit()
    st._parts.log.commit()
    return st


def _spin(_: int = 0) -> float:
    """The ceiling's unit of work: about 0.3 s of numpy and Python on one core."""
    x = np.random.default_rng(0).normal(size=200_000)
    s = 0.0
    for _ in range(40):
        x = np.sqrt(np.abs(x) + 1.0)
        s += sum(range(20_000))
    return float(x[0]) + s


def _ceiling(pool: Any) -> float:
    """Wall clock of two units in this process over two units in two pool workers."""
    t = time.perf_counter()
    _spin(), _spin()
    one = time.perf_counter() - t
    t = time.perf_counter()
    list(pool.map(_spin, [0, 1]))
    return one / (time.perf_counter() - t)


def _md(df: Any) -> Any:
    """The baseline: the five indicators with ``df.md`` on rows held in memory."""
    return df.md.sma(20).md.rsi(14).md.kdj().md.macd().md.bbands()


def _user(st: Store, src: str, sym: str, path: Path) -> None:
    """The pipeline a user without ``compute`` would write: the symbol's whole history in
    memory, ``df.md``, the result to one Parquet file (pandas' defaults, no fsync)."""
    _md(st.read(src, sym, timeframe="1")).to_parquet(path)


def _writing(df: Any) -> float:
    """CPU seconds to make ``df.md``'s outputs durable-checkable at the least: plain Parquet
    pages with page checksums and the file's SHA-256, as every file of the store has; no
    statistics, no symbol or bar-time column, nothing written to disk, no fsync."""
    out = _md(df)
    arrays = {c: out[c].to_numpy(np.float64) for c in out.columns if c not in df.columns}

    def write() -> None:
        t = pa.table(arrays)
        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(
            sink,
            t.schema,
            compression="none",
            use_dictionary=False,
            write_statistics=False,
            write_page_checksum=True,
        ) as w:
            w.write_table(t)
        hashlib.sha256(sink.getvalue()).digest()

    return min(_cpu(write)[0] for _ in range(3))


def _cpu(fn: Any) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of ``fn()``."""
    cpu, wall, _ = _split(fn)
    return cpu, wall


def _split(fn: Any) -> tuple[float, float, float]:
    """(CPU seconds of this process, wall seconds, the CPU seconds spent in the kernel) of
    ``fn()``. The kernel's share is mostly the filesystem's: making a file costs 0.03 ms on
    a fresh directory of this machine's ext4 (mounted with online discard) and ten times
    that after large deletions, such as the previous round's store; it is what varies
    between runs of the same code."""
    t0, w = os.times(), time.perf_counter()
    fn()
    t1 = os.times()
    user, system = t1.user - t0.user, t1.system - t0.system
    return user + system, time.perf_counter() - w, system


# ---------------------------------------------------------------------------------------
# against what users run instead, and compute's fixed cost per symbol (each job in a fresh
# process of its own: its CPU time from just before the work to just after, all threads,
# and its peak RSS)

SRC = "stock.historical.candles"
#: the specs of the DuckDB comparison: what window SQL can express (no recursion)
WINDOWED = ["sma", "bbands"]


def source_dir(root: Path) -> Path:
    return _io.dataset_dir(root, resolve(SRC, "1", {}).ds)


def polars_job(src: Path, out: Path) -> None:
    """The five indicators as a polars user writes them: a lazy scan of the source dataset,
    one expression per output over each symbol, ``sink_parquet``. SMA and Bollinger (ddof 0)
    are exact; the rest are polars' closest: EMA and MACD ``ewm_mean(adjust=False)`` seeded
    with the first value (``df.md`` seeds with the mean of the first ``n``, as TA-Lib), RSI
    Wilder's averages as ``ewm_mean(alpha=1/n)`` seeded with the first change, KDJ's
    recursion as ``ewm_mean(alpha=1/3)`` seeded with the first RSV (``df.md``: 50): all
    converge to ``df.md``'s values after the warm-up; none is exact in it."""
    import polars as pl

    c, h, lo = pl.col("close"), pl.col("high"), pl.col("low")
    d = c.diff()
    up = d.clip(lower_bound=0).ewm_mean(alpha=1 / 14, adjust=False)
    down = (-d).clip(lower_bound=0).ewm_mean(alpha=1 / 14, adjust=False)
    low9 = lo.rolling_min(9)
    rsv = 100 * (c - low9) / (h.rolling_max(9) - low9)
    k = rsv.ewm_mean(alpha=1 / 3, adjust=False)
    dd = k.ewm_mean(alpha=1 / 3, adjust=False)
    macd = c.ewm_mean(span=12, adjust=False) - c.ewm_mean(span=26, adjust=False)
    sig = macd.ewm_mean(span=9, adjust=False)
    mid, sd = c.rolling_mean(20), c.rolling_std(20, ddof=0)
    outs = {
        "sma_20": mid,
        "rsi_14": 100 * up / (up + down),
        "kdj_k_9_3_3": k,
        "kdj_d_9_3_3": dd,
        "kdj_j_9_3_3": 3 * k - 2 * dd,
        "macd_12_26_9": macd,
        "macd_signal_12_26_9": sig,
        "macd_hist_12_26_9": macd - sig,
        "bb_upper_20_2": mid + 2 * sd,
        "bb_middle_20_2": mid,
        "bb_lower_20_2": mid - 2 * sd,
    }
    lf = pl.scan_parquet(f"{src}/**/*.parquet", hive_partitioning=False)
    lf = lf.select("symbol", "date", *(e.over("symbol").alias(n) for n, e in outs.items()))
    lf.sink_parquet(out)


def duckdb_job(src: Path, out: Path) -> None:
    """SMA(20) and Bollinger(20, 2) in DuckDB's window SQL (exact: null until a full window,
    population deviation), ``COPY ... TO`` Parquet. Window SQL has no recursion: EMA, RSI,
    MACD and the recursive KDJ cannot be written this way."""
    import duckdb

    q = f"""
    COPY (
      SELECT symbol, date, m AS sma_20, m + 2 * sd AS bb_upper_20_2, m AS bb_middle_20_2,
             m - 2 * sd AS bb_lower_20_2
      FROM (
        SELECT symbol, date,
          CASE WHEN count(close) OVER w = 20 THEN avg(close) OVER w END AS m,
          CASE WHEN count(close) OVER w = 20 THEN stddev_pop(close) OVER w END AS sd
        FROM read_parquet('{src}/**/*.parquet', hive_partitioning = false)
        WINDOW w AS (PARTITION BY symbol ORDER BY date ROWS BETWEEN 19 PRECEDING AND CURRENT ROW)
      )
    ) TO '{out}' (FORMAT parquet)
    """
    duckdb.connect().execute(q)


def child(a: argparse.Namespace) -> int:
    """One job in this fresh process; prints its figures as the last line (JSON)."""
    import json

    path = Path(a.path)
    figs: dict[str, Any] = {}
    if a.child == "polars":
        figs["cpu"], figs["wall"] = _cpu(lambda: polars_job(path, Path(a.out)))
    elif a.child == "duckdb":
        figs["cpu"], figs["wall"] = _cpu(lambda: duckdb_job(path, Path(a.out)))
    elif a.child == "history":
        figs.update(grown(path, a.symbols, a.days, a.chunk, a.append))
    else:
        st = Store(path)
        specs = WINDOWED if a.child == "compute-windowed" else SPECS
        figs["cpu"], figs["wall"], figs["sys"] = _split(
            lambda: st.compute(SRC, specs, timeframe="1", max_workers=1)
        )
        figs["appended"] = []
        for k in range(a.append):
            write_store(path, a.symbols, 1, first=a.days + k, store=st)
            figs["appended"].append(
                _split(lambda: st.compute(SRC, specs, timeframe="1", max_workers=1))
            )
    figs["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figs))
    return 0


def grown(path: Path, symbols: int, days: int, chunk: int, append: int) -> dict[str, Any]:
    """A store built as a daily job builds it (``chunk`` days synced, then computed, over
    ``days``), then ``append`` days appended one at a time, each computed on its own: their
    CPU and the derived files the log records."""
    st = write_store(path, symbols, chunk)
    st.compute(SRC, SPECS, timeframe="1", max_workers=1)
    day = chunk
    while day < days:
        write_store(path, symbols, min(chunk, days - day), first=day, store=st)
        st.compute(SRC, SPECS, timeframe="1", max_workers=1)
        day += chunk
    out: dict[str, Any] = {"appended": []}
    for k in range(append):
        write_store(path, symbols, 1, first=days + k, store=st)
        os.sync()  # the day's files on disk before the job, as a daily job finds them
        out["appended"].append(_split(lambda: st.compute(SRC, SPECS, timeframe="1", max_workers=1)))
    log = st._parts.log
    derived = [ds for ds, _ in log.datasets() if ds.endpoint.startswith("derived.")]
    out["files"] = sum(len(log.files(ds)) for ds in derived) / (symbols * len(derived))
    return out


def history(a: argparse.Namespace, root: Path) -> None:
    """An appended day over one year of history and over ``--years`` (see the module
    docstring), in interleaved rounds, each in a fresh process."""
    n, lengths = a.symbols or 100, [YEAR_DAYS, a.years * YEAR_DAYS]
    got: dict[int, list[dict[str, Any]]] = {d: [] for d in lengths}
    for r in range(a.rounds):
        for d in lengths if r % 2 == 0 else lengths[::-1]:
            more = {"symbols": n, "days": d, "chunk": a.chunk, "append": a.appended}
            res = run_child("history", root / f"h-{r}-{d}", **more)
            got[d].append(res)
            print(f"  round {r + 1}, {d} days: {res}", flush=True)
    print(f"an appended day by the history held ({n} symbols, built {a.chunk} days at a time,"
          f" {a.rounds} rounds; load at start {a.load})")  # fmt: skip
    per = {}
    for d in lengths:
        per[d] = [c / n * 1e3 for x in got[d] for c, _, _ in x.get("appended", [])]
        files = [x["files"] for x in got[d] if "files" in x]
        print(f"  {d // YEAR_DAYS} x {YEAR_DAYS} days: {spread(per[d])} ms of CPU a symbol;"
              f" {spread(files)} derived files a symbol and indicator")  # fmt: skip
    a_, b_ = (statistics.median(per[d]) for d in lengths)
    print(f"  {a.years} x / 1 x {YEAR_DAYS} days: {b_ / a_:.2f}x")


def run_child(kind: str, path: Path, out: Path | None = None, **more: int) -> dict[str, Any]:
    """``kind`` over the store (or source directory) ``path`` in a fresh process."""
    import json
    import subprocess

    # everything written before (the copy of the store, the previous job's outputs) on disk
    # before the job starts: compute makes its files durable with one syncfs a commit, which
    # would otherwise write those back too, in the job's time
    os.sync()
    cmd = [sys.executable, __file__, "--child", kind, "--path", str(path)]
    cmd += ["--out", str(out)] if out is not None else []
    for k, v in more.items():
        cmd += [f"--{k}", str(v)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        return {"failed": res.returncode, "stderr": res.stderr[-400:]}
    figs: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return figs


def fresh(pristine: Path, to: Path) -> Path:
    """A copy of the store ``pristine`` (files, times and log), nothing computed in it, at
    ``to``: a new directory each job, every one removed at the end, none between jobs. On an
    ext4 filesystem without a journal (this machine's), making a file within a few minutes
    of a deletion scans past every inode recently freed (the kernel's ``recently_deleted``):
    deleting the previous round's store (tens of thousands of files) before a job made each
    file that job created cost up to ten times more, the benchmark's own cleanup charged to
    the next job (and the main cause of the 2x spread between runs of the same code)."""
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(pristine, to)
    return to


def spread(xs: list[float], fmt: str = ".2f") -> str:
    """``median [min-max]``."""
    s = sorted(xs)
    return f"{statistics.median(s):{fmt}} [{s[0]:{fmt}}-{s[-1]:{fmt}}]"


def against(a: argparse.Namespace, root: Path, syms: int, days: int) -> None:
    """Compute against polars lazy (the five indicators) and DuckDB window SQL (SMA and
    Bollinger, against compute of those two), the same store, interleaved rounds whose
    order rotates; ratios of CPU time per round, their median and spread."""
    rows = syms * days * PER_DAY
    t = time.perf_counter()
    write_store(root / "pristine", syms, days)
    print(f"store: {syms} symbols x {days} days = {rows:.3g} bars, written in"
          f" {time.perf_counter() - t:.1f} s")  # fmt: skip
    src = source_dir(root / "pristine")
    kinds = [k for k in ("compute", "polars", "compute-windowed", "duckdb") if k in a.against]
    got: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for r in range(a.rounds):
        for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
            # each job writes where none did before; nothing is deleted until the end (fresh())
            if kind.startswith("compute"):
                res = run_child(kind, fresh(root / "pristine", root / f"work-{r}-{kind}"))
            else:
                res = run_child(kind, src, root / f"out-{r}-{kind}.parquet")
            got[kind].append(res)
            print(f"  round {r + 1} {kind}: {res}", flush=True)
    print(f"against what users run instead ({a.rounds} rounds, CPU time of each job's process,"
          f" all its threads; load at start {a.load})")  # fmt: skip
    for kind in kinds:
        ok = [x for x in got[kind] if "cpu" in x]
        if ok:
            kernel = [x["sys"] for x in ok if "sys" in x]
            print(f"  {kind:17s} CPU {spread([x['cpu'] for x in ok])} s"
                  + (f" (in the kernel {spread(kernel)} s)" if kernel else "")
                  + f", wall {spread([x['wall'] for x in ok])} s, peak RSS"
                  f" {spread([x['rss'] for x in ok], '.0f')} MB")  # fmt: skip
        if len(ok) < len(got[kind]):
            print(f"  {kind:17s} failed in {len(got[kind]) - len(ok)} round(s):"
                  f" {[x for x in got[kind] if 'cpu' not in x][0]}")  # fmt: skip
    for ours, theirs, target in (("compute", "polars", 0.5), ("compute-windowed", "duckdb", 0.45)):
        pairs = [
            (x["cpu"], y["cpu"])
            for x, y in zip(got.get(ours, []), got.get(theirs, []), strict=False)
            if "cpu" in x and "cpu" in y
        ]
        if pairs:
            print(f"  {ours} / {theirs}, CPU per round: {spread([x / y for x, y in pairs])}"
                  f" (target <= {target})")  # fmt: skip


def fixed(a: argparse.Namespace, root: Path) -> None:
    """Compute's fixed cost per symbol: the same bar count over ``--symbols`` (300) and ten
    times as many symbols, full runs in interleaved rounds, then ``--appended`` days appended
    to each, one at a time, each computed on its own (CPU per symbol)."""
    few = a.symbols or 300
    counts = [few, 10 * few]
    days = {n: max(1, int(a.rows / n / PER_DAY)) for n in counts}
    for n in counts:
        t = time.perf_counter()
        write_store(root / f"pristine{n}", n, days[n])
        print(f"store: {n} symbols x {days[n]} days = {n * days[n] * PER_DAY:.3g} bars, written"
              f" in {time.perf_counter() - t:.1f} s", flush=True)  # fmt: skip
    got: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    for r in range(a.rounds):
        for n in counts if r % 2 == 0 else counts[::-1]:
            last = r == a.rounds - 1  # the last round appends its days
            more = {"symbols": n, "days": days[n], "append": a.appended if last else 0}
            res = run_child("compute", fresh(root / f"pristine{n}", root / f"work-{r}-{n}"), **more)
            got[n].append(res)
            print(f"  round {r + 1}, {n} symbols: {res}", flush=True)
    print(f"fixed cost per symbol ({a.rounds} rounds; load at start {a.load})")
    cpu = {n: [x["cpu"] for x in got[n]] for n in counts}
    for n in counts:
        print(f"  {n} symbols x {days[n]} days: full run CPU {spread(cpu[n])} s,"
              f" {spread([c / n * 1e3 for c in cpu[n]])} ms a symbol, of which in the kernel"
              f" {spread([x['sys'] / n * 1e3 for x in got[n]])} ms")  # fmt: skip
    ratios = [y / x for x, y in zip(cpu[few], cpu[10 * few], strict=True)]
    each = [(y - x) / (9 * few) * 1e3 for x, y in zip(cpu[few], cpu[10 * few], strict=True)]
    print(f"  {10 * few} / {few} symbols, same bars: {spread(ratios)}x (target <= 1.5);"
          f" the cost a symbol adds: {spread(each)} ms (target <= 3)")  # fmt: skip
    for n in counts:
        app = got[n][-1].get("appended", [])
        if app:
            per = [c / n * 1e3 for c, _, _ in app]
            wall = [w / n * 1e3 for _, w, _ in app]
            kernel = [k / n * 1e3 for _, _, k in app]
            print(f"  an appended day, {n} symbols: {spread(per)} ms of CPU a symbol (target"
                  f" <= 3), of which in the kernel {spread(kernel)} ms; wall {spread(wall)} ms"
                  f" a symbol")  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=float, default=2e8)
    p.add_argument("--symbols", type=int, default=0)
    p.add_argument(
        "--pairs",
        type=int,
        default=None,
        help="interleaved one/two-worker pairs (default 3, none above 2e7 bars: disk)",
    )
    p.add_argument("--keep", action="store_true")
    p.add_argument(
        "--against",
        default="",
        help="comma-separated jobs against polars and DuckDB (compute,polars,"
        "compute-windowed,duckdb), in rounds; nothing else is measured",
    )
    p.add_argument(
        "--fixed",
        action="store_true",
        help="the fixed cost per symbol: --rows over --symbols (300) and ten times as many",
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="an appended day's cost over one year of history and over --years",
    )
    p.add_argument("--years", type=int, default=4)
    p.add_argument("--chunk", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--appended", type=int, default=3)
    # a job in a process of its own (--against, --fixed)
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--days", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--append", type=int, default=0, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a)
    a.load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    if a.against or a.fixed or a.history:
        root = Path(tempfile.mkdtemp(prefix="mf-compute-"))
        try:
            if a.history:
                history(a, root)
            elif a.fixed:
                fixed(a, root)
            else:
                a.against = a.against.split(",")
                syms = a.symbols or 300
                against(a, root, syms, int(a.rows / syms / PER_DAY))
        finally:
            if not a.keep:
                shutil.rmtree(root, ignore_errors=True)
        return 0
    if a.pairs is None:
        a.pairs = 3 if a.rows <= 2e7 else 0
    # ten years a symbol, and an even number of at least 8 symbols: a task is a symbol, so
    # with 3 (the 2e6 run's count before) two workers could not pass 1.5x
    syms = a.symbols or 2 * max(4, int(round(a.rows / (PER_DAY * YEAR_DAYS * 10) / 2)))
    days = int(a.rows / syms / PER_DAY)
    root = Path(tempfile.mkdtemp(prefix="mf-compute-"))
    src = "stock.historical.candles"
    try:
        t = time.perf_counter()
        st = write_store(root / "s", syms, days)
        rows = syms * days * PER_DAY
        print(f"store: {syms} symbols x {days} days = {rows:.3g} bars, written in"
              f" {time.perf_counter() - t:.1f} s")  # fmt: skip
        # one worker runs in this process: its CPU time is the task's, and ru_maxrss its peak
        one_cpu, one = _cpu(lambda: st.compute(src, SPECS, timeframe="1", max_workers=1))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # df.md on one symbol's rows in memory (per core, CPU time), scaled to the store; with
        # pairs, every symbol's rows (each pair measures df.md over all of them beside its run)
        frames = [st.read(src, f"{1000 + j}", timeframe="1") for j in range(syms if a.pairs else 1)]
        md = min(_cpu(lambda: _md(frames[0]))[0] for _ in range(3)) * syms
        # two yardsticks on the same symbol, scaled: a user's own pipeline (the history in
        # memory, df.md, to_parquet), and the ratio's ceiling: df.md's kernels plus the least
        # any store file costs to write (plain checksummed pages, hashed), all else free
        user = min(_cpu(lambda: _user(st, src, "1000", root / "user.parquet"))[0] for _ in range(3))
        user *= syms
        ceiling = md / (md + _writing(frames[0]) * syms)
        # two workers vs one, wall clock, interleaved pairs on fresh stores (order alternates);
        # the pool's server is started once first (a tiny store), as in a second compute
        ratios, ceilings = [], []
        if a.pairs:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            warm = write_store(root / "warm", 2, 2)
            _, first = _cpu(lambda: warm.compute(src, SPECS, timeframe="1", max_workers=2))
            print(f"pool's first start (a 2-symbol, 2-day store): {first:.2f} s wall")
            ctx = mp.get_context("forkserver")
            cpool = ProcessPoolExecutor(2, mp_context=ctx)
            list(cpool.map(_spin, [0, 1]))
        # per pair, right after its one-worker run (same minute, same machine state): df.md
        # over every symbol's rows in memory, and one appended day on that store
        tputs, incs = [], []
        for i in range(a.pairs):
            st1 = write_store(root / f"p{i}a", syms, days)
            st2 = write_store(root / f"p{i}b", syms, days)
            runs = {}
            for w in (1, 2) if i % 2 == 0 else (2, 1):
                s_ = st1 if w == 1 else st2
                runs[w] = _cpu(
                    lambda s_=s_, w=w: s_.compute(src, SPECS, timeframe="1", max_workers=w)
                )
                if w == 1:
                    md_i = sum(_cpu(lambda f=f: _md(f))[0] for f in frames)
                    tputs.append(md_i / runs[1][0])
                    write_store(root / f"p{i}a", syms, 1, first=days, store=st1)
                    inc_i = _cpu(
                        lambda s_=st1: s_.compute(src, SPECS, timeframe="1", max_workers=1)
                    )[0]
                    incs.append(inc_i / runs[1][0])
            ratios.append(runs[1][1] / runs[2][1])
            ceilings.append(_ceiling(cpool))
            shutil.rmtree(root / f"p{i}a", ignore_errors=True)
            shutil.rmtree(root / f"p{i}b", ignore_errors=True)
        if a.pairs:
            cpool.shutdown()
        # three days appended one after another, each computed as a daily job would: one
        # day's figure moves with the filesystem's state (see benchmarks/README.md)
        appended = []
        for k in range(APPENDED):
            write_store(root / "s", syms, 1, first=days + k, store=st)
            appended.append(_cpu(lambda: st.compute(src, SPECS, timeframe="1", max_workers=1)))
        print(f"one worker: {one:.2f} s wall, {one_cpu:.2f} s CPU ({rows / one_cpu / 1e6:.2f} M"
              f" bars/s per core); peak RSS {rss:.0f} MB (target <= 1500)")  # fmt: skip
        print(f"throughput vs df.md in memory (CPU): {md / one_cpu:.2f}x (target >= 0.7);"
              f" its ceiling with only the outputs' plain checksummed pages and hash to pay:"
              f" {ceiling:.2f}x")  # fmt: skip
        print(f"throughput vs a user's pipeline (read the history, df.md, to_parquet; CPU):"
              f" {user / one_cpu:.2f}x")  # fmt: skip
        if ratios:
            ts, ins = sorted(tputs), sorted(incs)
            print(f"per pair ({a.pairs}, each beside its own one-worker run): throughput vs df.md"
                  f" median {statistics.median(ts):.2f}x [{ts[0]:.2f}-{ts[-1]:.2f}];"
                  f" appended day median {statistics.median(ins) * 100:.2f}%"
                  f" [{ins[0] * 100:.2f}-{ins[-1] * 100:.2f}]")  # fmt: skip
            rs, cs = sorted(ratios), sorted(ceilings)
            mid, cmid = statistics.median(rs), statistics.median(cs)
            eff = sorted(r / c for r, c in zip(ratios, ceilings, strict=True))
            print(f"two workers vs one (wall, {a.pairs} interleaved pairs): median {mid:.2f}x"
                  f" [{rs[0]:.2f}-{rs[-1]:.2f}] (target >= 1.7)")  # fmt: skip
            print(f"  this machine's ceiling (CPU-bound work, forkserver pool): median {cmid:.2f}x"
                  f" [{cs[0]:.2f}-{cs[-1]:.2f}]; compute / ceiling per pair: median"
                  f" {statistics.median(eff):.2f} [{eff[0]:.2f}-{eff[-1]:.2f}]")  # fmt: skip
        each = ", ".join(f"{c:.3f} s CPU {c / one_cpu * 100:.2f}%" for c, _ in appended)
        inc_cpu, inc = (statistics.median(x) for x in zip(*appended, strict=True))
        share, wall = inc_cpu / one_cpu * 100, inc / one * 100
        print(f"appended day, median of {APPENDED}: {inc_cpu:.3f} s CPU, {share:.2f}% of the"
              f" full run ({wall:.2f}% wall) (target <= 2%); each: {each}")  # fmt: skip
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
