"""Flows as of publication: every ownership row joins a bar only from the session it was
available on, and what a bar gets is what a sandbox whose clock stands at that bar's close
had published."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from marketframe import flows
from marketframe.exceptions import InvalidParams

SYMBOLS = ["2330", "2317"]


@pytest.fixture(scope="module")
def prices(client: Any) -> pd.DataFrame:
    return client.stock.historical.candles(symbol=SYMBOLS, from_="2026-06-01", to="2026-11-20")


@pytest.fixture(scope="module")
def own(client: Any) -> dict[str, pd.DataFrame]:
    ownership = client.stock.ownership
    get = {
        "institutional_trades": SYMBOLS,
        "tdcc_distribution": SYMBOLS,
        "director_holdings": SYMBOLS,
        "etf_holdings": ["0050", "0056"],
    }
    return {
        name: getattr(ownership, name)(symbol=s, from_="2026-03-01", to="2026-11-20")
        for name, s in get.items()
    }


@pytest.mark.parametrize("name", sorted(flows.DATASETS))
def test_no_row_joins_a_bar_before_it_was_available(prices, own, name) -> None:
    pre = flows.DATASETS[name].prefix
    j = flows.join(prices, own[name], name)
    assert len(j) == len(prices) and (j["date"].values == prices["date"].values).all()
    got = j[j[pre + "date"].notna()]
    assert len(got) > len(j) // 2
    assert (got[pre + "available"] <= got["date"]).all()
    assert (got[pre + "date"] < got["date"]).all()  # published after its own day's close
    # and the row is the latest one available: no later-available row was skipped
    s = flows.summary(own[name], name)
    for _, bar in got.sample(20, random_state=1).iterrows():
        usable = s[(s["symbol"] == bar["symbol"]) & (s["available"] <= bar["date"])]
        assert bar[pre + "date"] == usable["date"].max()


@pytest.mark.parametrize(
    ("name", "day", "lag"),
    [
        ("institutional_trades", "2026-11-18", 0),
        ("tdcc_distribution", "2026-11-16", 0),  # a Monday: the Friday's distribution
        # the 15th, a session: the sandbox has published August's since midnight, the service
        # gives no hour, so the join waits for the next session and still uses July's
        ("director_holdings", "2026-09-15", 1),
        ("director_holdings", "2026-09-16", 0),  # the session after: August's
    ],
)
def test_a_bar_gets_what_the_service_had_published_at_its_close(
    make_sandbox, prices, own, name, day, lag
) -> None:
    pre = flows.DATASETS[name].prefix
    j = flows.join(prices, own[name], name)
    bar = j[(j["symbol"] == "2330") & (j["date"] == pd.Timestamp(day))].iloc[0]
    with make_sandbox(now=f"{day}T13:30:00+08:00") as (_, c):
        seen = getattr(c.stock.ownership, name)(symbol="2330", from_="2026-03-01", to=day)
    published = sorted(set(seen["date"]))
    assert bar[pre + "date"] == published[-1 - lag]


def test_director_holdings_wait_for_the_15th_of_the_next_month() -> None:
    got = flows.available("director_holdings", pd.to_datetime(["2026-08-01", "2026-01-01"]))
    # August's: the 15th of September is a Tuesday, so the Wednesday; January's: the 15th
    # of February 2026 is a Sunday in the Lunar New Year closure, so the next session after
    assert str(got[0]) == "2026-09-16"
    assert got[1] > pd.Timestamp("2026-02-15").to_datetime64().astype("datetime64[D]")


def test_etf_holdings_are_keyed_by_the_stock_held(own) -> None:
    s = flows.summary(own["etf_holdings"], "etf_holdings")
    assert "2330" in set(s["symbol"]) and "0050" not in set(s["symbol"])
    day = s["date"].max()
    both = own["etf_holdings"]
    both = both[(both["date"] == day) & (both["component_symbol"] == "2330")]
    row = s[(s["symbol"] == "2330") & (s["date"] == day)].iloc[0]
    assert row["quantity"] == both["quantity"].sum() and row["etfs"] == len(both)


def test_polars_frames_join_as_pandas_frames_do(prices, own) -> None:
    pl = pytest.importorskip("polars")
    name = "director_holdings"
    got = flows.join(pl.from_pandas(prices), pl.from_pandas(own[name]), name)
    assert isinstance(got, pl.DataFrame)
    want = flows.join(prices, own[name], name)
    assert got["dir_date"].to_list() == [
        None if pd.isna(v) else v.to_pydatetime() for v in want["dir_date"]
    ]
    assert got["dir_held_shares"].to_list() == [
        None if pd.isna(v) else int(v) for v in want["dir_held_shares"]
    ]


def test_bad_input_is_refused_naming_what_is_allowed(prices, own) -> None:
    with pytest.raises(InvalidParams, match="institutional_trades"):
        flows.join(prices, own["institutional_trades"], "margin_balances")
    with pytest.raises(InvalidParams, match="'range'"):
        flows.join(prices, own["institutional_trades"], "tdcc_distribution")
    with pytest.raises(InvalidParams, match="non-empty"):
        flows.join(prices, own["institutional_trades"], "institutional_trades", prefix="")
    with pytest.raises(InvalidParams, match="pandas or polars"):
        flows.join(prices.to_dict(), own["institutional_trades"], "institutional_trades")


def test_the_research_modules_are_attributes_of_the_package() -> None:
    """``import marketframe as mf; mf.flows.join(...)`` as the docs' other modules work."""
    import marketframe as mf
    from marketframe import adjust, engines

    assert mf.flows.join is flows.join
    assert mf.engines.to_vectorbt is engines.to_vectorbt
    assert mf.adjust.factor_table is adjust.factor_table
