"""The shared S3 store never loses a row, whatever the network does: a hypothesis-driven
fault schedule against a real SeaweedFS.

Two writers sync overlapping symbol sets from the sandbox into one S3 store, each through its
own loopback fault proxy: one in a thread of this process, one in a subprocess. The schedule
resets connections, blackholes them and swallows replies at random points, and may kill the
subprocess with SIGKILL. Afterwards:

1. every range the coverage calls held has the rows a clean sync gives, or ``verify()``
   reports a problem for that symbol (never a silent hole);
2. after ``verify(repair=True)`` and a rerun of both syncs without faults, the store equals a
   clean sync, row for row.

The suite runs a few examples (bounded in time). The soak mode runs schedules until a time
budget is spent and prints what it tried::

    MARKETFRAME_SOAK_SECONDS=300 python -m pytest -n0 -s tests/store/test_s3_invariant.py -k soak
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe.exceptions import MarketframeError
from marketframe.sandbox import Sandbox
from marketframe.store import Store, StoreCorrupted

from ._faultproxy import FaultProxy
from ._helpers import arrow_equal, subprocess_env
from ._s3 import S3Server

CANDLES = "stock.historical.candles"
SYMBOLS = ["0050", "2317", "2330", "2454"]
START, END = "2023-01-01", "2024-12-31"
TTL, TIMEOUT = 4.0, 3.0
SOAK = float(os.environ.get("MARKETFRAME_SOAK_SECONDS", "0") or 0)
MODES = ("reset", "blackhole", "drop-reply")

CHILD = """
import json, sys
from marketframe.store import Store
url, endpoint, key, base, syms, ttl, timeout = sys.argv[1:8]
try:
    with Store(url, api_key=key, base_url=base, lease_ttl=float(ttl), max_workers=2,
               storage_options={"endpoint_url": endpoint, "timeout": float(timeout)}) as st:
        print("STARTED", flush=True)
        r = st.sync("stock.historical.candles", json.loads(syms), "2023-01-01", "2024-12-31",
                    progress=False, strict=False)
    print("DONE", r.rows_written, flush=True)
except Exception as exc:
    print("FAILED", type(exc).__name__, flush=True)
    raise SystemExit(1)
"""


@dataclass(frozen=True)
class Fault:
    writer: int  # 0: the thread, 1: the subprocess
    at: float  # seconds after the start
    mode: str
    lasts: float


@dataclass(frozen=True)
class Schedule:
    symbols: tuple[tuple[str, ...], tuple[str, ...]]
    faults: tuple[Fault, ...]
    kill_at: float | None  # SIGKILL the subprocess writer then


@dataclass
class Tally:
    schedules: int = 0
    faults: int = 0  # injected by the proxies (resets, blackholed chunks, dropped replies)
    kills: int = 0
    writer_errors: dict[str, int] = field(default_factory=dict)
    rows_compared: int = 0
    rows_lost: int = 0  # held by the coverage, not in the store, not reported by verify
    reported: int = 0  # problems verify found (and repair fixed)


def _symbols() -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(SYMBOLS), min_size=1, max_size=3, unique=True).map(
        lambda s: tuple(sorted(s))
    )


SCHEDULES = st.builds(
    Schedule,
    symbols=st.tuples(_symbols(), _symbols()),
    faults=st.lists(
        st.builds(
            Fault,
            writer=st.integers(0, 1),
            at=st.floats(0.0, 4.0),
            mode=st.sampled_from(MODES),
            lasts=st.floats(0.2, 3.0),
        ),
        max_size=4,
    ).map(tuple),
    kill_at=st.one_of(st.none(), st.floats(0.2, 4.0)),
)


def random_schedule(rng: random.Random) -> Schedule:
    """The soak's schedules: the same space as SCHEDULES, drawn without hypothesis."""

    def syms() -> tuple[str, ...]:
        return tuple(sorted(rng.sample(SYMBOLS, rng.randint(1, 3))))

    faults = tuple(
        Fault(rng.randint(0, 1), rng.uniform(0, 4), rng.choice(MODES), rng.uniform(0.2, 3))
        for _ in range(rng.randint(0, 4))
    )
    return Schedule((syms(), syms()), faults, rng.choice([None, rng.uniform(0.2, 4)]))


@pytest.fixture(scope="module")
def clean(sb: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, pa.Table]:
    """Each symbol's rows from a clean sync (a local store, no faults)."""
    with Store(
        tmp_path_factory.mktemp("clean") / "s", api_key=sb.api_key, base_url=sb.base_url
    ) as ref:
        ref.sync(CANDLES, SYMBOLS, START, END, progress=False)
        return {s: ref.read(CANDLES, s, START, END, backend="arrow") for s in SYMBOLS}


def _in(table: pa.Table, lo: Any, hi: Any) -> pa.Table:
    col = table.column("date")
    mask = pa.compute.and_(
        pa.compute.greater_equal(col, pa.scalar(lo, pa.date32())),
        pa.compute.less_equal(col, pa.scalar(hi, pa.date32())),
    )
    return table.filter(mask)


