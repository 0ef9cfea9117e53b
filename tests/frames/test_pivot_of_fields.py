"""A pivot of close and volume (float64 beside Int64: pandas makes every column object) is
understood: one field of it computes as a panel; the whole pivot, whose columns mean different
things, gets a message naming the fix rather than a panel of every column, volume included."""

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


def test_the_whole_pivot_is_refused_naming_the_fix(long: pd.DataFrame) -> None:
    """Computed as a panel, every column (volume included) was replaced by its SMA under its
    own label: refused, as for kdj, with the field to take."""
    both = long.pivot(index="date", columns="symbol", values=["close", "volume"])
    for call in (lambda f: f.md.sma(5), lambda f: f.md.rsi(), lambda f: f.md.macd()):
        with pytest.raises(MissingColumnsError, match=r"pivot of several fields.*df\['close'\]"):
            call(both)
    by_symbol = both.swaplevel(axis=1)  # download's group_by="ticker"
    with pytest.raises(MissingColumnsError, match=r"df\.xs\('close', axis=1, level=1\)"):
        by_symbol.md.ema(5)


def test_a_pivot_with_text_beside_names_the_fix(long: pd.DataFrame) -> None:
    mixed = long.assign(note="x").pivot(index="date", columns="symbol", values=["close", "note"])
    with pytest.raises(MissingColumnsError, match=r"pivot of several fields.*df\['close'\]"):
        mixed.md.sma(5)
