"""The store on S3-compatible object storage (a real SeaweedFS server on 127.0.0.1): several
writers, leases, credentials, and the readers of docs/store.md."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from marketframe.exceptions import LeaseLost, MarketframeError
from marketframe.sandbox import Sandbox
from marketframe.store import Store, StoreLocked
from marketframe.store._dataset import resolve
from marketframe.store._storage._lease import Leases, lease_key

from ._helpers import NOW, arrow_equal, subprocess_env
from ._s3 import S3Server
from .conftest import Place

START, END = "2016-01-01", "2026-11-19"
LEFT, RIGHT = ["2330", "0050", "2317"], ["6669", "2454", "IX0001"]
DAILY = resolve("stock.historical.candles", None, {}).ds

CHILD = """
import json, sys
from marketframe.store import Store, StoreLocked
root, url, key, options, syms, timeout = sys.argv[1:7]
with Store(root, api_key=key, base_url=url, max_workers=4, lock_timeout=float(timeout),
           **json.loads(options)) as st:
    print("READY", flush=True)
    sys.stdin.readline()  # the parent starts both syncs at once
    try:
        r = st.sync("stock.historical.candles", json.loads(syms), "2016-01-01", "2026-11-19",
                    progress=False)
    except StoreLocked as exc:
        print("LOCKED", exc, flush=True)
        raise SystemExit(3)
print("REQUESTS", r.requests, flush=True)
"""


@pytest.fixture
def s3(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Place:
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    return Place("s3", tmp_path, s3_server)


@pytest.fixture(scope="module")
def slow_sb() -> Sandbox:
    # latency: each sync of 3 symbols lasts seconds, so two started together overlap
    with Sandbox(seed=5, now=NOW, rate_limit=None, latency=0.15) as s:
        yield s


def _child(
    place: Place, name: str, sb: Sandbox, syms: list[str], timeout: float = -1
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHILD,
            place.url(name),
            sb.base_url,
            sb.api_key,
            json.dumps(place.options()),
            json.dumps(syms),
            str(timeout),
        ],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(*procs: subprocess.Popen[str]) -> list[tuple[int, str, str]]:
    """Start the children's syncs together (once all are ready) and wait for them."""
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "READY", p.stderr
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=300) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs, strict=True)]


def _read(st: Store, syms: list[str]) -> pa.Table:
    return st.read("stock.historical.candles", syms, backend="arrow")


@pytest.mark.slow
def test_two_processes_syncing_disjoint_symbols_equal_one_sequential_sync(
    s3: Place, slow_sb: Sandbox
) -> None:
    with s3.store("seq", api_key=slow_sb.api_key, base_url=slow_sb.base_url) as st:
        st.sync("stock.historical.candles", LEFT + RIGHT, START, END, progress=False)
        expected = _read(st, LEFT + RIGHT)
        expected_cov = (
            st.coverage()
            .drop(columns=[])
            .sort_values(["symbol", "status", "start"])
            .reset_index(drop=True)
        )
    a, b = _child(s3, "par", slow_sb, LEFT), _child(s3, "par", slow_sb, RIGHT)
    results = _finish(a, b)
    for code, out, err in results:
        assert code == 0, err
        assert int(out.split()[-1]) > 0  # each fetched its own symbols: neither waited
    with s3.store("par", api_key=slow_sb.api_key, base_url=slow_sb.base_url) as st:
        arrow_equal(_read(st, LEFT + RIGHT), expected)
        cov = st.coverage().sort_values(["symbol", "status", "start"]).reset_index(drop=True)
        assert cov.equals(expected_cov)  # both writers' coverage survived the shared manifest
        assert st.verify().problems == []
        assert (
            st.sync("stock.historical.candles", LEFT + RIGHT, START, END, progress=False).requests
            == 0
        )
    assert not s3.files("par", "_leases/")  # both released their leases


@pytest.mark.slow
def test_two_processes_syncing_the_same_symbols_are_serialised(s3: Place, slow_sb: Sandbox) -> None:
    with s3.store("seq", api_key=slow_sb.api_key, base_url=slow_sb.base_url) as st:
        st.sync("stock.historical.candles", LEFT, START, END, progress=False)
        expected = _read(st, LEFT)
    served = slow_sb.requests_served
    results = _finish(_child(s3, "same", slow_sb, LEFT), _child(s3, "same", slow_sb, LEFT))
    assert all(code == 0 for code, _, _ in results), results
    # one fetched everything; the other waited for its leases, then found it all held
    counts = sorted(int(out.split()[-1]) for _, out, _ in results)
    assert counts == [0, slow_sb.requests_served - served]
    with s3.store("same") as st:
        arrow_equal(_read(st, LEFT), expected)
        assert st.verify().problems == []


