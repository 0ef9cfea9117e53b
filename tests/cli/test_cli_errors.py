"""Every subcommand reports an ordinary mistake as one line naming the fix, never a traceback:
exit 2 for usage errors (nothing was requested), 1 for failures, 130 on Ctrl-C; a traceback
only with --debug."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from marketframe.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def on_sandbox(sandbox: Any, api_key: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Commands talk to the session sandbox as to a real service (key + base URL)."""
    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sandbox.base_url)
    monkeypatch.delenv("MARKETFRAME_DEBUG", raising=False)
    return sandbox


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1, err
    return lines[0]


# (argv, exit status, words the one line must hold)
CASES: dict[str, tuple[list[str], int, tuple[str, ...]]] = {
    "load unknown symbol": (
        ["load", "stock.intraday.quote", "--symbol", "ZZZZ"],
        1,
        ("SymbolNotFound", "'ZZZZ'", "tickers"),
    ),
    "load a range over a year": (
        [
            "load",
            "stock.historical.candles",
            "--symbol",
            "2330",
            "--from",
            "2020-01-01",
            "--to",
            "2022-01-01",
        ],
        2,
        ("InvalidParams", "under one year"),
    ),
    "load unknown field": (
        ["load", "stock.historical.candles", "--symbol", "2330", "--fields", "open,shut"],
        2,
        ("'shut'", "allowed", "close"),
    ),
    "load unknown endpoint": (
        ["load", "stock.intraday.qoute"],
        2,
        ("invalid choice", "stock.intraday.quote"),
    ),
    "load bad date": (
        ["load", "stock.historical.candles", "--symbol", "2330", "--from", "2024-02-30"],
        2,
        ("InvalidParams", "from"),
    ),
    "crosscheck unknown symbol": (
        ["crosscheck", "ZZZZ", "--indicator", "sma"],
        1,
        ("SymbolNotFound", "'ZZZZ'"),
    ),
    "crosscheck bad date": (
        ["crosscheck", "2330", "--start", "2026-13-01"],
        2,
        ("InvalidParams", "start"),
    ),
    "crosscheck bad timeframe": (
        ["crosscheck", "2330", "--timeframe", "H"],
        2,
        ("invalid choice", "'D'"),
    ),
    "demo bad --now": (["demo", "--now", "next friday"], 2, ("not an ISO time", "2026-11-20")),
    "sandbox bad --now": (["sandbox", "--now", "next friday"], 2, ("not an ISO time",)),
    "sync bad --param": (
        [
            "sync",
            "stock.historical.candles",
            "--store",
            "unused",
            "--symbols",
            "2330",
            "--param",
            "period=5",
        ],
        2,
        ("marketframe sync: error: InvalidParams", "period", "NAME=VALUE"),
    ),
    "export unknown symbol": (
        [
            "export",
            "stock.historical.candles",
            "--symbols",
            "ZZZZ",
            "--start",
            "2026-01-05",
            "--out",
            "x.parquet",
        ],
        1,
        ("FAILED", "ZZZZ"),
    ),
    "academy without a URL": (["academy", "whoami"], 2, ("--url", "MARKETFRAME_ACADEMY_URL")),
    "snapshot without an action": (["snapshot", "--store", "s"], 2, ("ACTION",)),
    "snapshot of no store": (
        ["snapshot", "create", "x", "--store", "missing"],
        2,
        ("does not exist", "existing store"),
    ),
    "snapshot list of no store names the command as typed": (
        ["snapshot", "list", "--store", "missing"],
        2,
        (
            "marketframe snapshot list: error: InvalidParams: snapshot list: parameter 'store'",
            "existing store",
        ),
    ),
    "gc bad --keep": (["gc", "--store", "s", "--keep", "soon"], 2, ("not a duration",)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_subcommand_reports_a_bad_input_in_one_line(
    name: str,
    on_sandbox: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv, status, words = CASES[name]
    code, err = _run(capsys, argv)
    assert code == status, err
    for word in words:
        assert word in err, err


def test_marketframe_errors_carry_their_fix_and_need_no_debug_hint(
    on_sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(capsys, ["load", "stock.intraday.quote", "--symbol", "ZZZZ"])
    line = _one_line(err)
    assert code == 1 and line.startswith("marketframe load: error: SymbolNotFound: ")
    assert line.count("does not exist") + line.count("unknown") == 1, line  # the fix, once
    assert "--debug" not in err


def test_no_network_is_one_line(
    capsys: pytest.CaptureFixture[str], busy_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a listening socket that never answers HTTP would hang; a closed port refuses at once
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("MARKETFRAME_API_KEY", "not-a-real-key")
    code, err = _run(
        capsys,
        [
            "load",
            "stock.intraday.quote",
            "--symbol",
            "2330",
            "--base-url",
            f"http://127.0.0.1:{closed}",
        ],
    )
    line = _one_line(err)
    assert code == 1 and "TransportError" in line and "network" in line
    assert "not-a-real-key" not in err


def test_port_in_use_names_the_fix(capsys: pytest.CaptureFixture[str], busy_port: int) -> None:
    code, err = _run(capsys, ["sandbox", "--port", str(busy_port)])
    line = _one_line(err)
    assert code == 1 and "in use" in line and "--port" in line


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(
    on_sandbox: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    import marketframe.cli

    def disk_full(table: Any, where: Any, **_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(where))

    # a full disk once the data came (the path itself was checked before any request)
    monkeypatch.setattr(marketframe.cli.pq, "write_table", disk_full)
    target = tmp_path / "quote.parquet"
    argv = ["load", "stock.intraday.quote", "--symbol", "2330", "--out", str(target)]
    code, err = _run(capsys, argv)
    line = _one_line(err)
    assert code == 1 and "OSError: No space left on device" in line and str(tmp_path) in line
    assert "run with --debug for the traceback" in err
    for debug_argv in ([*argv, "--debug"], ["--debug", *argv]):
        code = main(debug_argv)
        err = capsys.readouterr().err
        assert code == 1 and "Traceback (most recent call last)" in err
    monkeypatch.setenv("MARKETFRAME_DEBUG", "1")
    assert main(argv) == 1 and "Traceback (most recent call last)" in capsys.readouterr().err


def test_fields_as_a_comma_string_or_a_list(
    on_sandbox: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i, fields in enumerate((["open,close"], ["open", "close"])):
        out = tmp_path / f"{i}.parquet"
        code = main(
            [
                "load",
                "stock.historical.candles",
                "--symbol",
                "2330",
                "--from",
                "2026-11-02",
                "--to",
                "2026-11-06",
                "--fields",
                *fields,
                "--out",
                str(out),
            ]
        )
        assert code == 0, capsys.readouterr().err
        table = pq.read_table(out)
        assert table.num_rows == 5
        assert table.column("open").null_count == table.column("close").null_count == 0
        assert table.column("high").null_count == 5  # not asked for: the service sent none


def test_ctrl_c_exits_130_without_a_traceback(tmp_path: Path) -> None:
    """A real Ctrl-C (SIGINT) while a command waits on the service."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETFRAME_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with socket.socket() as server:  # accepts the connection and never answers
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "marketframe",
                "load",
                "stock.intraday.quote",
                "--symbol",
                "2330",
                "--base-url",
                url,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            conn, _ = server.accept()  # the command is now inside its request
            with conn:
                conn.recv(1024)
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err


# The installed command, as pip's script runs it, with a real SIGINT sent to itself while the
# module ``sys.argv[1]`` is being imported: a Ctrl-C at that moment of the command's life.
CTRL_C_WHILE_IMPORTING = """
import importlib.abc, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
WHEN = sys.argv.pop(1)
class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == WHEN:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, CtrlC())
sys.argv[0] = "marketframe"
from {module} import {function}
sys.exit({function}())
"""


@pytest.mark.parametrize(
    "when",
    [
        "numpy",  # import marketframe: numpy, pandas, pyarrow (the first second)
        "pyarrow.parquet",
        "marketframe.sandbox._cli",  # the command line is being built
        "marketframe.client",  # the command runs: its client loads
    ],
)
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(when: str) -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["marketframe"].split(":")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETFRAME_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    code = CTRL_C_WHILE_IMPORTING.format(module=module, function=function)
    argv = ["download", "2330", "--start", "2024-01-01", "--end", "2024-01-31"]
    done = subprocess.run(
        [sys.executable, "-c", code, when, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "interrupted" in done.stderr, done.stderr


def test_main_module_reports_like_main(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETFRAME_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "marketframe", "crosscheck", "2330", "--end", "tomorrow"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "InvalidParams" in done.stderr and "end" in done.stderr


def test_sandbox_stops_on_ctrl_c() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETFRAME_")}
    serve_then_interrupt("marketframe sandbox --port 0", env)


def serve_then_interrupt(command: str, env: dict[str, str]) -> None:
    """`marketframe sandbox` serves until Ctrl-C: start it (on a free port rather than the
    printed 8000, which may be taken here), wait for its banner, then press Ctrl-C."""
    words = shlex.split(command.replace("--port 8000", "--port 0"))
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "marketframe", *words[1:]],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = []
        for line in proc.stdout:
            banner.append(line)
            if line.startswith("Serving until interrupted"):
                break
        assert any("base URL" in line for line in banner), banner
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "stopped" in rest and "Traceback" not in err, err


def test_a_mistyped_endpoint_or_command_gets_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv, wanted in (
        (["load", "stock.intraday.qoute"], "'stock.intraday.quote'"),
        (["sync", "stock.historical.candels"], "'stock.historical.candles'"),
        (["crosscheck"[:-1] + "x"], "'crosscheck'"),
    ):
        code, err = _run(capsys, argv)
        assert code == 2 and f"did you mean {wanted}?" in err, err


@pytest.mark.parametrize(
    "argv",
    [["download"], ["download", "2330", "--timeframe", "2"], ["sync"], ["bogus"], ["load"]],
)
def test_a_usage_error_is_one_line_pointing_at_help(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, err = _run(capsys, argv)
    assert code == 2
    assert len(err.splitlines()) == 1 and "error:" in err and "--help" in err, err


def test_load_refuses_an_out_format_it_would_write_wrongly(
    on_sandbox: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = on_sandbox.requests_served
    code, err = _run(
        capsys,
        ["load", "stock.intraday.quote", "--symbol", "2330", "--out", str(tmp_path / "quote.xlsx")],
    )
    assert code == 2 and ".csv or .parquet" in err
    code, err = _run(
        capsys,
        [
            "export",
            "stock.historical.candles",
            "--symbols",
            "2330",
            "--start",
            "2026-01-05",
            "--out",
            str(tmp_path / "c.csv"),
        ],
    )
    assert code == 2 and "must end in .parquet" in err  # export writes Parquet only
    assert on_sandbox.requests_served == before and not list(tmp_path.iterdir())


def test_load_writes_into_a_new_directory_and_leaves_no_temporary_file(
    on_sandbox: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "new" / "quote.csv"
    code, err = _run(
        capsys, ["load", "stock.intraday.quote", "--symbol", "2330", "--out", str(out)]
    )
    assert code == 0, err
    assert "symbol" in out.read_text().splitlines()[0] and os.listdir(out.parent) == ["quote.csv"]
