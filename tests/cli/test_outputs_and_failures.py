"""What a command writes, and what it says when part of it fails: an output no file can be
written to is refused before any request (exit 2), a missing directory is made and said, a
refused sync leaves no empty store directory behind, and an unknown symbol is one line (not
one per window), with no rerun suggested for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_cli_errors import _run, on_sandbox  # noqa: F401 - the fixture, shared


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["download", "2330", "-o", "FILE/prices.parquet"], "is a file, not a directory"),
        (["download", "2330", "-o", "FILE/deeper/prices.csv"], "is a file, not a directory"),
        (["load", "stock.intraday.quote", "--symbol", "2330", "--out", "FILE/q.csv"], "a file"),
        (
            ["export", "stock.historical.candles", "--symbols", "2330", "--start", "2026-01-05"]
            + ["--out", "FILE/c.parquet"],
            "is a file, not a directory",
        ),
        (["crosscheck", "2330", "--chart", "FILE/chart.png"], "is a file, not a directory"),
        (["download", "2330", "-o", "DIR"], "is a directory"),
        (["download", "2330", "-o", "q" * 300 + ".csv"], "File name too long"),
        (["demo", "--out", "FILE"], "is a file, not a directory"),
    ],
)
def test_an_output_no_file_can_be_written_to_is_refused_before_any_request(
    on_sandbox: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    argv: list[str],
    words: str,
) -> None:
    (tmp_path / "file").write_text("not a directory")
    (tmp_path / "dir.csv").mkdir()
    paths = {"FILE": str(tmp_path / "file"), "DIR": str(tmp_path / "dir.csv")}
    argv = [next((a.replace(k, v) for k, v in paths.items() if k in a), a) for a in argv]
    served = on_sandbox.requests_served
    code, err = _run(capsys, argv)
    assert code == 2 and words in err, err
    assert on_sandbox.requests_served == served  # nothing fetched, then thrown away


def test_a_missing_directory_of_an_output_is_made_and_said(
    on_sandbox: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    out = tmp_path / "new" / "deeper" / "prices.parquet"
    argv = ["download", "2330", "--start", "2025-01-01", "--end", "2025-01-31", "-o", str(out)]
    code, err = _run(capsys, argv)
    assert code == 0 and out.stat().st_size > 0, err
    assert f"created the directory {out.parent}" in err


def test_a_refused_sync_leaves_no_store_directory(
    on_sandbox: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    root = tmp_path / "new" / "store"
    argv = ["sync", "stock.historical.candles", "--store", str(root), "--symbols", "2330"]
    code, err = _run(capsys, [*argv, "--start", "2031-01-01"])
    assert code == 2 and "InvalidParams" in err, err
    assert not (tmp_path / "new").exists()
    code, err = _run(capsys, [*argv, "--start", "2025-01-01", "--end", "2025-01-31"])
    assert code == 0 and (root / "_log").is_dir(), err


def test_an_unknown_symbol_is_one_line_and_no_rerun_is_suggested(
    on_sandbox: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    argv = ["sync", "stock.historical.candles", "--store", str(tmp_path / "s")]
    argv += ["--symbols", "9999", "2330", "--start", "2022-01-01", "--end", "2024-12-31"]
    code, err = _run(capsys, argv)
    failed = [line for line in err.splitlines() if "FAILED" in line and "9999" in line]
    assert code == 1 and len(failed) == 1, err  # three windows: one line
    assert "3 windows" in failed[0] and "does not know '9999'" in failed[0], err
    assert "rerun the same command" not in err and "will not mend" in failed[0], err


def test_the_demo_names_an_unknown_symbol_once_and_goes_on_without_it(
    on_sandbox: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    argv = ["demo", "--symbols", "9999", "--out", str(tmp_path / "demo"), "--no-progress"]
    code, err = _run(capsys, argv)
    assert code == 1 and err.count("SymbolNotFound") == 1, err
    assert len(err) < 400 and "rerun to retry" not in err, err