def run_schedule(
    server: S3Server, sb: Sandbox, clean: dict[str, pa.Table], schedule: Schedule, tally: Tally
) -> None:
    bucket = server.bucket()
    url = f"s3://{bucket}/inv"
    proxies = [FaultProxy.to(server.endpoint), FaultProxy.to(server.endpoint)]
    errors: list[str] = []
    try:
        env = {**subprocess_env(), **server.env()}
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                url,
                proxies[1].url,
                sb.api_key,
                sb.base_url,
                json.dumps(list(schedule.symbols[1])),
                str(TTL),
                str(TIMEOUT),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )

        def writer() -> None:
            try:
                with Store(
                    url,
                    api_key=sb.api_key,
                    base_url=sb.base_url,
                    lease_ttl=TTL,
                    max_workers=2,
                    storage_options={"endpoint_url": proxies[0].url, "timeout": TIMEOUT},
                ) as st0:
                    st0.sync(CANDLES, list(schedule.symbols[0]), START, END, progress=False)
            except (MarketframeError, OSError) as exc:
                errors.append(type(exc).__name__)

        thread = threading.Thread(target=writer)
        t0 = time.monotonic()
        thread.start()
        events = sorted(
            [(f.at, "on", f) for f in schedule.faults]
            + [(f.at + f.lasts, "off", f) for f in schedule.faults]
            + ([(schedule.kill_at, "kill", None)] if schedule.kill_at is not None else []),
            key=lambda e: e[0],
        )
        for at, what, fault in events:
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            if what == "kill":
                if child.poll() is None:
                    child.send_signal(signal.SIGKILL)
                    tally.kills += 1
            elif what == "on":
                kw = {"match": b"PUT "} if fault.mode == "drop-reply" else {}
                proxies[fault.writer].set(fault.mode, **kw)
            else:
                proxies[fault.writer].set("pass")
        for p in proxies:
            p.set("pass")
        thread.join(120)
        assert not thread.is_alive(), "a writer hung"
        try:
            out, _ = child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            child.kill()
            raise AssertionError("the subprocess writer hung") from None
        if child.returncode != 0:
            errors.append("child:" + (out.split()[-1] if out.split() else str(child.returncode)))
        tally.faults += sum(p.faults for p in proxies)
    finally:
        for p in proxies:
            p.close()
    for e in errors:
        tally.writer_errors[e] = tally.writer_errors.get(e, 0) + 1
    tally.schedules += 1

    opts = {"storage_options": server.options()}
    with Store(url, api_key=sb.api_key, base_url=sb.base_url, lease_ttl=TTL, **opts) as st0:
        # 1. what the coverage calls held is there, or verify reports it (a store that
        # neither writer got to write anything into has nothing to check)
        problems = [] if st0._parts.storage.is_empty() else st0.verify().problems
        tally.reported += len(problems)
        flagged = {p.split("sym=", 1)[1].split("/", 1)[0] for p in problems if "sym=" in p}
        manifest_damaged = any(p.startswith(("_log", "_manifest")) for p in problems)
        cov = [] if manifest_damaged else st0.coverage(backend="arrow").to_pylist()
        for row in cov:
            if row["status"] == "empty" or row["symbol"] in flagged:
                continue
            want = _in(clean[row["symbol"]], row["start"], row["end"])
            try:
                got = st0.read(CANDLES, row["symbol"], row["start"], row["end"], backend="arrow")
            except StoreCorrupted:
                raise AssertionError(f"{row}: unreadable, yet verify found nothing") from None
            tally.rows_compared += want.num_rows
            if got.num_rows != want.num_rows:
                tally.rows_lost += max(0, want.num_rows - got.num_rows)
                raise AssertionError(
                    f"{row['symbol']} {row['start']}..{row['end']} held with "
                    f"{got.num_rows} rows of {want.num_rows}; verify reported nothing"
                )
            arrow_equal(got, want)
        # 2. repair and a rerun give the clean store
        if problems:
            st0.verify(repair=True)
        for syms in schedule.symbols:
            st0.sync(CANDLES, list(syms), START, END, progress=False)
        assert st0.verify().problems == []
        for sym in sorted(set(schedule.symbols[0]) | set(schedule.symbols[1])):
            got = st0.read(CANDLES, sym, START, END, backend="arrow")
            tally.rows_compared += clean[sym].num_rows
            arrow_equal(got, clean[sym])


@pytest.fixture
def aws_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    return s3_server


@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(schedule=SCHEDULES)
def test_no_fault_schedule_loses_a_row(
    aws_env: S3Server, sb: Sandbox, clean: dict[str, pa.Table], schedule: Schedule
) -> None:
    run_schedule(aws_env, sb, clean, schedule, Tally())


@pytest.mark.skipif(not SOAK, reason="the soak: set MARKETFRAME_SOAK_SECONDS")
def test_soak(aws_env: S3Server, sb: Sandbox, clean: dict[str, pa.Table]) -> None:
    tally, rng = Tally(), random.Random(int(os.environ.get("MARKETFRAME_SOAK_SEED", "0")))
    end = time.monotonic() + SOAK
    try:
        while time.monotonic() < end:
            run_schedule(aws_env, sb, clean, random_schedule(rng), tally)
    finally:
        report = {k: v for k, v in tally.__dict__.items()}
        print("\nSOAK", json.dumps(report))
        Path(os.environ.get("MARKETFRAME_SOAK_REPORT", "/dev/null")).write_text(json.dumps(report))
    assert tally.rows_lost == 0
