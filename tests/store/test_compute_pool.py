"""Compute's own process pool when processes die: the driver killed with SIGKILL leaves no
process behind; a worker killed mid-task is a marketframe error that says a rerun resumes.

A task is held inside a worker by a real obstacle, not a mock: one symbol's source file
is replaced by a named pipe, so the worker that reads it blocks in ``open`` until the test
opens the pipe's other end (which the test can tell: opening it for writing without
blocking succeeds only once a reader is there).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import subprocess_env

DAILY = "stock.historical.candles"
SYMS = ["2330", "2454", "0050", "2317"]
DEADLINE = 180.0  # generous: the machine is shared; every wait below is a poll


def _poll(what: str, ok: object) -> None:
    end = time.monotonic() + DEADLINE
    while not ok():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"not within {DEADLINE:g} s: {what}")
        time.sleep(0.1)


@contextlib.contextmanager
def blocked_input(root: Path, symbol: str) -> Iterator[Path]:
    """``symbol``'s source file replaced by a named pipe while the block runs, then put back."""
    (part,) = root.glob(f"dataset={DAILY}/*/*/sym={symbol}/part-0.parquet")
    saved = part.with_name("saved.bin")
    os.rename(part, saved)
    os.mkfifo(part)
    try:
        yield part
    finally:
        os.unlink(part)
        os.rename(saved, part)


def reader_waiting(fifo: Path) -> int | None:
    """The write end of ``fifo`` once a reader has it open (a worker blocked on it), else None."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None
        raise


def wait_for_reader(fifo: Path, child: subprocess.Popen[str]) -> int:
    got: list[int] = []

    def ready() -> bool:
        assert child.poll() is None, "the compute ended before a worker read the pipe"
        fd = reader_waiting(fifo)
        if fd is not None:
            got.append(fd)
        return bool(got)

    _poll("a worker reading the pipe", ready)
    return got[0]


def gone(p: psutil.Process) -> bool:
    try:
        return not p.is_running() or p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


RUN = """
import sys
from marketframe.store import Store
with Store(sys.argv[1]) as st:
    try:
        st.compute("stock.historical.candles", ["rsi", "macd"], max_workers=2)
    except Exception as exc:
        import json
        print(json.dumps({"type": type(exc).__name__,
                          "mro": [c.__name__ for c in type(exc).__mro__],
                          "message": str(exc)}), flush=True)
        raise SystemExit(3)
"""


def _synced(sb: Sandbox, path: Path) -> None:
    with Store(path, api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(DAILY, SYMS, "2024-01-01", "2024-12-31", progress=False)


def _compute_in_child(path: Path) -> subprocess.Popen[str]:
    """The child's output goes to files: the pool's processes inherit them, and a pipe would
    stay open for as long as any of them lives."""
    with open(path.with_suffix(".out"), "w") as out, open(path.with_suffix(".err"), "w") as err:
        return subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(RUN), str(path)],
            env=subprocess_env(),
            stdout=out,
            stderr=err,
            text=True,
        )


def _output(path: Path) -> tuple[str, str]:
    return path.with_suffix(".out").read_text(), path.with_suffix(".err").read_text()


@contextlib.contextmanager
def computing(root: Path) -> Iterator[tuple[subprocess.Popen[str], list[psutil.Process]]]:
    """A child running compute over ``root`` with its default pool, one worker blocked on a
    pipe: yields the child and its descendants then; every one of them is gone after."""
    with blocked_input(root, "2454") as fifo:
        child = _compute_in_child(root)
        fd, family = None, []
        try:
            fd = wait_for_reader(fifo, child)
            family = psutil.Process(child.pid).children(recursive=True)
            yield child, family
        finally:
            if fd is not None:
                os.close(fd)
            if child.poll() is None:
                child.kill()
                child.wait(60)
            for p in family:
                with contextlib.suppress(psutil.NoSuchProcess):  # gone meanwhile: done
                    if not gone(p):
                        p.kill()  # a leftover (of the old code): not left to the next tests


def test_killing_the_driver_leaves_no_pool_process_behind(sb: Sandbox, tmp_path: Path) -> None:
    """``kill -9`` of a process running ``Store.compute`` with its default pool: the
    forkserver, the workers and the resource tracker all exit (they used to stay, ~330 MB,
    for as long as the machine ran)."""
    _synced(sb, tmp_path / "s")
    with computing(tmp_path / "s") as (child, family):
        assert len(family) >= 3  # the forkserver, a worker at least, the resource tracker
        os.kill(child.pid, signal.SIGKILL)
        child.wait(60)
        _poll(
            "the pool's processes exiting after their driver was killed",
            lambda: all(gone(p) for p in family),
        )


def test_a_killed_worker_is_a_store_error_and_a_rerun_resumes(sb: Sandbox, tmp_path: Path) -> None:
    """A worker of compute's own pool killed mid-task (the OOM killer, kill -9) surfaces as a
    marketframe error saying a rerun resumes, not as a bare ``BrokenProcessPool`` or
    ``EOFError``; the rerun finishes what is missing."""
    _synced(sb, tmp_path / "s")
    with computing(tmp_path / "s") as (child, family):
        server = {p.pid for p in family if "forkserver" in " ".join(p.cmdline())}
        workers = [p for p in family if p.ppid() in server]
        assert workers
        killed = 0
        for w in workers:
            # the first death breaks the pool, whose driver then ends the other workers
            # itself: one of them may be gone before it is reached here
            with contextlib.suppress(psutil.NoSuchProcess):
                w.kill()
                killed += 1
        assert killed
        child.wait(DEADLINE)
    out, err = _output(tmp_path / "s")
    assert child.returncode == 3, err[-3000:]
    got = json.loads(out.strip().splitlines()[-1])
    assert "MarketframeError" in got["mro"], got
    assert got["type"] not in ("BrokenProcessPool", "EOFError")
    assert "rerun" in got["message"].lower() and "resume" in got["message"], got
    with Store(tmp_path / "s") as st:
        rep = st.compute(DAILY, ["rsi", "macd"], max_workers=1)
        for m in rep.modes.values():
            assert sorted(s for syms in m.values() for s in syms) == sorted(SYMS)
            assert set(m) <= {"full", "unchanged"}
        assert st.verify().problems == []
