"""A sandbox store through vectorbt: the Data holds the store's bars, and a buy-and-hold over
a universe with a delisted stock shows the delisting (its prices end, its value stops)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from marketframe.engines import to_vectorbt

from .conftest import DELISTED, LAST_SESSION

vbt = pytest.importorskip("vectorbt")  # .ci/run installs it (the engines extra)


def test_the_data_holds_the_stores_bars(adjusted) -> None:
    data = to_vectorbt(adjusted)
    assert isinstance(data, vbt.Data)
    assert sorted(data.symbols) == sorted(set(adjusted["symbol"]))
    close = data.get("Close")
    for symbol, bars in adjusted.groupby("symbol"):
        got = close[symbol].dropna()
        assert list(got.index.tz_localize(None)) == list(bars["date"])
        assert np.array_equal(got.to_numpy(), bars["close"].to_numpy())
    volume = data.get("Volume")
    assert volume["2330"].sum() == adjusted.loc[adjusted["symbol"] == "2330", "volume"].sum()


@pytest.mark.slow  # vectorbt compiles its portfolio kernels (numba) on first use
def test_a_buy_and_hold_shows_the_delisting(adjusted) -> None:
    close = to_vectorbt(adjusted).get("Close")
    days = close.index.tz_localize(None)
    after = days > LAST_SESSION
    assert after.any() and close.loc[after, DELISTED].isna().all()
    assert close.loc[~after, DELISTED].notna().iloc[-1]
    pf = vbt.Portfolio.from_holding(close, init_cash=1_000_000)
    value = pf.value()[DELISTED]
    last = value[days <= LAST_SESSION].iloc[-1]
    # held through the delisting: the value stops at the last close, it does not vanish
    assert (value[after] == last).all() and last > 0
    assert pf.total_return()[DELISTED] == pytest.approx(last / 1_000_000 - 1)
    # a stock that lists mid-history is bought at its first bar, not before
    assert pd.isna(close["6901"].iloc[0]) and pf.value()["6901"].iloc[0] == 1_000_000
