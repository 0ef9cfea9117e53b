"""The adjustment factors of ``marketframe.adjust`` against a plain-Python reference.

No network: the factor arithmetic and its application to a candles table, on random events,
days, symbols and row orders (hypothesis).
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe.adjust import Event, apply, capital_ratio, dividend_ratio, factors

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DAY0 = dt.date(2010, 1, 4)
days_st = st.integers(0, 6000).map(lambda n: DAY0 + dt.timedelta(days=n))
ratio_st = st.floats(0.05, 4.0, allow_nan=False, allow_infinity=False)


def reference_factor(day: dt.date, events: list[tuple[dt.date, float]]) -> float:
    """F(day): the product of the ratios of the events strictly after ``day``."""
    out = 1.0
    for when, ratio in events:
        if when > day:
            out *= ratio
    return out


@FAST
@given(
    days=st.lists(days_st, max_size=40), events=st.lists(st.tuples(days_st, ratio_st), max_size=12)
)
def test_factors_equal_the_plain_python_product_of_later_ratios(days, events):
    got = factors(np.array(days, dtype="datetime64[D]"), events)
    want = [reference_factor(d, events) for d in days]
    assert len(got) == len(days)
    for g, w in zip(got, want, strict=True):
        assert math.isclose(g, w, rel_tol=1e-12), (g, w)


@FAST
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["0050", "2330", "8069"]),
            days_st,
            st.floats(1, 2000),
            st.integers(0, 10**9),
        ),
        min_size=1,
        max_size=40,
    ),
    events=st.lists(
        st.tuples(st.sampled_from(["0050", "2330", "9999"]), days_st, ratio_st, ratio_st),
        max_size=10,
    ),
)
def test_apply_scales_each_row_by_its_own_symbols_later_events(rows, events):
    table = pa.table(
        {
            "symbol": [r[0] for r in rows],
            "date": pa.array([r[1] for r in rows], pa.date32()),
            "close": [r[2] for r in rows],
            "volume": pa.array([r[3] for r in rows], pa.int64()),
        }
    )
    evs: dict[str, list[Event]] = {}
    for sym, day, price, shares in events:
        evs.setdefault(sym, []).append(Event(sym, day, price, shares))
    out = apply(table, evs)
    for (sym, day, close, volume), got_c, got_v in zip(
        rows, out.column("close").to_pylist(), out.column("volume").to_pylist(), strict=True
    ):
        mine = evs.get(sym, [])
        price = reference_factor(day, [(e.day, e.price) for e in mine])
        shares = reference_factor(day, [(e.day, e.shares) for e in mine])
        assert math.isclose(got_c, close * price, rel_tol=1e-12)
        assert abs(got_v - volume / shares) <= 0.5 + 1e-6 * volume / shares
    assert out.schema == table.schema  # same columns and types (volume stays an integer)


@given(prev=st.floats(1, 5000), cash_share=st.floats(0, 0.5), stock=st.floats(0, 500))
def test_dividend_ratio_is_the_ex_dividend_reference_over_the_previous_close(
    prev, cash_share, stock
):
    cash = prev * cash_share
    reference = (prev - cash) / (1 + stock / 1000)  # the exchange's ex-rights reference price
    assert math.isclose(dividend_ratio(prev, cash, stock), reference / prev, rel_tol=1e-12)


def test_capital_ratio_prefers_the_adjustment_factor_then_the_reference_prices():
    assert capital_ratio(0.25, 13.21, 52.85) == 0.25  # 0050's 1:4 split
    assert capital_ratio(None, 37.5, 30.0) == 1.25  # a 20% capital reduction
    assert capital_ratio(float("nan"), 20.0, 50.0) == 0.4
    assert capital_ratio(None, None, 50.0) is None


def test_minute_bars_take_the_factor_of_their_asia_taipei_day():
    import datetime as _dt

    taipei = _dt.timezone(_dt.timedelta(hours=8))
    # 2025-06-18 07:30 in Taipei is still 2025-06-17 in UTC: the split day, not the day before
    times = [
        _dt.datetime(2025, 6, 17, 13, 25, tzinfo=taipei),
        _dt.datetime(2025, 6, 18, 7, 30, tzinfo=taipei),
    ]
    table = pa.table(
        {
            "symbol": ["0050", "0050"],
            "date": pa.array(times, pa.timestamp("us", tz="Asia/Taipei")),
            "close": [53.0, 13.3],
        }
    )
    out = apply(table, {"0050": [Event("0050", dt.date(2025, 6, 18), 0.25, 0.25)]})
    assert out.column("close").to_pylist() == [53.0 * 0.25, 13.3]


def _actions(capital: list[dict], dividends: list[dict]) -> tuple[pa.Table, pa.Table]:
    from marketframe.endpoints import get

    def table(name: str, rows: list[dict]) -> pa.Table:
        schema = get(name).schema.arrow()
        return pa.table({f.name: pa.array([r.get(f.name) for r in rows], f.type) for f in schema})

    return (
        table("stock.corporate_actions.capital_changes", capital),
        table("stock.corporate_actions.dividends", dividends),
    )


def test_events_count_a_repeated_row_once_and_skip_announced_and_future_ones():
    import pytest

    from marketframe.adjust import ActionNotApplied, events_of

    split = {"symbol": "0050", "effective_date": dt.date(2025, 6, 18), "adjustment_factor": 0.25}
    paid = {
        "symbol": "0050",
        "date": dt.date(2025, 7, 17),
        "previous_close": 13.75,
        "cash_dividend": 0.48,
        "stock_dividend_shares": None,
    }
    announced = {
        "symbol": "0050",
        "date": dt.date(2026, 7, 17),
        "previous_close": None,
        "cash_dividend": 0.5,
    }
    later = {**split, "effective_date": dt.date(2027, 1, 4)}
    capital, dividends = _actions([split, split, later], [paid, paid, announced])
    # a past dividend without its previous close cannot be applied: said, not silent
    with pytest.warns(ActionNotApplied, match=r"0050 2026-07-17 \(cash 0.5"):
        got = events_of(capital, dividends, "all", dt.date(2026, 11, 20))["0050"]
    assert sorted((e.day, e.price, e.shares) for e in got) == [
        (dt.date(2025, 6, 18), 0.25, 0.25),
        (dt.date(2025, 7, 17), (13.75 - 0.48) / 13.75, 1.0),
    ]
    assert [
        e.day for e in events_of(capital, dividends, "splits", dt.date(2026, 11, 20))["0050"]
    ] == [dt.date(2025, 6, 18)]


def test_an_impossible_dividend_is_a_schema_error_not_a_number():
    import pytest

    from marketframe.adjust import events_of
    from marketframe.exceptions import SchemaError

    bad = {
        "symbol": "2330",
        "date": dt.date(2025, 3, 17),
        "previous_close": 10.0,
        "cash_dividend": 12.0,
    }
    capital, dividends = _actions([], [bad])
    with pytest.raises(SchemaError, match="price ratio"):
        events_of(capital, dividends, "all", dt.date(2026, 1, 1))


def test_actions_of_one_symbol_on_one_day_all_count():
    import pytest

    from marketframe.adjust import apply, dividend_ratio, events_of

    day = dt.date(2025, 6, 18)
    reduction = {"symbol": "2330", "effective_date": day, "adjustment_factor": 1.25}
    split = {"symbol": "2330", "effective_date": day, "adjustment_factor": 0.25}
    cash = {"symbol": "2330", "date": dt.date(2025, 7, 17), "previous_close": 40.0}
    cash_row = {**cash, "cash_dividend": 2.0, "stock_dividend_shares": None}
    stock_row = {**cash, "cash_dividend": None, "stock_dividend_shares": 100.0}
    capital, dividends = _actions([reduction, split], [cash_row, stock_row])
    got = events_of(capital, dividends, "all", dt.date(2026, 11, 20))["2330"]
    assert sorted(e.price for e in got if e.day == day) == [0.25, 1.25]
    on_ex = [e for e in got if e.day == dt.date(2025, 7, 17)]
    assert len(on_ex) == 2
    # the two rows of one ex-date give the ratio of one row holding both
    product = on_ex[0].price * on_ex[1].price
    assert product == pytest.approx(dividend_ratio(40.0, 2.0, 100.0))
    assert apply  # the factors multiply every event's ratio (order-free)
