"""The S3 store when the network fails: a loopback fault proxy (tests/store/_faultproxy.py) between
s3fs and a real SeaweedFS resets connections, swallows replies and goes silent."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from marketframe.exceptions import ConfigurationError, InvalidParams, MarketframeWarning
from marketframe.sandbox import Sandbox
from marketframe.store import LeaseLost, Store, StoreLocked, StoreUnavailable
from marketframe.store._dataset import resolve

from ._faultproxy import FaultProxy
from ._helpers import subprocess_env
from ._s3 import S3Server
from .conftest import Place

DAILY = resolve("stock.historical.candles", None, {}).ds
CANDLES = "stock.historical.candles"
#: one attempt per request (botocore) in the tests that count on a fast failure
ONE_TRY = {"retries": {"max_attempts": 1}}


@pytest.fixture
def s3(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Place:
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    return Place("s3", tmp_path, s3_server)


@pytest.fixture
def proxy(s3_server: S3Server) -> Iterator[FaultProxy]:
    with FaultProxy.to(s3_server.endpoint) as p:
        yield p


def _through(proxy: FaultProxy, **config: Any) -> dict[str, Any]:
    opts: dict[str, Any] = {"endpoint_url": proxy.url}
    if config:
        opts["config_kwargs"] = config
    return opts


def test_a_writer_whose_renewal_failed_never_publishes_over_the_next_writer(
    s3: Place, sb: Sandbox, proxy: FaultProxy
) -> None:
    """A's renewal meets a network outage (botocore raises, the renewal thread used to die
    with nothing marked lost); its lease expires and B syncs 2024 of the same symbol. A must
    then stop with LeaseLost, never publish its 2010-2023 partition over B's file."""
    ttl = 3.0
    gate, fetching = threading.Event(), threading.Event()
    out: dict[str, Any] = {}
    url = s3.url("lost")
    with Store(
        url,
        api_key=sb.api_key,
        base_url=sb.base_url,
        storage_options=_through(proxy, **ONE_TRY),
        lease_ttl=ttl,
        max_workers=2,
    ) as a:
        real = a.client.receive_all  # the sync's fan-out

        def held_back(*args: Any, **kw: Any) -> Any:
            fetching.set()  # A holds its lease and is fetching
            gate.wait(120)
            return real(*args, **kw)

        a.client.receive_all = held_back  # type: ignore[method-assign]

        def run_a() -> None:
            try:
                out["a"] = a.sync(CANDLES, "2330", "2010-01-01", "2023-12-31", progress=False)
            except BaseException as exc:  # noqa: BLE001 - the test looks at it
                out["a"] = exc

        thread = threading.Thread(target=run_a)
        thread.start()
        try:
            assert fetching.wait(60)
            proxy.set("reset")  # A's next renewal fails; its lease expires
            time.sleep(ttl + 1)
            assert proxy.resets > 0
            with s3.store("lost", api_key=sb.api_key, base_url=sb.base_url, lock_timeout=60) as b:
                b.sync(CANDLES, "2330", "2024-01-01", "2024-12-31", progress=False)
                want = b.read(CANDLES, "2330", "2024-01-01", "2024-12-31")
            assert len(want) > 200
            proxy.set("pass")
        finally:
            proxy.set("pass")
            gate.set()
            thread.join(120)
    assert isinstance(out["a"], LeaseLost), out["a"]
    with s3.store("lost") as st:
        got = st.read(CANDLES, "2330", "2024-01-01", "2024-12-31")
        assert len(got) == len(want)  # B's rows are all there
        assert st.verify().problems == []
        cov = st.coverage()
        assert set(cov["symbol"]) == {"2330"}


# a name holding "412": a network error's message holds the URL, and was once taken for a
# failed condition (HTTP 412) by its text, so it escaped untyped (buckets are random too)
@pytest.mark.parametrize("name", ["orphan", "orphan-4120"])
def test_taking_several_leases_is_all_or_nothing_and_a_network_error_is_typed(
    s3: Place, sb: Sandbox, proxy: FaultProxy, name: str
) -> None:
    with Store(
        s3.url(name),
        api_key=sb.api_key,
        base_url=sb.base_url,
        storage_options=_through(proxy, **ONE_TRY),
        lock_timeout=0,
    ) as st:
        served = sb.requests_served
        # every PUT of the second symbol's lease is reset before it reaches the server
        with proxy.fault("reset", match=b"/2330.json"):
            with pytest.raises(StoreUnavailable) as info:
                st.sync(CANDLES, ["0050", "2330"], "2024-01-01", "2024-06-30", progress=False)
        assert sb.requests_served == served
        msg = str(info.value)
        assert "PUT s3://" in msg and "_leases/" in msg and "2330.json" in msg
        assert info.value.what.startswith("PUT ")
        assert s3.files(name, "_leases/") == []  # the first symbol's lease was released
        # and the symbols are free at once (no lease to wait out)
        assert st.sync(CANDLES, ["0050", "2330"], "2024-01-01", "2024-06-30", progress=False).ok


