"""Flows as of publication: the ownership datasets joined to daily prices by when they were
published, never before (docs/research.md).

The service sends each row with its data date only (``date``: the trading day of the
institutional trades, the disclosure day of an ETF's holdings, the week's last trading day of
the TDCC distribution, the month of the director holdings) and no publication time. A row is
therefore joined from its *available* session, a conservative rule per dataset:

- institutional trades, ETF holdings, TDCC distribution: published after the close of their
  date at the earliest (the exchanges and TDCC release them in the evening; the sandbox at
  15:00 Asia/Taipei, after the 13:30 close), so first used on the **next session** after
  ``date``;
- director holdings of month M: reported by the 15th of month M+1 (the exchanges' rule for
  insiders' holdings; the sandbox publishes on the 15th), at an hour the service does not
  give, so first used on the **first session after the 15th** of M+1.

A price bar of session D gets, per symbol, the latest row whose available session is on or
before D. A row is never joined to a bar before its available session.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from marketframe._checks import check_frame, is_polars
from marketframe.exceptions import InvalidParams

__all__ = ["DATASETS", "Publication", "available", "join", "summary"]

WHERE = "flows.join"


@dataclass(frozen=True)
class Publication:
    """How one ownership dataset is published and summarised per symbol and date."""

    endpoint: str
    prefix: str  # the joined columns' prefix
    rule: str  # "next_session" or "after_15th_next_month"
    doc: str  # the rule in words (docs/research.md)


DATASETS: dict[str, Publication] = {
    "institutional_trades": Publication(
        "stock.ownership.institutional_trades",
        "inst_",
        "next_session",
        "the session after its date (published after that day's close)",
    ),
    "etf_holdings": Publication(
        "stock.ownership.etf_holdings",
        "etf_",
        "next_session",
        "the session after its disclosure date (published after that day's close)",
    ),
    "tdcc_distribution": Publication(
        "stock.ownership.tdcc_distribution",
        "tdcc_",
        "next_session",
        "the session after its data date (the week's last trading day)",
    ),
    "director_holdings": Publication(
        "stock.ownership.director_holdings",
        "dir_",
        "after_15th_next_month",
        "the first session after the 15th of the next month (reported by the 15th)",
    ),
}
#: the TDCC bracket of holders of more than 1,000 lots (the usual "large holders")
LARGE_BRACKET = "1,000,001以上"


def _dataset(dataset: str) -> tuple[str, Publication]:
    name = dataset.removeprefix("stock.ownership.") if isinstance(dataset, str) else dataset
    if name not in DATASETS:
        raise InvalidParams(
            WHERE,
            "dataset",
            f"is {dataset!r}, not an ownership dataset",
            ", ".join(sorted(DATASETS)),
        )
    return name, DATASETS[name]


def _pandas(frame: Any, param: str, need: Sequence[str]) -> pd.DataFrame:
    out: pd.DataFrame = check_frame(WHERE, param, frame, tuple(need))
    return out


def _days(values: Any) -> np.ndarray:
    return np.asarray(pd.to_datetime(values).values.astype("datetime64[D]"))


def _sessions_after(days: np.ndarray) -> np.ndarray:
    """For each day, the first stock session strictly after it (``datetime64[D]``)."""
    from marketframe import calendar  # exchange_calendars: loaded on first use

    if len(days) == 0:
        return days
    lo = days.min().astype(dt.date)
    hi = days.max().astype(dt.date) + dt.timedelta(days=40)
    labels = calendar.sessions_in_range(lo, hi).values.astype("datetime64[D]")
    idx = np.searchsorted(labels, days, side="right")
    out: np.ndarray = np.where(  # past the calendar's coverage: never available
        idx < len(labels), labels[np.minimum(idx, len(labels) - 1)], np.datetime64("NaT")
    )
    return out.astype("datetime64[D]")


def available(dataset: str, dates: Any) -> np.ndarray:
    """The first session (``datetime64[D]``) on which rows of ``dataset`` with these data
    ``dates`` may be used: the rule of :data:`DATASETS`."""
    _, pub = _dataset(dataset)
    days = _days(dates)
    if pub.rule == "after_15th_next_month":
        months = days.astype("datetime64[M]") + 1
        days = months.astype("datetime64[D]") + 14  # the 15th of the next month
    return _sessions_after(days)


def _institutional(f: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in f.columns if c.endswith(("_buy", "_sell", "_net")) or c == "total"]
    return f[["symbol", "date", *cols]]


def _etf(f: pd.DataFrame) -> pd.DataFrame:
    """Per constituent and date: the shares all the ETFs hold and how many ETFs hold it."""
    g = f.groupby(["component_symbol", "date"], observed=True, sort=True)
    out = g.agg(quantity=("quantity", "sum"), etfs=("symbol", "nunique")).reset_index()
    return out.rename(columns={"component_symbol": "symbol"})


def _tdcc(f: pd.DataFrame) -> pd.DataFrame:
    """Per symbol and date: holders, and the large holders' count and percent of shares."""
    large = f["range"] == LARGE_BRACKET
    f = f.assign(
        large_holders=f["holders"].where(large, 0),
        large_proportion=f["proportion"].where(large, 0.0),
    )
    g = f.groupby(["symbol", "date"], observed=True, sort=True)
    return g.agg(
        holders=("holders", "sum"),
        large_holders=("large_holders", "sum"),
        large_proportion=("large_proportion", "sum"),
    ).reset_index()


