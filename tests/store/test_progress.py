"""The progress bar of a long sync: its ETA is never below what the plan's rate limit allows."""

from __future__ import annotations

from pathlib import Path

import pytest

from marketframe._progress import honest_eta
from marketframe.client import Client
from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import NOW


def test_the_eta_of_a_burst_is_bounded_by_the_plan() -> None:
    # 100 windows in 1 s (the window's budget went out at once): the observed pace says
    # 10 s for the remaining 1,000, the plan (20 requests a second) says 50 s
    assert honest_eta(1000, 100, 1.0, 20, 1.0, 0) == pytest.approx(50.0)
    # the budget still left in this window goes out at once
    assert honest_eta(1000, 100, 1.0, 20, 1.0, 100) == pytest.approx(45.0)
    # slower than the plan (latency, few workers): the observed pace wins
    assert honest_eta(1000, 100, 100.0, 20, 1.0, 0) == pytest.approx(1000.0)
    # no headers seen yet: the observed pace; nothing done yet: unknown
    assert honest_eta(1000, 100, 1.0, None, None, None) == pytest.approx(10.0)
    assert honest_eta(1000, 0, 0.0, None, None, None) is None


def test_a_rate_limited_sync_shows_the_plan_and_its_eta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Sandbox(seed=11, now=NOW, rate_limit=20, rate_window=1.0) as sb:
        with (
            Client(
                sb.api_key, base_url=sb.base_url, backend="arrow", cache=False, max_workers=4
            ) as client,
            Store(tmp_path / "s", client) as st,
        ):
            report = st.sync(
                "stock.historical.candles",
                ["2330", "0050"],
                "2016-01-01",
                "2026-11-19",
                progress=True,
            )
    assert report.ok and report.windows_fetched == 22
    err = capsys.readouterr().err
    assert "plan: 20 requests / 1 s" in err
    assert "ETA 0:00:0" in err  # 22 windows at 20 a second: seconds, never "?" at the end


def test_an_unlimited_plan_is_not_named_and_the_bar_has_no_empty_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an unlimited sandbox (rate_limit=None: a billion requests a minute in its headers) is no
    # limit worth naming, and the bar written to a file (not a terminal) shows "[00:00, ETA ?]"
    with Client.sandbox(seed=11, now=NOW, backend="arrow", rate_limit=None) as client:
        with Store(tmp_path / "s", client) as st:
            st.sync("stock.historical.candles", ["2330"], "2020-01-01", "2026-11-19", progress=True)
    err = capsys.readouterr().err
    assert "plan:" not in err
    assert ", ]" not in err and ", , " not in err
    assert "ETA" in err


@pytest.mark.parametrize(
    ("span", "shown"),
    [(0.3, "1 s"), (0.98, "1 s"), (1.003, "1 s"), (59.2, "60 s"), (60.004, "60 s")],
)
def test_the_plans_window_is_shown_rounded_up(span: float, shown: str) -> None:
    """The window the pacer saw is a lower bound of the plan's (answers late in their window
    show less of it): a loaded machine's 0.3 s of a 1 s window is "1 s", not "0 s"."""
    from marketframe._progress import plan_text

    assert plan_text(20, span) == f"20 requests / {shown}"