@pytest.mark.parametrize("fault", ["reset", "drop-reply"])
def test_a_failed_lease_put_never_locks_the_process_out(
    s3: Place, sb: Sandbox, proxy: FaultProxy, fault: str
) -> None:
    """The second symbol's lease PUT reset (or landed, its reply lost) and the network down
    right after, so the failed sync could not release what it took: the next sync in the
    same process takes its own leftovers over at once instead of being StoreLocked by
    itself (its pid runs, so they looked live until they expired)."""
    with Store(
        s3.url("leftover"),
        api_key=sb.api_key,
        base_url=sb.base_url,
        storage_options=_through(proxy, **ONE_TRY),
        lock_timeout=0,
    ) as st:
        with proxy.fault(fault, match=b"/2330.json", then="reset"):
            with pytest.raises(StoreUnavailable):
                st.sync(CANDLES, ["0050", "2330"], "2024-01-01", "2024-06-30", progress=False)
        left = s3.files("leftover", "_leases/")
        assert left  # the network was down: nothing could be released
        assert (fault == "drop-reply") is any(k.endswith("/2330.json") for k in left)
        report = st.sync(CANDLES, ["0050", "2330"], "2024-01-01", "2024-06-30", progress=False)
        assert report.ok and report.rows_written > 100
    assert s3.files("leftover", "_leases/") == []  # taken over, then released


def test_a_lost_reply_to_a_lease_put_is_recognised_as_its_own(
    s3: Place, sb: Sandbox, proxy: FaultProxy
) -> None:
    """The lease's PUT reaches the server, its 200 is lost, the retry fails its condition
    on this writer's own lease: that is no other writer (it used to be StoreLocked naming
    itself)."""
    with Store(
        s3.url("reply"),
        api_key=sb.api_key,
        base_url=sb.base_url,
        storage_options=_through(proxy),
        lock_timeout=2,
    ) as st:
        proxy.set("drop-reply", match=b"/2330.json")
        report = st.sync(CANDLES, "2330", "2024-01-01", "2024-06-30", progress=False)
        assert proxy.dropped_replies == 1
        assert report.ok and report.rows_written > 100
        assert s3.files("reply", "_leases/") == []  # released: it knew the lease was its own


def test_a_lost_reply_to_a_log_entry_put_keeps_the_store_whole(
    s3: Place, sb: Sandbox, proxy: FaultProxy
) -> None:
    with Store(
        s3.url("mreply"),
        api_key=sb.api_key,
        base_url=sb.base_url,
        storage_options=_through(proxy),
    ) as st:
        # the PUT of the sync's first entry lands, its reply is lost: the retry's condition
        # fails on the writer's own entry, which it knows by its id
        entry = f"PUT /{s3.bucket}/mreply/_log/00000000000000000000.json"
        proxy.set("drop-reply", match=entry.encode())
        st.sync(CANDLES, "2330", "2024-01-01", "2024-06-30", progress=False)
        assert proxy.dropped_replies == 1
        assert len(st.read(CANDLES, "2330", "2024-01-01", "2024-06-30")) > 100
        assert st.verify().problems == []


