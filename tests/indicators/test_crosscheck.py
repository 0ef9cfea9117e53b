"""The cross-check names the sandbox's technical conventions and agrees within 1e-9 under them."""

from __future__ import annotations

import matplotlib

matplotlib.use("agg")

import pytest  # noqa: E402

import marketframe  # noqa: E402
from marketframe import InvalidParams  # noqa: E402
from marketframe.cli import main  # noqa: E402
from marketframe.crosscheck import NotCheckable  # noqa: E402
from marketframe.exceptions import MarketframeError  # noqa: E402

# The sandbox's documented conventions (docs/sandbox.md), found by the cross-check, not told.
SANDBOX = {
    "sma": "talib",
    "rsi": "talib",
    "kdj": "kdj=recursive50",
    "macd": "ema_seed=first",
    "bb": "bb_ddof=1",
}


@pytest.mark.parametrize("indicator", list(SANDBOX))
@pytest.mark.parametrize(
    "symbol,timeframe,start",
    [("2330", "D", "2026-01-05"), ("0050", "W", "2025-12-01"), ("6488", "D", "2025-06-02")],
)
def test_names_the_sandbox_convention(client, indicator, symbol, timeframe, start) -> None:
    end = "2026-11-20" if start.startswith("2026") or timeframe == "W" else "2026-05-29"
    report = marketframe.crosscheck(client, symbol, indicator, start, end, timeframe)
    assert report.convention == SANDBOX[indicator], report.summary()
    best = report.best
    assert best.alignment == "range" and best.missing == 0 and best.compared > 10
    assert best.max_rel <= 1e-9
    assert (
        report.frame[[c for c in report.frame if c.startswith("diff_")]].abs().max().max()
        <= 1e-9 * report.scale
    )
    if indicator != "sma":  # SMA has no free convention; the others must tell variants apart
        others = [r for r in report.results if not r.matches]
        assert others, "some other convention must disagree, or the check proves nothing"


def test_a_mismatch_reports_where_it_diverges(client) -> None:
    report = marketframe.crosscheck(client, "2330", "macd", "2026-01-05", "2026-11-20")
    talib = next(r for r in report.results if r.convention == "talib" and r.alignment == "range")
    assert not talib.matches and talib.first_divergence is not None
    assert talib.max_rel > 1e-6
    assert "talib" in report.table()["convention"].tolist()


def test_parameters_are_passed_to_the_service(client) -> None:
    report = marketframe.crosscheck(client, "2454", "sma", "2026-03-02", "2026-11-20", period=5)
    assert report.params == {"period": 5} and report.convention == "talib"
    assert report.best.compared == len(report.frame)


def test_bad_input_fails_before_any_request(client, sandbox) -> None:
    before = sandbox.requests_served
    with pytest.raises(InvalidParams, match="sma, rsi, kdj, macd, bb"):
        marketframe.crosscheck(client, "2330", "vwap")
    with pytest.raises(InvalidParams, match="period"):
        marketframe.crosscheck(client, "2330", "sma", window=5)
    with pytest.raises(
        InvalidParams,
        match=r"crosscheck: .*end <= 2020-12-31, or start >= "
        r"2025-01-02",
    ):
        marketframe.crosscheck(client, "2330", "sma", "2020-01-01", "2026-01-01")
    with pytest.raises(InvalidParams, match="is after end"):
        marketframe.crosscheck(client, "2330", "sma", "2026-02-01", "2026-01-01")
    assert sandbox.requests_served == before


def test_the_chart(client, tmp_path) -> None:
    report = marketframe.crosscheck(client, "2330", "kdj", "2026-01-05", "2026-11-20")
    fig = report.plot()
    assert len(fig.axes) == 2
    fig.savefig(tmp_path / "kdj.png")
    assert (tmp_path / "kdj.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_prints_all_five(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("MARKETFRAME_API_KEY", raising=False)
    code = main(
        [
            "crosscheck",
            "2330",
            "--start",
            "2026-01-05",
            "--end",
            "2026-11-20",
            "--chart",
            str(tmp_path / "cc.png"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    for name, conv in SANDBOX.items():
        assert f"{name.upper()}(" in out and f"'{conv}'" in out
    assert len(list(tmp_path.glob("cc-*.png"))) == 5


@pytest.fixture
def on_sandbox(sandbox, api_key, monkeypatch):
    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sandbox.base_url)
    return sandbox


def test_cli_reports_an_indicator_without_values_as_not_checkable_and_goes_on(
    on_sandbox, capsys
) -> None:
    # 26 weekly bars: too few for MACD(12,26,9), enough for the other four
    code = main(
        ["crosscheck", "2454", "--timeframe", "W", "--start", "2026-05-25", "--end", "2026-11-20"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = [
        line
        for line in captured.out.splitlines()
        if line[:3] in ("SMA", "RSI", "KDJ", "MAC", "BB(", "BB ")
    ]
    assert len(lines) == 5, captured.out
    macd = next(line for line in lines if line.startswith("MACD"))
    assert "not checkable" in macd and "widen the range" in macd
    assert sum("matches convention" in line for line in lines) == 4


def test_the_demo_suggestion_checks_all_five_weekly(on_sandbox, capsys) -> None:
    code = main(["crosscheck", "2454", "--timeframe", "W", "--end", "2026-11-20"])
    out = capsys.readouterr().out
    assert code == 0 and out.count("matches convention") == 5, out


def test_not_checkable_is_a_typed_error(client) -> None:
    with pytest.raises(NotCheckable, match="no macd values") as caught:
        marketframe.crosscheck(client, "2454", "macd", "2026-05-25", "2026-11-20", "W")
    assert isinstance(caught.value, MarketframeError) and "widen the range" in caught.value.hint


def test_the_default_weekly_range_after_a_leap_day_is_one_the_service_accepts(client) -> None:
    # the longest range ending 2025-02-28 starts 2024-03-01: 2024-02-29 + one year is
    # 2025-02-28, a range of a full year that the service (and the cross-check) refuses
    from marketframe.crosscheck import default_start

    assert (
        default_start(marketframe.endpoints.to_date("t", "end", "2025-02-28"), "W").isoformat()
        == "2024-03-01"
    )
    report = marketframe.crosscheck(client, "0050", "sma", end="2025-02-28", timeframe="W")
    assert report.convention == SANDBOX["sma"], report.summary()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1, 0, "0.01", True])
def test_the_tolerance_is_a_finite_positive_number(client, sandbox, bad) -> None:
    before = sandbox.requests_served
    with pytest.raises(InvalidParams, match="tolerance"):
        marketframe.crosscheck(client, "2330", "macd", tolerance=bad)
    assert sandbox.requests_served == before


@pytest.mark.parametrize("bad", ["nan", "-1", "inf", "0", "x"])
def test_cli_refuses_a_tolerance_that_would_give_a_wrong_verdict(on_sandbox, capsys, bad) -> None:
    assert main(["crosscheck", "2330", "--only", "macd", f"--tolerance={bad}"]) == 2
    captured = capsys.readouterr()
    assert "--tolerance" in captured.err and "finite number > 0" in captured.err
    assert "<= nan" not in captured.out
