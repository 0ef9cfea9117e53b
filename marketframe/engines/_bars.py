"""Daily bars as the adapters take them: checked, in pandas, one row per symbol and session."""

from __future__ import annotations

from typing import Any

import pandas as pd

from marketframe._checks import check_frame
from marketframe.exceptions import InvalidParams

PRICES = ("open", "high", "low", "close", "volume")
NEED = ("symbol", "date", *PRICES)


def daily(where: str, bars: Any, param: str = "bars") -> pd.DataFrame:
    """``bars`` as pandas: ``symbol`` (str), ``date`` (naive, midnight) and float prices,
    sorted by symbol and date; refused when not daily or with a symbol's date twice."""
    f = check_frame(where, param, bars, NEED)
    if "timeframe" in f.columns and not f["timeframe"].isna().all():
        frames = set(f["timeframe"].dropna().astype(str))
        if frames != {"D"}:
            raise InvalidParams(where, param, f"has timeframe {sorted(frames)}", "daily bars (D)")
    out = pd.DataFrame(
        {
            "symbol": f["symbol"].astype(str).to_numpy(),
            "date": pd.to_datetime(f["date"]).dt.tz_localize(None).dt.normalize().to_numpy(),
            **{c: pd.to_numeric(f[c]).astype("float64").to_numpy() for c in PRICES},
        }
    )
    out = out.sort_values(["symbol", "date"], kind="stable").reset_index(drop=True)
    twice = out.duplicated(["symbol", "date"])
    if twice.any():
        row = out[twice].iloc[0]
        raise InvalidParams(
            where,
            param,
            f"has {row['symbol']} on {row['date'].date()} twice",
            "one row per symbol and date",
        )
    if out.empty:
        raise InvalidParams(where, param, "has no rows", "daily bars of at least one symbol")
    return out


def by_symbol(bars: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each symbol's bars indexed by date (its own sessions only)."""
    return {
        str(s): g.set_index("date")[list(PRICES)]
        for s, g in bars.groupby("symbol", sort=True, observed=True)
    }


def calendar(bars: pd.DataFrame) -> pd.DatetimeIndex:
    """The sessions of the bars: every date on which some symbol has a bar."""
    return pd.DatetimeIndex(sorted(bars["date"].unique()), name="date")
