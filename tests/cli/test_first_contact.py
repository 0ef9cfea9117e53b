"""The commands as a new user meets them with no key: partial downloads are written and the
failed symbol named in one line, an empty range says why, data on stdout stays clean, sync
has --progress, usage errors exit 2 and an interrupted sync says what it kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from marketframe._http.credential import ENV
from marketframe.cli import main


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*ENV.values(), "MARKETFRAME_BASE_URL", "MARKETFRAME_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MARKETFRAME_ACADEMY_URL", raising=False)


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def test_a_failed_symbol_is_named_and_the_others_written(
    no_key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.parquet"
    code, _, err = _run(capsys, ["download", "2330", "0050", "XXXX", "-o", str(out)])
    assert code == 1
    assert sorted(set(pq.read_table(out).column("symbol").to_pylist())) == ["0050", "2330"]
    failed = [line for line in err.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and "XXXX" in failed[0]
    assert ".frame" not in err and ".errors" not in err  # no Python attributes in a command


def test_a_range_before_the_history_says_where_it_starts(
    no_key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "y.csv"
    argv = ["download", "2330", "--start", "1990-01-01", "--end", "1995-01-01", "-o", str(out)]
    code, _, err = _run(capsys, argv)
    assert code == 0 and "wrote 0 rows" in err
    assert "starts on 2010-01-01" in err


def test_crosscheck_keeps_the_sandbox_notice_off_stdout(
    no_key: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, ["crosscheck", "2330", "--indicator", "sma"])
    assert code == 0
    assert "sandbox" not in out and "matches convention" in out
    assert "MARKETFRAME_API_KEY is not set" in err


def test_sync_has_progress_like_download(
    no_key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["sync", "stock.historical.candles", "--store", str(tmp_path / "s")]
    base += ["--symbols", "2330", "--start", "2025-01-01", "--end", "2025-03-31"]
    code, _, err = _run(capsys, [*base, "--progress"])
    assert code == 0 and "100%" in err  # the bar, forced on although stderr is not a terminal
    code, _, err = _run(capsys, [*base, "--no-progress"])
    assert code == 0 and "100%" not in err


def test_academy_login_without_a_url_is_a_usage_error(
    no_key: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, ["academy", "login"])
    assert code == 2 and "--url" in err


def test_load_over_a_year_points_at_download(
    no_key: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["load", "stock.historical.candles", "--symbol", "2330"]
    code, _, err = _run(capsys, [*argv, "--start", "2023-01-01", "--end", "2025-01-01"])
    assert code == 2 and "marketframe download" in err and "store" not in err


def test_an_interrupted_sync_says_what_was_saved_and_that_a_rerun_resumes(
    no_key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    from marketframe.cli import _store

    root = tmp_path / "s"
    base = ["sync", "stock.historical.candles", "--store", str(root), "--symbols", "2330"]
    assert _run(capsys, [*base, "--start", "2025-01-01", "--end", "2025-03-31"])[0] == 0

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(_store, "_sync", interrupted)
    code, _, err = _run(capsys, [*base, "--start", "2024-01-01", "--end", "2025-03-31"])
    assert code == 130
    assert len(err.splitlines()) == 1, err  # one line: interrupted, and what was kept
    assert err.startswith("marketframe sync: interrupted; every window fetched before it")
    assert "saved in" in err and "1 symbol(s)" in err and "2025-01-01" in err
    assert "rerun the same command" in err
