"""`marketframe download`: many symbols over any range into one CSV or Parquet file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

import marketframe
from marketframe import Client
from marketframe.cli import main


@pytest.fixture
def on_sandbox(sandbox: Any, api_key: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sandbox.base_url)
    monkeypatch.delenv("MARKETFRAME_DEBUG", raising=False)
    return sandbox


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def test_download_writes_parquet_equal_to_the_library_call(
    on_sandbox: Any, api_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "prices.parquet"
    code, _, err = _run(
        capsys,
        [
            "download",
            "2330",
            "0050",
            "--start",
            "2010-01-01",
            "--end",
            "2025-12-31",
            "-o",
            str(out),
        ],
    )
    assert code == 0, err
    table = pq.read_table(out)
    assert f"wrote {table.num_rows} rows to {out}" in err
    with Client(api_key, base_url=on_sandbox.base_url, cache=False) as c:
        want = marketframe.download(
            ["2330", "0050"], "2010-01-01", "2025-12-31", client=c, backend="arrow"
        )
    assert table.equals(want)
    assert table.column("symbol").to_pylist()[0] == "2330"  # in the order given


def test_download_writes_csv_and_syncs_a_store(
    on_sandbox: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "weekly.csv"
    code, _, err = _run(
        capsys,
        [
            "download",
            "2330",
            "--start",
            "2024-01-01",
            "--end",
            "2025-06-30",
            "--timeframe",
            "W",
            "--fields",
            "close,volume",
            "--store",
            str(tmp_path / "store"),
            "-o",
            str(out),
        ],
    )
    assert code == 0, err
    df = pd.read_csv(out)
    assert len(df) > 70 and df.close.notna().all() and df.open.isna().all()
    assert (tmp_path / "store" / "_log").is_dir()


def test_download_prints_a_table_without_out(
    on_sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(
        capsys, ["download", "2330", "--start", "2025-06-02", "--end", "2025-06-06"]
    )
    assert code == 0 and "2330" in out and "2025-06-02" in out


def test_help_explains_symbols_boards_and_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["download", "--help"])
    assert code == 0
    for words in (
        "SYMBOL",
        "TSE",
        "--start",
        "--end",
        "--timeframe",
        "--period",
        "--interval",
        ".parquet",
        "--store",
        "example: marketframe download 2330 0050",
    ):
        assert words in out, words


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (
            ["download", "2330", "--start", "2025-12-20", "--end", "2025-12-10"],
            ("download: error: InvalidParams", "start <= end"),
        ),
        (["download", "23/30"], ("InvalidParams", "'symbols'")),
        (["download", "2330", "--start", "2025-02-30"], ("InvalidParams", "start")),
        (["download", "2330", "--fields", "open,shut"], ("'shut'", "close")),
        (
            ["download", "2330", "--timeframe", "5", "--start", "2025-01-01"],
            ("minute timeframe", "start=None"),
        ),
        (["download", "2330", "--timeframe", "H"], ("invalid choice", "'D'")),
        (["download", "2330", "-o", "prices.xlsx"], (".csv or .parquet",)),
        (["download"], ("SYMBOL",)),
        (
            ["download", "--fields", "close", "volume", "2330"],
            ("'volume', a price field", "--fields close,volume"),
        ),
    ],
)
def test_wrong_arguments_are_one_clear_line_and_exit_2(
    argv: list[str],
    words: tuple[str, ...],
    on_sandbox: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    served = on_sandbox.requests_served
    code, _, err = _run(capsys, argv)
    assert code == 2, err
    for w in words:
        assert w in err, err
    assert on_sandbox.requests_served == served  # refused before any request


def test_a_failing_symbol_exits_1_naming_it(
    on_sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, ["download", "2330", "ZZZZ", "--start", "2025-01-01", "--end", "2025-01-31"]
    )
    # the symbols that succeeded are printed; the failed one named in one line
    assert code == 1 and "ZZZZ FAILED" in err


def test_period_and_interval_as_in_yfinance(
    on_sandbox: Any, api_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "weekly.parquet"
    argv = ["download", "2330", "0050", "--period", "1y", "--interval", "1wk", "-o", str(out)]
    code, _, err = _run(capsys, argv)
    assert code == 0, err
    with Client(api_key, base_url=on_sandbox.base_url, cache=False) as c:
        want = marketframe.download(
            ["2330", "0050"], period="1y", interval="1wk", client=c, backend="arrow"
        )
    assert pq.read_table(out).equals(want)
    served = on_sandbox.requests_served
    code, _, err = _run(capsys, ["download", "2330", "--interval", "3mo"])
    assert code == 2 and "'1mo'" in err and on_sandbox.requests_served == served, err
    code, _, err = _run(capsys, ["download", "2330", "--period", "5d", "--start", "2025-01-01"])
    assert code == 2 and "start/end" in err and on_sandbox.requests_served == served, err


@pytest.mark.parametrize(
    "fields",
    [["--fields", "close,volume"], ["--fields", "close", "--fields", "volume"]],
)
def test_fields_before_the_symbols_leave_the_symbols_alone(
    on_sandbox: Any, tmp_path: Path, fields: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--fields close,volume 2330`: the option takes one value, so 2330 stays a symbol."""
    out = tmp_path / "two.csv"
    span = ["--start", "2026-11-02", "--end", "2026-11-06", "-o", str(out)]
    code, _, err = _run(capsys, ["download", *fields, "2330", "0050", *span])
    assert code == 0, err
    df = pd.read_csv(out, dtype={"symbol": str})
    assert list(df.symbol.unique()) == ["2330", "0050"] and len(df) == 10
    assert df.close.notna().all() and df.volume.notna().all() and df.open.isna().all()
