"""The sandbox as a process: Ctrl-C (SIGINT) stops it, from the CLI and from Python."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

#: Upper bound for a stopped process to exit; it only guards against a hang, it is no measure.
EXIT_BOUND = 60


def _start(args: list[str], ready: str) -> subprocess.Popen[str]:
    """Start a Python process; return once it printed ``ready`` (its output so far is kept
    in ``proc.seen``)."""
    proc = subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    proc.seen = ""  # type: ignore[attr-defined]
    for line in proc.stdout:
        proc.seen += line  # type: ignore[attr-defined]
        if ready in line:
            return proc
    proc.kill()
    raise AssertionError(f"the process never printed {ready!r}; exit {proc.wait()}")


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int | None, str]:
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(EXIT_BOUND)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None, ""
    assert proc.stdout is not None
    return code, proc.stdout.read()


def test_cli_sandbox_stops_on_sigint() -> None:
    proc = _start(["-m", "marketframe", "sandbox", "--port", "0"], "Serving until interrupted")
    code, rest = _interrupt(proc)
    assert code == 0, "`marketframe sandbox` ignored SIGINT (Ctrl-C)"
    assert "stopped" in rest


def test_started_sandbox_lets_ctrl_c_interrupt_a_wait() -> None:
    script = textwrap.dedent("""
        import signal, threading
        signal.signal(signal.SIGINT, signal.default_int_handler)  # undo an inherited SIG_IGN
        from marketframe.sandbox import Sandbox
        sb = Sandbox(port=0).start()
        try:
            print("up", flush=True)
            threading.Event().wait()
        except KeyboardInterrupt:
            sb.stop()
            print("interrupted", flush=True)
    """)
    proc = _start(["-c", script], "up")
    code, rest = _interrupt(proc)
    assert code == 0, "a wait after Sandbox.start() ignored SIGINT (Ctrl-C)"
    assert "interrupted" in rest


def test_cli_passes_the_connection_limits_on() -> None:
    proc = _start(
        [
            "-m",
            "marketframe",
            "sandbox",
            "--port",
            "0",
            "--idle-timeout",
            "0.5",
            "--http-connections",
            "1",
        ],
        "Serving until interrupted",
    )
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", proc.seen)  # type: ignore[attr-defined]
    assert found, "the CLI printed no base URL"
    port = int(found.group(1))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=EXIT_BOUND) as held,
        socket.create_connection(("127.0.0.1", port), timeout=EXIT_BOUND) as extra,
    ):
        assert extra.recv(1) == b""  # beyond --http-connections 1: closed at once
        assert held.recv(1) == b""  # silent for --idle-timeout 0.5 s: closed
    code, _ = _interrupt(proc)
    assert code == 0