def test_writers_of_different_symbols_both_land_in_the_log(s3: Place) -> None:
    """Two writers commit from the same generation: the second one's entry cannot be created
    (the name is taken), so it reads the first one's entry and commits after it; neither
    loses the other's records."""
    import datetime as dt

    from marketframe.store._log import Log
    from marketframe.store._storage import ObjectStorage

    storage = ObjectStorage(s3.url("cas"), s3.server.options())  # type: ignore[union-attr]
    a, b = Log(storage), Log(storage)
    a.record(
        DAILY,
        "2330",
        (dt.date(2024, 1, 2), dt.date(2024, 3, 31)),
        dt.date(2024, 3, 31),
        empty=False,
    )
    b.record(
        DAILY,
        "0050",
        (dt.date(2024, 1, 2), dt.date(2024, 6, 28)),
        dt.date(2024, 6, 28),
        empty=False,
    )
    assert a.commit() == 0
    assert b.commit() == 1  # generation 0 was taken: b read a's entry and came after it
    a.record(
        DAILY,
        "2330",
        (dt.date(2024, 4, 1), dt.date(2024, 4, 30)),
        dt.date(2024, 4, 30),
        empty=False,
    )
    assert a.commit() == 2  # a's view is stale too: b's entry read, then a's
    fresh = Log(storage)
    assert fresh.final(DAILY, "2330") == [(dt.date(2024, 1, 2), dt.date(2024, 4, 30))]
    assert fresh.final(DAILY, "0050") == [(dt.date(2024, 1, 2), dt.date(2024, 6, 28))]
    assert a.final(DAILY, "0050") == fresh.final(DAILY, "0050")


def test_a_symbol_held_by_a_live_writer_is_refused_with_who_holds_it(
    s3: Place, sb: Sandbox
) -> None:
    with s3.store("held", api_key=sb.api_key, base_url=sb.base_url, lock_timeout=0) as st:
        other = Leases(st._parts.storage)  # another writer, alive (this process), holding 0050
        other.acquire(DAILY, ["0050"], timeout=0)
        try:
            served = sb.requests_served
            with pytest.raises(StoreLocked) as info:
                st.sync(
                    "stock.historical.candles",
                    ["2330", "0050"],
                    "2024-01-01",
                    "2024-12-31",
                    progress=False,
                )
            assert sb.requests_served == served  # refused before any request
            msg = str(info.value)
            assert "0050" in msg and f"pid {os.getpid()}" in msg and socket.gethostname() in msg
            # the refused sync released what it had taken: 2330 is free for others
            assert s3.files("held", "_leases/") == [lease_key(DAILY, "0050")]
            # a writer of other symbols is not blocked
            assert st.sync(
                "stock.historical.candles", ["2330"], "2024-01-01", "2024-12-31", progress=False
            ).ok
        finally:
            other.release()
        assert st.sync(
            "stock.historical.candles", ["0050"], "2024-01-01", "2024-12-31", progress=False
        ).ok
        assert s3.files("held", "_leases/") == []


@pytest.mark.parametrize(
    "lease",
    [
        {"host": "another-machine", "pid": 1, "expires": 0},  # expired long ago
        {"host": socket.gethostname(), "pid": 2**22 + 17, "expires": 4e9},  # owner is gone
    ],
    ids=["expired", "dead-owner"],
)
def test_a_stale_lease_is_taken_over(s3: Place, sb: Sandbox, lease: dict[str, object]) -> None:
    with s3.store("stale", api_key=sb.api_key, base_url=sb.base_url, lock_timeout=0) as st:
        st._parts.storage.fs.pipe_file(
            st._parts.storage.key(lease_key(DAILY, "2330")),
            json.dumps({"owner": "x", **lease}).encode(),
        )
        assert st.sync(
            "stock.historical.candles", ["2330"], "2024-01-01", "2024-12-31", progress=False
        ).ok
        assert s3.files("stale", "_leases/") == []


def test_a_writer_that_lost_its_lease_writes_nothing_more(s3: Place, sb: Sandbox) -> None:
    with s3.store("lost", api_key=sb.api_key, base_url=sb.base_url) as st:
        mine = Leases(st._parts.storage)
        mine.acquire(DAILY, ["2330"], timeout=0)
        try:
            # another writer took it over (as after our lease expired)
            st._parts.storage.fs.pipe_file(st._parts.storage.key(lease_key(DAILY, "2330")), b"{}")
            mine.renew()
            with pytest.raises(LeaseLost, match="taken over"):
                mine.check()
            with pytest.raises(LeaseLost):
                st._parts.storage.publish(b"data", "dataset=x/part-0.parquet")
            assert s3.files("lost", "part-0.parquet") == []
        finally:
            mine.release()


