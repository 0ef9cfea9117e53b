"""The adjustment itself: argument checks, ratios and factors, the events of the two
corporate-actions tables, their application to candles, and their fetch through a client's
``prepare``/``send_all`` (see the package's docstring)."""

from __future__ import annotations

import datetime as dt
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from marketframe.convert import concat
from marketframe.exceptions import (
    ActionNotApplied,
    AdjustmentUnavailable,
    PlanError,
    SchemaError,
)

CAPITAL = "stock.corporate_actions.capital_changes"
DIVIDENDS = "stock.corporate_actions.dividends"
MODES = ("splits", "all")
ALLOWED = "None, 'splits' (capital changes) or 'all' (also cash and stock dividends)"
PRICE_COLUMNS = ("open", "high", "low", "close", "change")


@dataclass(frozen=True)
class Tolerance:
    """How far an adjusted price may be from the service's ``adjusted=true`` one:
    ``abs + rel * |price|``."""

    abs: float
    rel: float


#: ``adjust="all"`` against the service's ``adjusted=true`` prices: half a cent (the service
#: rounds adjusted prices to the cent; we do not round), plus float noise of the two products.
TOLERANCE = Tolerance(abs=0.005, rel=1e-9)


@dataclass(frozen=True)
class Event:
    """One corporate action as the adjustment sees it."""

    symbol: str
    day: dt.date  # the first day at the new prices (ex-date, effective date)
    price: float  # price ratio r: the day's reference over the previous close
    shares: float  # share-count ratio (1 for cash dividends): volume is divided by it


# --- ratios and factors ------------------------------------------------------------------------


def capital_ratio(
    factor: float | None, reference: float | None, last_close: float | None
) -> float | None:
    """Price ratio of a capital change: its ``adjustmentFactor`` (0.25 for a 1:4 split, 1.25
    for a 20% reduction), else ``referencePrice / lastClosePrice``; None if neither is known."""
    if factor is not None and np.isfinite(factor) and factor > 0:
        return float(factor)
    if reference and last_close and reference > 0 and last_close > 0:
        return float(reference) / float(last_close)
    return None


def _num(value: float | None) -> float:
    """A number column's value, 0 for null or NaN (no cash, no free shares)."""
    return 0.0 if value is None or not np.isfinite(value) else float(value)


def dividend_ratio(previous_close: float, cash: float | None, stock: float | None) -> float:
    """Price ratio of an ex-rights/ex-dividend day::

        r = (P - cash) / (P * (1 + stock / 1000))

    with ``P`` the previous close, ``cash`` the cash dividend per share and ``stock`` the free
    shares per 1000 shares."""
    return (previous_close - _num(cash)) / (previous_close * (1.0 + _num(stock) / 1000.0))


def factors(days: np.ndarray, events: Sequence[tuple[dt.date, float]]) -> np.ndarray:
    """``F(t)`` for every day of ``days`` (datetime64[D], any order): the product of the
    ratios of the events strictly after ``t``."""
    if not events:
        return np.ones(len(days))
    ordered = sorted(events)
    when = np.array([d for d, _ in ordered], dtype="datetime64[D]")
    ratios = np.array([r for _, r in ordered], dtype=np.float64)
    # suffix[k]: product of the ratios of events k.. (suffix[n] = 1)
    suffix = np.append(np.cumprod(ratios[::-1])[::-1], 1.0)
    return suffix[np.searchsorted(when, days.astype("datetime64[D]"), side="right")]


@dataclass(frozen=True)
class Action:
    """One corporate action of the two endpoints' tables as the adjustment reads it, before
    it is judged: ``price`` is its price ratio (NaN when it cannot be computed), ``problem``
    why it cannot be applied (None: it can)."""

    symbol: str
    day: dt.date
    kind: str  # "capital" or "dividend"
    price: float
    shares: float
    cash: float
    stock: float
    problem: str | None  # None, MISSING_CLOSE or OUT_OF_RANGE

    def event(self) -> Event:
        return Event(self.symbol, self.day, self.price, self.shares)


#: an action without the previous close its ratio needs (and, for a capital change, without
#: an adjustment factor either)
MISSING_CLOSE = "missing_previous_close"
#: a dividend whose ratio is not in (0, 1]
OUT_OF_RANGE = "factor_out_of_range"


