"""A pivot of close and volume (float64 beside Int64: pandas makes every column object) is
understood: one field of it, or the whole pivot, computes as a panel; a pivot that cannot be
one gets a message naming the fix rather than "needs column 'close'" alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import marketframe  # noqa: F401 - registers the md accessor
from marketframe.frames import MissingColumnsError


@pytest.fixture
def long() -> pd.DataFrame:
    dates = pd.date_range("2025-01-01", periods=40, freq="B")
    rows = []
    for sym, level in (("2330", 1000.0), ("0050", 18.0)):
        close = level + np.arange(40.0)
        rows.append(
            pd.DataFrame(
                {
                    "symbol": sym,
                    "date": dates,
                    "close": close,
                    "volume": pd.array(np.arange(40) * 1000, dtype="Int64"),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def test_one_field_of_the_pivot_is_a_panel(long: pd.DataFrame) -> None:
    both = long.pivot(index="date", columns="symbol", values=["close", "volume"])
    assert (both.dtypes == "object").all()  # what pandas does with mixed dtypes
    got = both["close"].md.sma(5)
    want = long.pivot(index="date", columns="symbol", values="close").md.sma(5)
    pd.testing.assert_frame_equal(got, want, check_names=False)
    assert (got.dtypes == "float64").all()


def test_the_whole_pivot_is_a_panel_of_every_field_and_symbol(long: pd.DataFrame) -> None:
    both = long.pivot(index="date", columns="symbol", values=["close", "volume"])
    got = both.md.sma(5)
    assert list(got.columns) == list(both.columns) and (got.dtypes == "float64").all()
    want = long.pivot(index="date", columns="symbol", values="close").md.sma(5)
    np.testing.assert_allclose(got[("close", "2330")], want["2330"], equal_nan=True)


def test_a_pivot_with_text_beside_names_the_fix(long: pd.DataFrame) -> None:
    mixed = long.assign(note="x").pivot(index="date", columns="symbol", values=["close", "note"])
    with pytest.raises(MissingColumnsError, match=r"pivot of several fields.*df\['close'\]"):
        mixed.md.sma(5)
