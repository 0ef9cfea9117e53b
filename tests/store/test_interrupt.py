"""Ctrl-C during a sync against a silent server returns promptly and leaves the store
consistent (17.8): the fetch threads are not waited for."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import subprocess_env

CHILD = """
import signal, sys
from marketframe.store import Store
# as at a terminal (a child of a background job inherits SIGINT ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
root, url = sys.argv[1:3]
st = Store(root, api_key="k" * 20, base_url=url, max_workers=4)
try:
    st.sync("stock.historical.candles", ["2330", "0050"], "2020-01-01", "2024-12-31",
            progress=False)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise SystemExit(130)
"""


def test_sigint_stops_a_sync_against_a_silent_server(
    silent_server: Any, tmp_path: Path, sb: Sandbox
) -> None:
    url, accepted = silent_server.url, silent_server.accepted
    root = tmp_path / "s"
    # something already held, to check it survives the interrupt
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync("stock.historical.candles", "2330", "2019-01-01", "2019-12-31", progress=False)
        held = st.read("stock.historical.candles", "2330", backend="arrow")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), url],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # requests are in flight once the server has accepted connections
        assert accepted.acquire(timeout=120), "the sync never connected"
        child.send_signal(signal.SIGINT)
        # a generous bound: before the fix the child waited for every request's timeouts and
        # retries (minutes); the test only asserts that it exits on its own
        out, err = child.communicate(timeout=90)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err
    assert "interrupted" in out
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as st:
        assert st.verify().problems == []
        assert st.read("stock.historical.candles", "2330", backend="arrow").equals(held)