def test_credentials_come_from_the_environment_and_are_never_shown(
    s3: Place, sb: Sandbox, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret, key = s3.server.secret, s3.server.key  # type: ignore[union-attr]
    caplog.set_level(logging.DEBUG)
    with s3.store("creds", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync("stock.historical.candles", ["2330"], "2024-01-01", "2024-12-31", progress=False)
        shown = [repr(st), str(st.root), str(st.coverage()), str(st.verify())]
    for rel in s3.files("creds", ""):
        body = (
            s3.server.client()
            .get_object(  # type: ignore[union-attr]
                Bucket=s3.bucket, Key=f"creds/{rel}"
            )["Body"]
            .read()
        )
        assert secret.encode() not in body and key.encode() not in body, rel
        assert sb.api_key.encode() not in body, rel
    # a wrong secret: a typed error that shows neither the key pair nor the secret
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-" + secret)
    with pytest.raises((MarketframeError, OSError, PermissionError)) as info:
        with s3.store("creds", api_key=sb.api_key, base_url=sb.base_url) as st:
            st.sync(
                "stock.historical.candles", ["2330"], "2024-01-01", "2025-06-30", progress=False
            )
    shown += [str(info.value), repr(info.value), caplog.text]
    for text in shown:
        assert secret not in text and "wrong-" not in text


def test_pyarrow_polars_and_duckdb_read_the_s3_store(s3: Place, sb: Sandbox) -> None:
    """The code of docs/store.md, "Object storage", against the S3 server."""
    import duckdb
    import polars as pl
    import pyarrow.dataset as pds
    from pyarrow import fs

    with s3.store("readers", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(
            "stock.historical.candles",
            ["2330", "0050", "IX0001"],
            "2023-06-01",
            "2024-12-31",
            progress=False,
        )
        ours = st.read("stock.historical.candles", backend="arrow")
    endpoint = s3.server.endpoint  # type: ignore[union-attr]
    daily = f"{s3.bucket}/readers/dataset=stock.historical.candles/params=default/tf=D"
    cols = ours.column_names
    # pyarrow: its own S3 filesystem, credentials from the AWS environment variables
    s3fs_arrow = fs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1")
    ds = pds.dataset(daily, filesystem=s3fs_arrow, format="parquet", partitioning="hive")
    got = ds.to_table(columns=cols).sort_by([("symbol", "ascending"), ("date", "ascending")])
    arrow_equal(got.cast(ours.schema), ours)
    # polars: an s3:// glob and its storage options
    lazy = pl.scan_parquet(
        f"s3://{daily}/**/*.parquet",
        hive_partitioning=True,
        storage_options={
            "aws_endpoint_url": endpoint,
            "aws_region": "us-east-1",
            "aws_allow_http": "true",
        },
    )
    got_pl = lazy.filter(pl.col("symbol") == "0050").select(cols).sort("date").collect()
    n_0050 = ours.filter(pa.compute.equal(ours.column("symbol"), "0050")).num_rows
    assert got_pl.height == n_0050
    # DuckDB: httpfs cannot be downloaded offline, so the pyarrow dataset is queried
    ds = pds.dataset(daily, filesystem=s3fs_arrow, format="parquet", partitioning="hive")
    n = duckdb.sql("SELECT count(*) FROM ds WHERE symbol = '0050'").fetchall()[0][0]
    assert n == n_0050


def test_store_read_of_an_s3_store_with_explicit_storage_options(
    s3_server: S3Server, sb: Sandbox
) -> None:
    """Credentials given in storage_options (not the environment) work and are not kept in
    the repr or the store's files."""
    bucket = s3_server.bucket()
    opts = {"endpoint_url": s3_server.endpoint, "key": s3_server.key, "secret": s3_server.secret}
    with Store(
        f"s3://{bucket}/x", api_key=sb.api_key, base_url=sb.base_url, storage_options=opts
    ) as st:
        st.sync("stock.historical.candles", ["2330"], "2024-01-01", "2024-03-31", progress=False)
        assert len(st.read("stock.historical.candles", "2330")) > 50
        assert s3_server.secret not in repr(st) and repr(st) == f"Store('s3://{bucket}/x')"


def test_bad_object_store_urls_fail_clearly_before_any_request(s3: Place) -> None:
    from marketframe.exceptions import InvalidParams

    with pytest.raises(InvalidParams, match="bucket 'mf-no-such-bucket' does not exist"):
        Store("s3://mf-no-such-bucket/x", **s3.options())  # type: ignore[arg-type]
    with pytest.raises(InvalidParams, match="not a usable filesystem URL|needs a filesystem"):
        Store("nosuchscheme://bucket/x")


@pytest.mark.parametrize("ttl", [0, -5, "60", True])
def test_a_bad_lease_ttl_is_refused(tmp_path: Path, ttl: object) -> None:
    from marketframe.exceptions import InvalidParams

    with pytest.raises(InvalidParams, match="lease_ttl.*seconds > 0"):
        Store(tmp_path / "s", lease_ttl=ttl)  # type: ignore[arg-type]


def test_any_fsspec_filesystem_holds_a_store(sb: Sandbox) -> None:
    """A single-writer store on another fsspec filesystem (here memory://)."""
    url = f"memory://mf-{os.getpid()}/store"
    with Store(url, api_key=sb.api_key, base_url=sb.base_url) as st:
        assert (
            st.sync(
                "stock.historical.candles", ["2330"], "2024-01-01", "2024-06-30", progress=False
            ).requests
            == 1
        )
        assert (
            st.sync(
                "stock.historical.candles", ["2330"], "2024-01-01", "2024-06-30", progress=False
            ).requests
            == 0
        )
        assert st.verify().problems == []
        n = len(st.read("stock.historical.candles", "2330"))
    with Store(url) as again:
        assert len(again.read("stock.historical.candles", "2330")) == n > 100


def test_cli_syncs_into_an_s3_store(s3: Place, sb: Sandbox) -> None:
    """`marketframe sync --store s3://...`: the server from AWS_ENDPOINT_URL, credentials from
    the AWS variables (as docs/store.md shows)."""
    env = {
        **subprocess_env(),
        "AWS_ENDPOINT_URL": s3.server.endpoint,  # type: ignore[union-attr]
        "MARKETFRAME_API_KEY": sb.api_key,
    }
    cmd = [
        sys.executable,
        "-m",
        "marketframe",
        "sync",
        "stock.historical.candles",
        "--store",
        s3.url("cli"),
        "--symbols",
        "2330",
        "0050",
        "--start",
        "2024-01-01",
        "--end",
        "2024-12-31",
        "--base-url",
        sb.base_url,
        "--no-progress",
        "--json",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["requests"] == 2
    verify = subprocess.run(
        [sys.executable, "-m", "marketframe", "verify", "--store", s3.url("cli")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert verify.returncode == 0, verify.stderr
    with s3.store("cli") as st:
        assert set(st.read("stock.historical.candles").symbol) == {"2330", "0050"}


def test_a_damaged_object_is_reported_and_repaired(s3: Place, sb: Sandbox) -> None:
    from marketframe.store import StoreCorrupted

    with s3.store("dmg", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(
            "stock.historical.candles", ["2330", "0050"], "2023-01-01", "2024-12-31", progress=False
        )
        good = _read(st, ["2330"])
        rel = "dataset=stock.historical.candles/params=default/tf=D/sym=2330/part-0.parquet"
        data = bytearray(st._parts.storage.read(rel))
        data[len(data) // 2] ^= 0xFF  # one flipped byte, same size
        st._parts.storage.fs.pipe_file(st._parts.storage.key(rel), bytes(data))
        with pytest.raises(StoreCorrupted, match="sym=2330/part-0.parquet"):
            _read(st, ["2330"])
        assert [p.split(":")[0] for p in st.verify().problems] == [rel]
        report = st.verify(repair=True)
        assert report.ok and any(
            r.startswith(rel) and "fetched again" in r for r in report.repaired
        )
        arrow_equal(_read(st, ["2330"]), good)
        assert st.verify().problems == []
        # a damaged log entry: the state rebuilt from what reads whole, the rest refetched
        newest = sorted(p for p in st._parts.storage.names("_log") if p[0].isdigit())[-1]
        entry = f"_log/{newest}"
        data = bytearray(st._parts.storage.read(entry))
        data[len(data) // 3] ^= 0x01
        st._parts.storage.fs.pipe_file(st._parts.storage.key(entry), bytes(data))
    with s3.store("dmg", api_key=sb.api_key, base_url=sb.base_url) as st:
        with pytest.raises(StoreCorrupted, match=newest):
            _read(st, ["2330"])
        report = st.verify(repair=True)
        assert report.ok and any("rebuilt from the log" in r for r in report.repaired)
        assert st.verify().problems == []
        st.sync(
            "stock.historical.candles", ["2330", "0050"], "2023-01-01", "2024-12-31", progress=False
        )
        arrow_equal(_read(st, ["2330"]), good)
