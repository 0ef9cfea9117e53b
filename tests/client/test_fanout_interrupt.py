"""Every multi-request call goes through the client's one fan-out: against a silent server
(a socket on 127.0.0.1 that accepts and never answers) Ctrl-C interrupts the waits at once,
and the client's ``deadline`` bounds the whole call, not each request.

Each call runs in a child process that gets a real SIGINT once the server has accepted its
connections. Its client waits 600 s for an answer: a wait Ctrl-C cannot interrupt outlasts
the parent's bound, so no wall-clock limit is asserted (the child prints how long it took,
from the moment the parent sent the signal, for the record). A deadline that bounded each
request instead of the call would start the next requests once the first ones gave up: the
server counts the connections."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import marketframe
from marketframe import BatchError, Client, DeadlineExceeded

ROOT = Path(__file__).resolve().parents[2]
SYMBOLS = [str(2300 + i) for i in range(20)]

CHILD = """
import datetime as dt, signal, sys, time
import pyarrow as pa
import marketframe
from marketframe import Client, Store
# as at a terminal (a child of a background job inherits SIGINT ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
url, which, root = sys.argv[1:4]
symbols = [str(2300 + i) for i in range(20)]
client = Client("k" * 20, base_url=url, cache=False, max_workers=4, timeout=600, deadline=600)
try:
    if which == "load":
        client.stock.historical.candles(symbol=symbols, from_="2024-01-01", to="2024-06-30")
    elif which == "download":
        marketframe.download(symbols, "2015-01-01", "2024-12-31", client=client, progress=False)
    elif which == "adjusted":
        candles = pa.table({"symbol": ["2330"], "date": [dt.date(2018, 1, 2)], "close": [1.0]})
        client.adjust_prices(candles, "all")
    elif which == "sync":
        Store(root, client).sync(
            "stock.historical.candles", symbols, "2020-01-01", "2024-12-31", progress=False
        )
except KeyboardInterrupt:
    sent = float(sys.stdin.readline())
    print(f"interrupted after {time.time() - sent:.3f}", flush=True)
    raise SystemExit(130)
print("finished", flush=True)
"""


@pytest.mark.parametrize("which", ["load", "download", "adjusted", "sync"])
def test_sigint_interrupts_the_waits_at_once(
    silent_server: Any, tmp_path: Path, which: str
) -> None:
    url, accepted = silent_server.url, silent_server.accepted
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url, which, str(tmp_path / "store")],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # the fan-out is under way once the server has accepted its 4 workers' connections
        for _ in range(4):
            assert accepted.acquire(timeout=120), "the call never connected"
        assert child.stdin is not None
        child.stdin.write(f"{time.time()!r}\n")
        child.stdin.flush()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=300)  # under the child's 600 s waits
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err
    assert "interrupted after " in out, out
    print(which, out.strip())


def _connections(silent: Any) -> int:
    """How many connections the silent server accepted (it takes them every 0.1 s)."""
    n = 0
    while silent.accepted.acquire(timeout=1):
        n += 1
    return n


def test_the_deadline_bounds_a_twenty_symbol_call(
    silent_server: Any,
) -> None:
    url = silent_server.url
    with Client("k" * 20, base_url=url, cache=False, deadline=2, max_workers=8) as client:
        with pytest.raises(BatchError) as info:
            client.stock.historical.candles(symbol=SYMBOLS, from_="2024-01-01", to="2024-06-30")
    # one deadline for the call: one wave of 8 requests (one per symbol: 20 requests)
    assert _connections(silent_server) <= 8
    assert set(info.value.errors) == set(SYMBOLS)
    assert all(isinstance(e, DeadlineExceeded) for e in info.value.errors.values())
    assert info.value.frame is None


def test_the_deadline_bounds_a_download(silent_server: Any) -> None:
    url = silent_server.url
    with Client("k" * 20, base_url=url, cache=False, deadline=2, max_workers=8) as client:
        with pytest.raises(BatchError) as info:
            marketframe.download(SYMBOLS, "2015-01-01", "2024-12-31", client=client)
    assert _connections(silent_server) <= 8  # 200 windows, one deadline: one wave
    assert set(info.value.errors) == set(SYMBOLS)