@pytest.mark.slow
@pytest.mark.parametrize("where", ["store", "storage_options"])
def test_a_silent_endpoint_is_a_typed_error_within_the_timeout(
    s3: Place, sb: Sandbox, proxy: FaultProxy, where: str
) -> None:
    with s3.store("silent", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(CANDLES, "2330", "2024-01-01", "2024-03-31", progress=False)
    # 10 s: opening the store (a HEAD through the proxy) must answer within it even on a
    # loaded machine; 2 s did not always
    opts = _through(proxy)
    kw: dict[str, Any] = {"timeout": 10}
    if where == "storage_options":
        opts, kw = {**opts, "timeout": 10}, {}
    with Store(s3.url("silent"), storage_options=opts, **kw) as st:
        proxy.set("blackhole")
        # the store's own deadline ends it (the message says so), not botocore's retries,
        # which held a silent read for minutes
        with pytest.raises(StoreUnavailable, match=r"no answer within 10 s") as info:
            st.read(CANDLES, "2330")
        assert "/_log/" in info.value.what  # names what was tried
        proxy.set("pass")
        assert len(st.read(CANDLES, "2330")) > 50  # and works again once the store answers


CHILD_READ = """
import sys
from marketframe.store import Store
st = Store(sys.argv[1], storage_options={"endpoint_url": sys.argv[2]}, timeout=600)
print("READY", flush=True)
sys.stdin.readline()
try:
    st.read("stock.historical.candles", "2330")
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
    raise SystemExit(130)
"""


def test_ctrl_c_interrupts_a_wait_for_a_silent_endpoint_at_once(
    s3: Place, sb: Sandbox, proxy: FaultProxy, s3_server: S3Server
) -> None:
    with s3.store("ctrlc", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(CANDLES, "2330", "2024-01-01", "2024-03-31", progress=False)
    env = {**subprocess_env(), **s3_server.env()}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_READ, s3.url("ctrlc"), proxy.url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "READY"
        proxy.set("blackhole")
        child.stdin.write("go\n")
        child.stdin.flush()
        time.sleep(1.5)  # the child is waiting on the silent endpoint
        assert child.poll() is None
        child.send_signal(2)
        # the child's deadline is 600 s: a wait that Ctrl-C cannot interrupt lasts until it
        # ends (a StoreUnavailable) or past this bound; the interrupt itself ends it here
        out, err = child.communicate(timeout=300)
        assert "INTERRUPTED" in out and child.returncode == 130, err
        assert "StoreUnavailable" not in err and proxy.blackholed > 0, err
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    "url",
    [
        f"s3://AKIAIOSFODNN7EXAMPLE:{SECRET}@no-such-bucket-mf/x",
        f"sftp://someone:{SECRET}@127.0.0.1:1/data",
        f"nosuchscheme://someone:{SECRET}@host/x",
    ],
    ids=["s3", "sftp", "unknown"],
)
def test_credentials_in_a_store_url_are_never_shown(
    s3: Place, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    shown: list[str] = []
    with pytest.warns(MarketframeWarning, match="environment") as warned:
        try:
            st = Store(url, storage_options={"endpoint_url": s3.server.endpoint}, timeout=5)  # type: ignore[union-attr]
            shown += [repr(st), str(st.root)]
        except Exception as exc:  # noqa: BLE001 - what it says is what is checked
            shown += [str(exc), repr(exc), *(str(a) for a in exc.args)]
    shown += [str(w.message) for w in warned]
    for text in shown:
        assert SECRET not in text and "someone:" not in text and "AKIAIOSFODNN7" not in text
    assert SECRET not in caplog.text  # (botocore's own debug log shows the key id, signed)


def test_a_store_url_without_credentials_anywhere_is_one_clear_line(
    s3: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from marketframe.cli import main

    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.server.endpoint)  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="no credentials"):
        Store(s3.url("nocreds"))
    code = main(["verify", "--store", s3.url("nocreds")])
    err = capsys.readouterr().err
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "no credentials" in lines[0] and "AWS_ACCESS_KEY_ID" in lines[0]
    assert "NoCredentialsError" not in err and "Traceback" not in err


def test_a_bad_timeout_is_refused(s3: Place) -> None:
    for bad in (0, -1, float("nan"), float("inf"), "5"):
        with pytest.raises(InvalidParams, match="timeout"):
            Store(s3.url("t"), storage_options=s3.server.options(), timeout=bad)  # type: ignore[arg-type,union-attr]


def test_a_lock_of_another_live_writer_is_still_refused(
    s3: Place, sb: Sandbox, proxy: FaultProxy
) -> None:
    """Recognising its own lease after a lost reply must not take another writer's."""
    from marketframe.store._storage._lease import Leases

    with Store(
        s3.url("other"),
        api_key=sb.api_key,
        base_url=sb.base_url,
        storage_options=_through(proxy),
        lock_timeout=0,
    ) as st:
        other = Leases(st._parts.storage)
        other.acquire(DAILY, ["2330"], timeout=0)
        try:
            with pytest.raises(StoreLocked):
                st.sync(CANDLES, "2330", "2024-01-01", "2024-03-31", progress=False)
        finally:
            other.release()
