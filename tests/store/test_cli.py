"""`marketframe sync` / `marketframe export` as a batch job would run them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from marketframe.cli import main
from marketframe.exceptions import InvalidParams
from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import subprocess_env


@pytest.fixture
def env(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("MARKETFRAME_API_KEY", sb.api_key)
    return ["--base-url", sb.base_url, "--no-progress"]


def test_sync_inline_symbols_then_nothing_left(
    env: list[str], tmp_path: Path, sb: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "sync",
        "stock.historical.candles",
        "--store",
        str(tmp_path / "s"),
        "--symbols",
        "2330",
        "0050",
        "--start",
        "2023-01-01",
        "--end",
        "2024-12-31",
        *env,
    ]
    assert main(args) == 0
    served = sb.requests_served
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert report["requests"] == 0 and report["failures"] == []
    assert sb.requests_served == served
    assert len(Store(tmp_path / "s").read("stock.historical.candles", "0050")) > 400


def test_symbols_file_and_params(env: list[str], tmp_path: Path) -> None:
    f = tmp_path / "symbols.txt"
    f.write_text("# my list\n2330\n2454  # MediaTek\n\n", encoding="utf-8")
    assert (
        main(
            [
                "sync",
                "stock.technical.sma",
                "--store",
                str(tmp_path / "s"),
                "--symbols-file",
                str(f),
                "--start",
                "2024-01-01",
                "--end",
                "2024-06-30",
                "--param",
                "period=10",
                "--today",
                "2026-11-20",
                *env,
            ]
        )
        == 0
    )
    df = Store(tmp_path / "s").read("stock.technical.sma", period=10)
    assert set(df.symbol) == {"2330", "2454"} and set(df.period) == {10}


@pytest.mark.parametrize("name", ["OTC", "otc"])  # a board in any case, as download takes it
def test_whole_board_from_the_tickers_endpoint(
    env: list[str], tmp_path: Path, sb: Sandbox, name: str
) -> None:
    out = tmp_path / "otc.parquet"
    assert (
        main(
            [
                "export",
                "stock.historical.candles",
                "--board",
                name,
                "--start",
                "2024-01-01",
                "--end",
                "2024-01-31",
                "--out",
                str(out),
                *env,
            ]
        )
        == 0
    )
    from marketframe.client import Client

    with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
        board = set(
            c.fetch_table("stock.intraday.tickers", type="EQUITY", market="OTC")
            .column("symbol")
            .to_pylist()
        )
    table = pq.read_table(out)
    assert set(table.column("symbol").to_pylist()) == board and len(board) >= 4
    assert table.schema.metadata[b"marketframe.endpoint"] == b"stock.historical.candles"


def test_failures_give_a_nonzero_status_and_are_listed(
    env: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.parquet"
    status = main(
        [
            "export",
            "stock.historical.candles",
            "--symbols",
            "2330",
            "9999",
            "--start",
            "2024-01-01",
            "--end",
            "2024-03-31",
            "--out",
            str(out),
            "--store",
            str(tmp_path / "s"),
            *env,
        ]
    )
    err = capsys.readouterr().err
    assert status == 1
    assert "FAILED 9999 2024-01-01..2024-03-31: SymbolNotFound" in err
    assert set(pq.read_table(out).column("symbol").to_pylist()) == {"2330"}


def test_bad_arguments_exit_2_before_any_request(
    env: list[str], tmp_path: Path, sb: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    served = sb.requests_served
    assert (
        main(
            [
                "sync",
                "stock.technical.sma",
                "--store",
                str(tmp_path / "s"),
                "--symbols",
                "2330",
                "--start",
                "2024-01-01",
                "--param",
                "perod=3",
                *env,
            ]
        )
        == 2
    )
    assert "allowed: period" in capsys.readouterr().err
    assert sb.requests_served == served


def test_the_installed_command_runs(sb: Sandbox, tmp_path: Path) -> None:
    env = {**subprocess_env(), "MARKETFRAME_API_KEY": sb.api_key}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "marketframe",
            "sync",
            "stock.historical.candles",
            "--store",
            str(tmp_path / "s"),
            "--symbols",
            "2330",
            "9999",
            "--start",
            "2024-01-01",
            "--end",
            "2024-02-01",
            "--base-url",
            sb.base_url,
            "--no-progress",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "FAILED 9999" in proc.stderr and sb.api_key not in proc.stderr + proc.stdout


def test_a_symbols_file_that_is_not_utf8_is_a_usage_error(
    env: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "symbols.txt"
    f.write_bytes(b"2330\n\xff\xfe2454\n")
    args = ["sync", "stock.historical.candles", "--store", str(tmp_path / "s")]
    code = main([*args, "--symbols-file", str(f), "--start", "2024-01-01", *env])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "is not UTF-8 text" in err and "Traceback" not in err and "--debug" not in err


@pytest.mark.parametrize("command", ["sync", "verify", "export"])
def test_an_empty_or_file_store_path_is_refused_before_anything_is_made(
    env: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a store")
    rest = {
        "sync": ["stock.historical.candles", "--symbols", "2330", "--start", "2024-01-01", *env],
        "export": [
            "stock.historical.candles",
            "--symbols",
            "2330",
            "--start",
            "2024-01-01",
            "--out",
            str(tmp_path / "o.parquet"),
            *env,
        ],
        "verify": [],
    }[command]
    for where, said in (("", "is empty"), (str(a_file), "is a file, not a directory")):
        assert main([command, "--store", where, *rest]) == 2
        assert said in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing created
    with pytest.raises(InvalidParams, match="is empty"):
        Store("")