def _directors(f: pd.DataFrame) -> pd.DataFrame:
    """Per symbol and month: the board's held and pledged shares and its pledge ratio."""
    g = f.groupby(["symbol", "date"], observed=True, sort=True)
    out = g.agg(
        held_shares=("held_shares", "sum"),
        pledged_shares=("pledged_shares", "sum"),
        related_held_shares=("related_held_shares", "sum"),
    ).reset_index()
    held = out["held_shares"].astype("float64")
    out["pledge_ratio"] = (100 * out["pledged_shares"].astype("float64") / held).where(held > 0)
    return out


_SUMMARY: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "institutional_trades": _institutional,
    "etf_holdings": _etf,
    "tdcc_distribution": _tdcc,
    "director_holdings": _directors,
}
_NEEDS: dict[str, tuple[str, ...]] = {
    "institutional_trades": ("symbol", "date"),
    "etf_holdings": ("symbol", "date", "component_symbol", "quantity"),
    "tdcc_distribution": ("symbol", "date", "range", "holders", "proportion"),
    "director_holdings": ("symbol", "date", "held_shares", "pledged_shares", "related_held_shares"),
}


def summary(flows: Any, dataset: str) -> Any:
    """One row per symbol and data date of an ownership frame, with the column
    ``available`` (the first session the row may be used). ETF holdings are keyed by the
    constituent (``symbol``: the stock held). Same backend as ``flows``."""
    name, _ = _dataset(dataset)
    f = _pandas(flows, "flows", _NEEDS[name])
    out = _SUMMARY[name](f).reset_index(drop=True)
    out["symbol"] = out["symbol"].astype(str)
    out["date"] = pd.to_datetime(out["date"]).astype("datetime64[us]")
    out["available"] = available(name, out["date"]).astype("datetime64[us]")
    return _back(out, flows)


def _back(out: pd.DataFrame, like: Any) -> Any:
    if is_polars(like):
        import polars as pl

        return pl.from_pandas(out)
    return out


def join(prices: Any, flows: Any, dataset: str, *, prefix: str | None = None) -> Any:
    """``prices`` (daily bars: ``symbol``, ``date``) with the columns of :func:`summary`
    of ``flows`` as they were known on each bar's session: per symbol, the latest row whose
    ``available`` session is on or before the bar's date. The joined columns are named
    ``prefix`` + column (the dataset's prefix by default, e.g. ``inst_foreign_net``), with
    ``<prefix>date`` (the row's data date) and ``<prefix>available``; nulls before a
    symbol's first available row. Rows and their order are the prices'. Same backend as
    ``prices``."""
    name, pub = _dataset(dataset)
    p = _pandas(prices, "prices", ("symbol", "date"))
    s = summary(_pandas(flows, "flows", _NEEDS[name]), name)
    pre = pub.prefix if prefix is None else prefix
    if not isinstance(pre, str) or not pre:
        raise InvalidParams(WHERE, "prefix", f"is {pre!r}", "a non-empty text, or None")
    s = s.rename(columns={c: pre + c for c in s.columns if c != "symbol"})
    left = p.assign(
        _order=np.arange(len(p)),
        _symbol=p["symbol"].astype(str),
        _day=pd.to_datetime(p["date"]).astype("datetime64[us]"),
    )
    # a symbol's rows of the same available session: the latest data date wins
    right = s.rename(columns={"symbol": "_symbol"}).sort_values([pre + "available", pre + "date"])
    merged = pd.merge_asof(
        left.sort_values("_day"),
        right,
        left_on="_day",
        right_on=pre + "available",
        by="_symbol",
        direction="backward",
    )
    out = merged.sort_values("_order").drop(columns=["_order", "_symbol", "_day"])
    return _back(out.reset_index(drop=True), prices)