def actions_of(
    capital: pa.Table,
    dividends: pa.Table | None,
    mode: str,
    today: dt.date,
    symbols: Iterable[str] | None = None,
) -> list[Action]:
    """Every action of ``mode`` up to ``today`` in the two endpoints' tables (``dividends``
    None for "splits"), each once: events after ``today`` and announced dividends (no
    previous close, no date passed yet, or nothing paid) have not happened and are left out;
    a row given twice counts once, while different actions of one symbol on one day (two
    capital changes, a cash and a stock dividend row) are all kept (docs/adjusted.md)."""
    wanted = None if symbols is None else set(symbols)
    # keyed by the whole action, not (symbol, day, kind): same-day actions are distinct
    found: dict[tuple[Any, ...], Action] = {}

    def keep(sym: str, day: dt.date | None) -> bool:
        return day is not None and day <= today and (wanted is None or sym in wanted)

    cols: tuple[str, ...] = (
        "symbol",
        "effective_date",
        "adjustment_factor",
        "raw_reference_price",
        "raw_last_close_price",
        "raw_previous_close",
    )
    for sym, day, factor, ref, last, prev in zip(*_columns(capital, cols), strict=True):
        if not keep(sym, day):
            continue
        ratio = capital_ratio(factor, ref, last if last is not None else prev)
        if ratio is None:
            key: tuple[Any, ...] = (sym, day, "capital", None, ref)
            found[key] = Action(sym, day, "capital", math.nan, math.nan, 0, 0, MISSING_CLOSE)
            continue
        found[(sym, day, "capital", ratio)] = Action(
            sym, day, "capital", ratio, ratio, 0.0, 0.0, None
        )
    if mode == "all" and dividends is not None:
        cols = ("symbol", "date", "previous_close", "cash_dividend", "stock_dividend_shares")
        for sym, day, prev, cash, stock in zip(*_columns(dividends, cols), strict=True):
            if not keep(sym, day):
                continue
            c, k = _num(cash), _num(stock)
            shares = 1.0 / (1.0 + k / 1000.0)
            if prev is None or not np.isfinite(prev):
                if c or k:  # past, with a dividend, but no price to use
                    found[(sym, day, "dividend", c, k, None)] = Action(
                        sym, day, "dividend", math.nan, shares, c, k, MISSING_CLOSE
                    )
                continue
            ratio = dividend_ratio(prev, cash, stock) if prev > 0 else float("nan")
            problem = None if 0 < ratio <= 1 else OUT_OF_RANGE
            found[(sym, day, "dividend", c, k, prev)] = Action(
                sym, day, "dividend", ratio, shares, c, k, problem
            )
    return list(found.values())


def events_of(
    capital: pa.Table,
    dividends: pa.Table | None,
    mode: str,
    today: dt.date,
    symbols: Iterable[str] | None = None,
) -> dict[str, list[Event]]:
    """The events of ``mode`` per symbol (:func:`actions_of`'s actions that can be applied).
    A capital change without a ratio, or a dividend whose ratio is outside 0..1, is a
    :class:`SchemaError`; a past dividend without the previous close its ratio needs cannot
    be applied: it is left out with an :class:`ActionNotApplied` warning naming it, never
    silently."""
    skipped: list[str] = []
    out: dict[str, list[Event]] = {}
    for a in actions_of(capital, dividends, mode, today, symbols):
        if a.problem == MISSING_CLOSE and a.kind == "capital":
            raise SchemaError(
                CAPITAL,
                "adjustment_factor",
                f"of {a.symbol} on {a.day} is missing and "
                "cannot be derived from the reference and last close prices",
            )
        if a.problem == MISSING_CLOSE:
            skipped.append(f"{a.symbol} {a.day} (cash {a.cash:g}, stock {a.stock:g})")
            continue
        if a.problem == OUT_OF_RANGE:
            raise SchemaError(
                DIVIDENDS,
                "previous_close",
                f"and dividend of {a.symbol} on {a.day} "
                f"give a price ratio of {a.price:.4g} (not in 0..1)",
            )
        out.setdefault(a.symbol, []).append(a.event())
    if skipped:
        warnings.warn(
            f"{len(skipped)} past dividend(s) not applied, the service gave no previous close "
            f"for them: {', '.join(skipped[:10])}{' ...' if len(skipped) > 10 else ''}; "
            "prices before them are not adjusted for them",
            ActionNotApplied,
            stacklevel=2,
        )
    return out


def _columns(table: pa.Table, names: Sequence[str]) -> list[list[Any]]:
    return [
        table.column(n).to_pylist() if n in table.column_names else [None] * table.num_rows
        for n in names
    ]


# --- application -------------------------------------------------------------------------------


def bar_days(table: pa.Table) -> np.ndarray:
    """The Asia/Taipei calendar day of each row's ``date`` (dates or minute timestamps)."""
    col = table.column("date")
    if pa.types.is_timestamp(col.type):
        local = pc.local_timestamp(col) if col.type.tz is not None else col
        return pc.cast(local, pa.date32()).to_numpy(zero_copy_only=False).astype("datetime64[D]")
    return col.to_numpy(zero_copy_only=False).astype("datetime64[D]")


