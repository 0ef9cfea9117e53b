"""``marketframe.continuous``: the front contract rolled by expiry, volume or open interest,
back-adjusted by ratio or difference, against the sandbox's futures history over real sockets;
and ``front_months`` from the calendar alone."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import polars as pl
import pytest

import marketframe as mf
from marketframe import calendar
from marketframe.exceptions import InvalidParams, InvalidParamType
from marketframe.rolls import Continuous, front_months

SPAN = {"start": "2026-08-03", "end": "2026-11-20"}  # four rolls: Aug, Sep, Oct, Nov


@pytest.fixture
def no_request(sandbox):  # type: ignore[no-untyped-def]
    before = sandbox.requests_served
    yield
    assert sandbox.requests_served == before


def _contract(client, month: str, day: dt.date) -> pd.Series:  # type: ignore[no-untyped-def]
    """The contract's bar on ``day``, as the service gives it."""
    got = client.futopt.historical.candles(
        "TXF", from_=day, to=day, contractMonth=month, sort="asc"
    )
    assert len(got) == 1
    return got.iloc[0]


def _before(day: dt.date) -> dt.date:
    """The futures session before ``day``."""
    days = calendar.sessions_in_range(day - dt.timedelta(days=10), day, "futopt")
    return days[days < pd.Timestamp(day)][-1].date()


def test_the_expiry_roll_is_the_services_front_month(client):
    got = mf.continuous("TXF", adjust=None, **SPAN, client=client)
    want = client.futopt.historical.candles(
        "TXF", from_=SPAN["start"], to=SPAN["end"], contractMonth="1!", sort="asc"
    )
    assert got.frame.date.tolist() == want.date.tolist()
    assert got.frame.contract_month.tolist() == want.contract_month.tolist()
    for c in ("open", "high", "low", "close"):
        assert np.array_equal(got.frame[c].to_numpy(), want[c].to_numpy())
    # each roll is the session after the month's last trading day (calendar.expiry)
    assert len(got.rolls) == 4
    for row in got.rolls.itertuples():
        y, m = int(row.from_contract[:4]), int(row.from_contract[4:])
        assert _before(row.date.date()) == calendar.expiry(y, m).date()


@pytest.mark.parametrize("adjust", ["ratio", "difference"])
def test_the_gap_and_the_adjustment_at_the_seam_by_hand(client, adjust):
    got = mf.continuous("TXF", adjust=adjust, **SPAN, client=client)
    frame, rolls = got  # unpacks
    for k, row in enumerate(rolls.itertuples()):
        last = _before(row.date.date())  # the last session on the old contract
        old = _contract(client, row.from_contract, last).close
        new = _contract(client, row.to_contract, last).close
        assert row.gap == new - old and row.factor == pytest.approx(new / old, rel=1e-15)
        later = rolls.iloc[k:]
        at = frame[frame.date == pd.Timestamp(last)].iloc[0]
        assert at.contract_month == row.from_contract
        if adjust == "ratio":  # old contract's close times this and every later factor
            want = old * float(np.prod(later.factor))
        else:  # plus this and every later gap
            want = old + float(later.gap.sum())
        assert at.close == pytest.approx(want, rel=1e-12)
    # the last segment is the front contract as traded
    tail = frame[frame.date >= rolls.date.iloc[-1]]
    raw = client.futopt.historical.candles(
        "TXF",
        from_=tail.date.iloc[0],
        to=tail.date.iloc[-1],
        contractMonth=rolls.to_contract.iloc[-1],
        sort="asc",
    )
    for c in ("open", "high", "low", "close"):
        assert np.array_equal(tail[c].to_numpy(), raw[c].to_numpy())
    assert (tail.contract_month == rolls.to_contract.iloc[-1]).all()


def test_an_offset_rolls_that_many_sessions_before_the_last_day(client):
    got = mf.continuous("TXF", offset=2, **SPAN, client=client, backend="polars")
    assert isinstance(got.frame, pl.DataFrame) and got.rolls["date"].dtype == pl.Date
    for day, month in zip(got.rolls["date"], got.rolls["from_contract"], strict=True):
        last = calendar.expiry(int(month[:4]), int(month[4:])).date()
        days = calendar.sessions_in_range(last - dt.timedelta(days=20), last, "futopt")
        sessions = [d.date() for d in days]
        # held through the session two before its last day, the next month from the one after
        assert day == sessions[-2]
    plain = mf.continuous("TXF", **SPAN, client=client).rolls
    assert len(plain) == len(got.rolls)


