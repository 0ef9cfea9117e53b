"""`Store.read` of what was never synced: a typed error naming `sync`, never a silent empty
frame; a range synced in part: what is held, and a warning naming the missing dates."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest

import marketframe
from marketframe.store import NotSynced, PartlySynced, Store

EP = "stock.historical.candles"


@pytest.fixture
def store(make_store: Callable[..., Store]) -> Store:
    st = make_store()
    st.sync(EP, ["2330", "6669"], "2017-01-01", "2017-12-31", progress=False)
    return st


def test_a_dataset_never_synced_raises_not_synced_naming_sync(store: Store) -> None:
    with pytest.raises(NotSynced) as info:
        store.read(EP, "2330", "2017-01-01", "2017-12-31", timeframe="W")
    text = str(info.value)
    assert "store.sync('stock.historical.candles', '2330', start='2017-01-01'" in text
    assert "timeframe='W'" in text
    assert info.value.missing == [
        (
            "2330",
            *(marketframe.endpoints.to_date("x", "d", d) for d in ("2017-01-01", "2017-12-31")),
        )
    ]
    with pytest.raises(NotSynced):
        store.read("stock.technical.sma", "2330", period=20)


def test_a_symbol_never_synced_raises_even_beside_synced_ones(store: Store) -> None:
    with pytest.raises(NotSynced, match=r"0050.*store\.sync\(.*'0050'"):
        store.read(EP, ["2330", "0050"])
    assert isinstance(NotSynced("d", [], "x"), marketframe.MarketframeError)
    assert marketframe.NotSynced is NotSynced


def test_a_range_outside_every_synced_one_raises(store: Store) -> None:
    with pytest.raises(NotSynced, match="2020-01-01..2020-06-30"):
        store.read(EP, "2330", "2020-01-01", "2020-06-30")


def test_a_range_synced_in_part_returns_the_held_rows_and_warns(store: Store) -> None:
    with pytest.warns(PartlySynced, match=r"2330 2018-01-01\.\.2018-03-31") as record:
        df = store.read(EP, "2330", "2017-12-01", "2018-03-31")
    assert len(df) and df.date.max().year == 2017
    assert record[0].filename == __file__  # shown at the caller of Store.read


def test_a_synced_range_without_rows_is_an_empty_frame(store: Store) -> None:
    # 6669 listed in 2018: its 2017 was synced and recorded as holding no rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = store.read(EP, "6669", "2017-01-01", "2017-12-31")
        assert len(df) == 0 and "close" in df.columns
        assert len(store.read(EP, ["2330", "6669"], "2017-03-01", "2017-03-31")) > 15
        assert len(store.read(EP, ["2330"])) > 200  # no range: everything held