def apply(table: pa.Table, events: Mapping[str, Sequence[Event]]) -> pa.Table:
    """``table`` (historical candles, any symbols, any order) with adjusted prices/volume."""
    if table.num_rows == 0:
        return table
    days = bar_days(table)
    # one chunk of a dictionary column is a DictionaryArray (the stubs say Array)
    coded = cast(
        "pa.DictionaryArray[Any, Any]",
        pc.dictionary_encode(table.column("symbol")).combine_chunks(),
    )
    codes = coded.indices.to_numpy(zero_copy_only=False)
    price = np.ones(table.num_rows)
    shares = np.ones(table.num_rows)
    # each symbol's rows from one stable sort (a mask a symbol scanned the whole table once
    # per symbol: a market's download grew with symbols x rows)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(coded.dictionary) + 1))
    for k, sym in enumerate(coded.dictionary.to_pylist()):
        evs = events.get(str(sym))
        if evs:
            rows = order[bounds[k] : bounds[k + 1]]
            price[rows] = factors(days[rows], [(e.day, e.price) for e in evs])
            shares[rows] = factors(days[rows], [(e.day, e.shares) for e in evs])
    for name in PRICE_COLUMNS:
        if name in table.column_names:
            col = table.column(name)
            table = table.set_column(
                table.schema.get_field_index(name),
                table.schema.field(name),
                pc.multiply(col.cast(pa.float64()), pa.array(price)),
            )
    if "volume" in table.column_names:
        col = table.column("volume")
        scaled = pc.round(pc.divide(col.cast(pa.float64()), pa.array(shares)))
        table = table.set_column(
            table.schema.get_field_index("volume"),
            table.schema.field("volume"),
            scaled.cast(col.type),
        )
    return table


# --- the whole adjustment, as table functions (the client fetches the actions) ---------------


def action_span(table: pa.Table, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days whose corporate actions can move ``table``'s prices: from the day after its
    first bar up to ``today`` (or its last bar's day if that is later); None if none can."""
    if table.num_rows == 0:
        return None
    days = bar_days(table)
    start = days.min().astype(dt.date) + dt.timedelta(days=1)
    end = max(today, days.max().astype(dt.date))
    return (start, end) if start <= end else None


def action_windows(start: dt.date, end: dt.date, mode: str) -> list[tuple[str, dt.date, dt.date]]:
    """The requests for the actions of ``mode`` from ``start`` to ``end``: one per endpoint
    and calendar year (a calendar year is under the service's one-year limit, and the same
    windows on every call let the client's HTTP cache answer again)."""
    names = (CAPITAL, DIVIDENDS) if mode == "all" else (CAPITAL,)
    return [
        (n, dt.date(y, 1, 1), dt.date(y, 12, 31))
        for n in names
        for y in range(start.year, end.year + 1)
    ]


def adjust_table(
    table: pa.Table,
    capital: pa.Table,
    dividends: pa.Table | None,
    mode: str,
    end: dt.date,
) -> pa.Table:
    """Historical candles ``table`` adjusted (``mode`` "splits" or "all") with the corporate
    actions in ``capital`` and ``dividends`` (the two endpoints' tables, ``dividends`` None
    for "splits") that happened up to ``end``."""
    if table.num_rows == 0:
        return table
    symbols = [str(s) for s in pc.unique(table.column("symbol")).to_pylist()]
    return apply(table, events_of(capital, dividends, mode, end, symbols))


# --- fetching the actions through a client's fan-out ----------------------------------------


def fetch_actions(
    prepare: Callable[..., Any],
    send_all: Callable[[Sequence[Any]], list[Any]],
    start: dt.date,
    end: dt.date,
    mode: str,
) -> tuple[pa.Table, pa.Table | None]:
    """The capital changes (and, for ``mode="all"``, the dividends) from ``start`` to
    ``end``, in one fan-out of under-one-year windows. A plan without corporate actions
    raises :class:`AdjustmentUnavailable` naming the alternatives."""
    capital, dividends, _ = actions_served(prepare, send_all, start, end, mode)
    return capital, dividends


def happened_by(end: dt.date, served: dt.date | None, last_bar: dt.date | None = None) -> dt.date:
    """The last day whose corporate actions have happened: ``end``, not after the service's
    day ``served`` (the answers' ``Date``: a dividend it still lists as announced has not
    happened, whatever this machine's clock says), yet never before ``last_bar``, a day
    with a bar (it happened, whatever that day). Without ``served``: ``end``."""
    if served is None:
        return end
    end = min(end, served)
    return end if last_bar is None else max(end, last_bar)


def actions_served(
    prepare: Callable[..., Any],
    send_all: Callable[[Sequence[Any]], list[Any]],
    start: dt.date,
    end: dt.date,
    mode: str,
) -> tuple[pa.Table, pa.Table | None, dt.date | None]:
    """:func:`fetch_actions` and the service's day as its latest answer gave it (``None``
    without a ``Date`` header)."""
    windows = action_windows(start, end, mode)
    jobs = [prepare(n, start_date=lo, end_date=hi) for n, lo, hi in windows]
    got: dict[str, list[pa.Table]] = {}
    served: list[dt.date] = []
    for (name, _, _), out in zip(windows, send_all(jobs), strict=True):
        if isinstance(out.error, PlanError):
            raise AdjustmentUnavailable(
                out.error.service_message, endpoint=out.error.endpoint, plan=out.error.plan
            ) from None
        if out.error is not None:
            raise out.error
        assert out.result is not None
        got.setdefault(name, []).append(out.result.table)
        served += [r.served for r in out.result.responses if r.served is not None]
    dividends = concat(got[DIVIDENDS]) if DIVIDENDS in got else None
    return concat(got[CAPITAL]), dividends, max(served, default=None)
