"""A sandbox store through zipline-reloaded: the bundle ingests the store's bars and corporate
actions on marketframe's calendar, zipline's adjusted closes are the store's ``adjust="all"``
ones, and a buy-and-hold of a delisted stock is closed after its last session.
zipline-reloaded pins another pandas than the test extra's, so it runs in an environment of
its own: ``MARKETFRAME_ZIPLINE_PYTHON`` names its interpreter, which .ci/run makes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from marketframe import calendar
from marketframe.adjust import factor_table
from marketframe.engines import register_zipline
from marketframe.exceptions import ExtraNotInstalled

from .conftest import DELISTED, END, LAST_SESSION, START, SYMBOLS

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = ("stock.corporate_actions.capital_changes", "stock.corporate_actions.dividends")

RUN = """
import json, os, sys
import pandas as pd
from marketframe.engines import ZIPLINE_CALENDAR, register_zipline

d = sys.argv[1]
if sys.argv[4] == "factors":  # a factor table, as of the bundle's day
    adjusted_by = {"factors": pd.read_parquet(f"{d}/factors.parquet")}
else:  # the store's corporate actions
    adjusted_by = {
        "capital_changes": pd.read_parquet(f"{d}/capital.parquet"),
        "dividends": pd.read_parquet(f"{d}/dividends.parquet"),
    }
register_zipline("marketframe-test", pd.read_parquet(f"{d}/raw.parquet"), **adjusted_by)
from zipline import run_algorithm
from zipline.api import order, record, symbol
from zipline.data import bundles
from zipline.utils.calendar_utils import get_calendar

bundles.ingest("marketframe-test", environ=os.environ, show_progress=False)
cal = get_calendar(ZIPLINE_CALENDAR)
sessions = [str(s.date()) for s in cal.sessions_in_range(sys.argv[2], sys.argv[3])]


def initialize(ctx):
    ctx.bought = False


def handle_data(ctx, data):
    if not ctx.bought:
        for s in ("2330", "1907"):
            order(symbol(s), 1000)
        ctx.bought = True
    if ctx.get_datetime().date() == pd.Timestamp(sys.argv[3]).date():
        closes = data.history(symbol("2330"), "close", 200, "1d")
        ctx.closes = [float(x) for x in closes]
        ctx.days = [str(x.date()) for x in closes.index]


ctx_out = {}
perf = run_algorithm(
    start=pd.Timestamp("2025-01-02"),
    end=pd.Timestamp(sys.argv[3]),
    initialize=initialize,
    handle_data=handle_data,
    capital_base=1e8,
    bundle="marketframe-test",
    trading_calendar=cal,
    data_frequency="daily",
    analyze=lambda ctx, perf: ctx_out.update(closes=ctx.closes, days=ctx.days),
)
held = {str(d.date()): sorted(p["sid"].symbol for p in ps) for d, ps in perf["positions"].items()}
print(json.dumps({"sessions": sessions, "held": held, **ctx_out}))
"""


@pytest.mark.slow  # a process that ingests a bundle and runs zipline
@pytest.mark.parametrize("adjusted_by", ["factors", "actions"])
def test_zipline_runs_the_store_and_closes_the_delisted_position(
    store, raw, adjusted, tmp_path, adjusted_by
):
    python = os.environ.get("MARKETFRAME_ZIPLINE_PYTHON")
    if not python:
        pytest.skip("zipline's environment: MARKETFRAME_ZIPLINE_PYTHON (.ci/run makes one)")
    for endpoint in ACTIONS:
        store.sync(endpoint, None, START, END, today="2026-11-20", progress=False)
    raw.to_parquet(tmp_path / "raw.parquet")
    store.read(ACTIONS[0]).to_parquet(tmp_path / "capital.parquet")
    store.read(ACTIONS[1]).to_parquet(tmp_path / "dividends.parquet")
    factor_table(SYMBOLS, as_of=END, client=store.client).to_parquet(tmp_path / "factors.parquet")
    first, last = str(raw["date"].min().date()), str(raw["date"].max().date())
    env = {**os.environ, "ZIPLINE_ROOT": str(tmp_path / "zipline"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [python, "-c", RUN, str(tmp_path), first, last, adjusted_by],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # the bundle's calendar is marketframe's
    want = [str(d.date()) for d in calendar.sessions_in_range(first, last)]
    assert got["sessions"] == want
    # held through the last session, closed by zipline after it: the delisting
    assert got["held"][f"{LAST_SESSION:%Y-%m-%d}"] == [DELISTED, "2330"]
    assert all(DELISTED not in h for d, h in got["held"].items() if d > f"{LAST_SESSION:%Y-%m-%d}")
    # zipline's adjusted closes move as the store's adjust="all" ones
    adj = adjusted[adjusted["symbol"] == "2330"].set_index("date")["close"]
    ours = adj.loc[got["days"]].to_numpy()
    theirs = np.array(got["closes"])
    # (zipline keeps prices in thousandths and rounds what it adjusts)
    assert np.allclose(theirs / theirs[-1], ours / ours[-1], rtol=1e-5)
    traded = raw[raw["symbol"] == "2330"].set_index("date")["close"].loc[got["days"]].to_numpy()
    assert not np.allclose(theirs / theirs[-1], traded / traded[-1], rtol=1e-5)  # not raw


def test_a_factor_table_and_the_actions_together_are_refused(raw) -> None:
    from marketframe.exceptions import InvalidParams

    with pytest.raises(InvalidParams, match="factors"):
        register_zipline("marketframe-test", raw, factors=raw, capital_changes=raw)
    with pytest.raises(InvalidParams, match="dividends"):  # not silently ignored
        register_zipline("marketframe-test", raw, factors=raw, dividends=raw)


def test_a_factor_tables_rows_are_left_out_as_the_adjustment_leaves_them_out() -> None:
    """A bundle from a factor table adjusts as ``adjust="all"`` does: an action dated off a
    session is applied (the flag is information), one without a previous close or with a
    ratio out of range is not."""
    import pandas as pd

    from marketframe.engines._zipline import events_of_factors

    table = pd.DataFrame(
        {
            "symbol": ["2330"] * 3,
            "date": pd.to_datetime(["2025-06-14", "2025-07-01", "2025-08-01"]).date,
            "ratio": [1.0, 1.0, 1.0],
            "factor": [0.98, float("nan"), 1.2],
            "missing_previous_close": [False, True, False],
            "factor_out_of_range": [False, False, True],
            "non_session": [True, False, False],
        }
    )
    events = events_of_factors(table, {"2330"})
    assert [str(e.day) for e in events["2330"]] == ["2025-06-14"]


def test_without_zipline_the_call_names_its_extra(raw) -> None:
    if importlib.util.find_spec("zipline") is not None:
        pytest.skip("zipline-reloaded is installed in this environment")
    with pytest.raises(ExtraNotInstalled, match=r"marketframe\[zipline\]"):
        register_zipline("marketframe-test", raw)