@pytest.mark.parametrize("roll", ["volume", "open_interest"])
def test_volume_and_open_interest_rolls_follow_the_data(client, roll):
    got = mf.continuous("TXF", roll=roll, adjust=None, **SPAN, client=client)
    assert len(got.rolls) >= 4
    for row in got.rolls.itertuples():
        last = _before(row.date.date())
        y, m = int(row.from_contract[:4]), int(row.from_contract[4:])
        forced = last == calendar.expiry(y, m).date()
        if roll == "volume":
            a = _contract(client, row.from_contract, last).volume
            b = _contract(client, row.to_contract, last).volume
        else:
            day = client.futopt.historical.daily("TXF", date=last)
            oi = day[day.call_put.isna()].set_index("contract_month").open_interest
            a, b = oi[row.from_contract], oi[row.to_contract]
        assert forced or b > a, row
    if roll == "open_interest":
        assert got.frame.open_interest.notna().all()
        one = got.frame.iloc[-1]
        day = client.futopt.historical.daily("TXF", date=one.date.date())
        oi = day[day.call_put.isna()].set_index("contract_month").open_interest
        assert one.open_interest == oi[one.contract_month]


def test_mtx_is_the_services_mxf_and_txo_has_front_months(client):
    a = mf.continuous("MTX", **SPAN, client=client)
    b = mf.continuous("MXF", **SPAN, client=client)
    assert isinstance(a, Continuous)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    fronts = front_months("TXO", SPAN["start"], SPAN["end"])
    txf = mf.continuous("TXF", adjust=None, **SPAN, client=client).frame
    assert fronts.contract_month.tolist() == txf.contract_month.tolist()
    assert fronts.date.tolist() == txf.date.tolist()


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"product": "TXO"}, InvalidParams, ["TXO is options", "front_months"]),
        ({"product": "ABC"}, InvalidParams, ["'TXF'", "'MTX'"]),
        ({"roll": "oi"}, InvalidParams, ["'expiry'", "'volume'", "'open_interest'"]),
        ({"adjust": "back"}, InvalidParams, ["'ratio'", "'difference'", "None"]),
        ({"offset": -1}, InvalidParams, ["0..15"]),
        ({"offset": 1.5}, InvalidParamType, ["an int"]),
        ({"offset": 2, "roll": "volume"}, InvalidParams, ["roll='expiry' only"]),
        ({"start": "2026-12-01"}, InvalidParams, ["after end"]),
        ({"start": "2014-06-01"}, InvalidParams, ["2015-01-01"]),
        ({"end": "someday"}, InvalidParams, ["not a date"]),
        ({"backend": "numpy"}, InvalidParams, ["backend"]),
    ],
)
def test_bad_arguments_raise_before_any_request(client, no_request, kwargs, error, words):
    args = {"product": "TXF", **SPAN, **kwargs}
    with pytest.raises(error) as err:
        mf.continuous(args.pop("product"), **args, client=client)
    for w in words:
        assert w in str(err.value)


def test_the_front_month_trades_and_holds_the_most_on_every_session(client):
    """Volume and open interest follow a month's rank, not the calendar: right after an
    expiry the next month is the front and trades most (the sandbox ranked months by the
    calendar, so the month after the front often traded more in the weeks after expiry and
    the volume roll jumped a month early)."""
    by_volume = mf.continuous("TXF", roll="volume", adjust=None, **SPAN, client=client)
    by_expiry = mf.continuous("TXF", roll="expiry", adjust=None, **SPAN, client=client)
    assert by_volume.frame.contract_month.tolist() == by_expiry.frame.contract_month.tolist()
    for day in ("2026-09-17", "2026-09-18", "2026-10-22"):  # the sessions after expiries
        got = client.futopt.historical.daily("TXF", date=day)
        outright = got.call_put.isna() & ~got.contract_month.str.contains("/")
        futures = got[outright].sort_values("contract_month")  # no spreads, no options
        assert futures.volume.iloc[0] == futures.volume.max(), day
        assert futures.open_interest.iloc[0] == futures.open_interest.max(), day
