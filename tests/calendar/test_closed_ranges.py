"""A download or a loader over days the market was closed says so, instead of a bare empty
frame."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import marketframe
from marketframe import Client
from marketframe.cli import main
from marketframe.exceptions import NoSession


def test_a_holiday_range_warns_and_names_the_sessions_around_it(client: Client[Any]) -> None:
    with pytest.warns(NoSession) as got:
        df = marketframe.download("2330", "2026-02-14", "2026-02-22", client=client)
    assert len(df) == 0
    assert len(got) == 1  # said once, where the user called
    assert got[0].filename == __file__
    text = str(got[0].message)
    assert "no trading session from 2026-02-14 to 2026-02-22" in text
    assert "2026-02-11" in text and "2026-02-23" in text  # the sessions either side (TWSE)


def test_a_range_with_a_session_does_not_warn(client: Client[Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoSession)
        df = marketframe.download("2330", "2026-02-14", "2026-02-23", client=client)
    assert df["date"].dt.strftime("%Y-%m-%d").tolist() == ["2026-02-23"]


@pytest.mark.parametrize("symbols", ["2330", ["2330", "2317"]])
def test_a_loader_over_a_holiday_says_it_at_the_callers_line(
    client: Client[Any], symbols: str | list[str]
) -> None:
    with pytest.warns(NoSession) as got:
        df = client.stock.historical.candles(symbols=symbols, start="2026-02-14", end="2026-02-22")
    assert len(df) == 0
    assert len(got) == 1
    assert got[0].filename == __file__  # the user's line, not the package's
    text = str(got[0].message)
    assert text.startswith("stock.historical.candles: no trading session from 2026-02-14")
    assert "2026-02-11" in text and "2026-02-23" in text


def test_a_loader_with_rows_or_without_sessions_to_speak_of_does_not_warn(
    client: Client[Any],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoSession)
        df = client.stock.historical.candles(symbol="2330", start="2026-02-14", end="2026-02-23")
        assert len(df) == 1
        # corporate actions are not sessions: an empty week of them is not the market shut
        client.stock.corporate_actions.dividends(start="2026-02-14", end="2026-02-22")


def test_the_cli_says_it_in_one_line(
    sandbox: Any,
    api_key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sandbox.base_url)
    out = tmp_path / "x.parquet"
    argv = ["download", "2330", "--start", "2026-01-01", "--end", "2026-01-01", "-o", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "warning" in ln]
    assert lines == [
        "marketframe download: warning: download: no trading session 2026-01-01 (the market "
        "was closed: weekend, holiday or closure, marketframe.calendar); the frame is empty; "
        "the session before is 2025-12-31, the next 2026-01-02"
    ]
    assert "Traceback" not in err and ".py:" not in err
    assert "history starts" not in err  # that hint is for ranges before 2010 (or 2015)
