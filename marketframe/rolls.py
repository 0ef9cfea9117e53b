"""Continuous futures: the front contract of each session, rolled by expiry, volume or open
interest, back-adjusted by ratio or difference, with the table of its rolls (docs/futures.md).

A contract is the front month through its last trading day (:func:`marketframe.calendar.expiry`:
the third Wednesday, moved past closures), or ``offset`` sessions before it; the next month is
held from the session after. ``roll="volume"`` (``"open_interest"``) holds the next month from
the session after the first one on which it traded more (held more open interest) than the
held one, and at the latest from the session after the held one's last day. The daily bars come
from ``futopt.historical.candles`` (one request per contract month), open interest from
``futopt.historical.daily`` (one request per session), both in one fan-out.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from marketframe import calendar
from marketframe._time import taipei_today
from marketframe.client import given_or_connected
from marketframe.convert import check_backend, concat, to_frame
from marketframe.endpoints import in_order, to_date
from marketframe.exceptions import InvalidParams, InvalidParamType

#: the futures whose continuous series is built (``MTX``, TAIFEX's name of the mini-TAIEX, is
#: the service's ``MXF``); ``TXO`` has front months (:func:`front_months`) but no one price
FUTURES = {"TXF": "TXF", "MXF": "MXF", "MTX": "MXF"}
PRODUCTS = {**FUTURES, "TXO": "TXO"}
ROLLS = ("expiry", "volume", "open_interest")
ADJUSTS = ("ratio", "difference", None)
CANDLES = "futopt.historical.candles"
DAILY = "futopt.historical.daily"
PRICES = ("open", "high", "low", "close")
#: how many sessions before its last day a contract may be left at most (``offset``)
MAX_OFFSET = 15
#: how far back a contract's bars are fetched before the previous month's last day (days)
LEAD = 45


@dataclass(frozen=True)
class Continuous:
    """A continuous series: ``frame`` (one row per session: ``date``, ``contract_month``, the
    held contract's ``open``/``high``/``low``/``close`` back-adjusted, ``volume``, and
    ``open_interest`` when rolled by it) and ``rolls`` (one row per roll: ``date``, the first
    session on the new contract, ``from_contract``, ``to_contract``, ``gap`` and ``factor``,
    the new contract's close over (minus) the old one's on the session before)."""

    frame: Any
    rolls: Any

    def __iter__(self) -> Any:  # frame, rolls = continuous(...)
        return iter((self.frame, self.rolls))


def _product(where: str, product: Any, allowed: dict[str, str]) -> str:
    if not isinstance(product, str) or product.upper() not in allowed:
        hint = ", ".join(map(repr, allowed))
        if product == "TXO":
            hint += " (TXO is options: one series needs a strike; front_months('TXO', ...))"
        raise InvalidParams(where, "product", f"has value {product!r}", hint)
    return allowed[product.upper()]


def _offset(where: str, offset: Any) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise InvalidParamType(where, "offset", f"is {offset!r}", f"an int 0..{MAX_OFFSET}")
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidParams(where, "offset", f"is {offset}", f"0..{MAX_OFFSET} sessions")
    return offset


def _span(where: str, start: Any, end: Any) -> tuple[dt.date, dt.date]:
    hi = taipei_today() if end is None else to_date(where, "end", end)
    lo = hi - dt.timedelta(days=365) if start is None else to_date(where, "start", start)
    in_order(where, lo, hi)
    if lo < dt.date(2015, 1, 1):
        raise InvalidParams(
            where, "start", f"({lo}) is before the futures history", "2015-01-01 or later"
        )
    return lo, hi


def _month(y: int, m: int, k: int = 1) -> tuple[int, int]:
    n = y * 12 + m - 1 + k
    return n // 12, n % 12 + 1


def _last_days(first: tuple[int, int], n: int, offset: int) -> list[tuple[str, dt.date]]:
    """``n`` contract months from ``first`` and the last session each is the front month."""
    out = []
    y, m = first
    for _ in range(n):
        last = calendar.expiry(y, m).date()
        if offset:
            days = calendar.sessions_in_range(last - dt.timedelta(days=40), last, "futopt")
            last = days[-1 - offset].date()
        out.append((f"{y}{m:02d}", last))
        y, m = _month(y, m)
    return out


def _months(lo: dt.date, hi: dt.date, offset: int, extra: int) -> list[tuple[str, dt.date]]:
    """The contract months that are the front month on some day of ``lo``..``hi`` by expiry,
    plus ``extra`` after them, with their last days as the front month."""
    y, m = _month(lo.year, lo.month, -1)
    cands = _last_days((y, m), (hi.year - y) * 12 + hi.month - m + 3 + extra, offset)
    first = next(i for i, (_, last) in enumerate(cands) if last >= lo)
    last = next(i for i, (_, day) in enumerate(cands) if day >= hi)
    return cands[first : last + 1 + extra]


def front_months(
    product: str,
    start: Any = None,
    end: Any = None,
    *,
    offset: int = 0,
    backend: str = "pandas",
) -> Any:
    """The front contract month of ``product`` (``TXF``, ``MXF``/``MTX``, ``TXO``) on every
    futures session from ``start`` to ``end``: ``date`` and ``contract_month`` (``YYYYMM``),
    rolled ``offset`` sessions before each last trading day. No request: the calendar's."""
    where = "front_months"
    check_backend(where, backend)
    _product(where, product, PRODUCTS)
    k = _offset(where, offset)
    lo, hi = _span(where, start, end)
    days = [d.date() for d in calendar.sessions_in_range(lo, hi, "futopt")]
    months = _months(lo, hi, k, 0)
    held, i = [], 0
    for d in days:
        while months[i][1] < d:
            i += 1
        held.append(months[i][0])
    table = pa.table({"date": pa.array(days, pa.date32()), "contract_month": held})
    return to_frame(table, backend)


def continuous(
    product: str,
    roll: str = "expiry",
    adjust: str | None = "ratio",
    offset: int = 0,
    start: Any = None,
    end: Any = None,
    *,
    client: Any = None,
    backend: str = "pandas",
) -> Continuous:
    """The continuous daily series of futures ``product`` (``TXF``, ``MXF`` or ``MTX``) from
    ``start`` to ``end`` (default: the year to today), as a :class:`Continuous` (``.frame``,
    ``.rolls``; ``frame, rolls = continuous(...)`` unpacks it).

    ``roll``: ``"expiry"`` (the front month, ``offset`` sessions before its last trading day;
    ``offset=0`` is the service's ``1!``), ``"volume"`` or ``"open_interest"`` (the next month
    from the session after the first one on which it traded more, or held more open interest,
    and at the latest after the held one's last day; ``offset`` must be 0). ``adjust``:
    ``"ratio"`` (prices before each roll times the roll's factor, compounded), ``"difference"``
    (plus the roll's gap, summed) or None (the contracts' prices as traded); the last segment
    is always as traded. ``client``: the client to use, else the commands' rule (a key from
    the environment, or an embedded sandbox). ``backend``: pandas, polars or arrow.
    Bad arguments raise :class:`InvalidParams` before any request.
    """
    where = "continuous"
    check_backend(where, backend)
    code = _product(where, product, FUTURES)
    if not isinstance(roll, str) or roll not in ROLLS:
        raise InvalidParams(where, "roll", f"has value {roll!r}", ", ".join(map(repr, ROLLS)))
    if adjust not in ADJUSTS:
        raise InvalidParams(where, "adjust", f"has value {adjust!r}", "'ratio', 'difference', None")
    k = _offset(where, offset)
    if k and roll != "expiry":
        raise InvalidParams(
            where, "offset", f"is {k} with roll={roll!r}", "offset with roll='expiry' only"
        )
    lo, hi = _span(where, start, end)
    months = _months(lo, hi, k, 0 if roll == "expiry" else 1)
    with given_or_connected(client) as session:
        bars = _bars(session, code, months, lo, hi)
        oi = _open_interest(session, code, lo, hi) if roll == "open_interest" else None
    frame, rolls = _series(bars, months, roll, oi, lo, hi)
    frame = _adjusted(frame, rolls, adjust)
    return Continuous(to_frame(frame, backend), to_frame(rolls, backend))


def _bars(
    session: Any, code: str, months: list[tuple[str, dt.date]], lo: dt.date, hi: dt.date
) -> dict[str, pd.DataFrame]:
    """Each month's daily bars (indexed by date) from before the previous month's last day."""
    jobs, names = [], []
    for i, (month, last) in enumerate(months):
        begin = (months[i - 1][1] if i else lo) - dt.timedelta(days=LEAD)
        a, b = max(begin, lo - dt.timedelta(days=LEAD)), min(last, hi)
        if a > b:
            continue
        jobs.append(
            session.prepare(CANDLES, product=code, contractMonth=month, from_=a, to=b, sort="asc")
        )
        names.append(month)
    out: dict[str, pd.DataFrame] = {}
    for month, got in zip(names, session.send_all(jobs), strict=True):
        if got.error is not None:
            raise got.error
        t = got.result.table.select(["date", *PRICES, "volume"])
        df = t.to_pandas()
        df["date"] = pd.to_datetime(df["date"]).dt.date
        out[month] = df.set_index("date")
    return out


def _open_interest(session: Any, code: str, lo: dt.date, hi: dt.date) -> Any:
    """Open interest by (date, contract month): one daily request per session."""
    days = [d.date() for d in calendar.sessions_in_range(lo, hi, "futopt")]
    jobs = [session.prepare(DAILY, product=code, date=d) for d in days]
    tables = []
    for got in session.send_all(jobs):
        if got.error is not None:
            raise got.error
        tables.append(
            got.result.table.select(["date", "contract_month", "call_put", "open_interest"])
        )
    df = concat(tables).to_pandas()
    df = df[df.call_put.isna() & ~df.contract_month.str.contains("/")]
    df["date"] = pd.to_datetime(df["date"]).dt.date
    return df.set_index(["date", "contract_month"]).open_interest


def _series(
    bars: dict[str, pd.DataFrame],
    months: list[tuple[str, dt.date]],
    roll: str,
    oi: Any,
    lo: dt.date,
    hi: dt.date,
) -> tuple[pa.Table, pa.Table]:
    """The held contract's bar on each session and the rolls (raw prices)."""
    order = [m for m, _ in months]
    last = dict(months)
    days = sorted({d for df in bars.values() for d in df.index if lo <= d <= hi})
    held = order[0]
    while last[held] < (days[0] if days else lo):
        held = order[order.index(held) + 1]
    rows: list[dict[str, Any]] = []
    rolls: list[dict[str, Any]] = []
    prev: dt.date | None = None
    for i, d in enumerate(days):
        if prev is not None and last[held] < d:  # past its last day: the next month
            held = _roll(bars, order, held, d, prev, rolls)
        bar = bars.get(held)
        if bar is not None and d in bar.index:
            r = bar.loc[d]
            rows.append(
                {"date": d, "contract_month": held, **{c: r[c] for c in (*PRICES, "volume")}}
            )
            if oi is not None:
                rows[-1]["open_interest"] = oi.get((d, held))
        nxt = order[order.index(held) + 1] if order.index(held) + 1 < len(order) else None
        if roll != "expiry" and nxt is not None and nxt in bars and d in bars[nxt].index:
            now_, then_ = _measure(bars, oi, roll, held, d), _measure(bars, oi, roll, nxt, d)
            if then_ > now_ and d < hi and i + 1 < len(days):  # from the next session
                held = _roll(bars, order, held, days[i + 1], d, rolls)
        prev = d
    return _frame(rows, oi is not None), _roll_table(rolls)


def _measure(bars: dict[str, Any], oi: Any, roll: str, month: str, d: dt.date) -> float:
    if roll == "volume":
        return float(bars[month].loc[d, "volume"])
    value = None if oi is None else oi.get((d, month))
    return -1.0 if value is None or pd.isna(value) else float(value)


def _roll(
    bars: dict[str, pd.DataFrame],
    order: list[str],
    held: str,
    d: dt.date,
    prev: dt.date,
    rolls: list[dict[str, Any]],
) -> str:
    """Roll from ``held`` to the next month from session ``d`` (the last on ``held``:
    ``prev``); the gap and factor from the two closes of ``prev``."""
    to = order[order.index(held) + 1]
    old = _close_at(bars.get(held), prev)
    new = _close_at(bars.get(to), prev)
    gap = new - old if old is not None and new is not None else float("nan")
    factor = new / old if old and new is not None else float("nan")
    rolls.append(
        {"date": d, "from_contract": held, "to_contract": to, "gap": gap, "factor": factor}
    )
    return to


def _close_at(df: pd.DataFrame | None, d: dt.date) -> float | None:
    """The contract's close on ``d``, else its last close before it."""
    if df is None:
        return None
    got = df[df.index <= d]
    return None if got.empty else float(got.close.iloc[-1])


def _frame(rows: list[dict[str, Any]], with_oi: bool) -> pa.Table:
    types: dict[str, pa.DataType] = {"date": pa.date32(), "contract_month": pa.string()}
    types.update(dict.fromkeys(PRICES, pa.float64()))
    types["volume"] = pa.int64()
    if with_oi:
        types["open_interest"] = pa.int64()
    return pa.Table.from_pylist(rows, schema=pa.schema(types))


def _roll_table(rolls: list[dict[str, Any]]) -> pa.Table:
    types: dict[str, pa.DataType] = {"date": pa.date32()}
    types.update(dict.fromkeys(("from_contract", "to_contract"), pa.string()))
    types.update(dict.fromkeys(("gap", "factor"), pa.float64()))
    return pa.Table.from_pylist(rolls, schema=pa.schema(types))


def _adjusted(frame: pa.Table, rolls: pa.Table, adjust: str | None) -> pa.Table:
    """Prices before each roll back-adjusted: times the later rolls' factors (``ratio``) or
    plus their gaps (``difference``); a roll without a gap (NaN) moves nothing."""
    if adjust is None or frame.num_rows == 0 or rolls.num_rows == 0:
        return frame
    days = frame.column("date").to_numpy(zero_copy_only=False).astype("datetime64[D]")
    when = rolls.column("date").to_numpy(zero_copy_only=False).astype("datetime64[D]")
    if adjust == "ratio":
        step = np.nan_to_num(rolls.column("factor").to_numpy(zero_copy_only=False), nan=1.0)
        suffix = np.append(np.cumprod(step[::-1])[::-1], 1.0)
    else:
        step = np.nan_to_num(rolls.column("gap").to_numpy(zero_copy_only=False), nan=0.0)
        suffix = np.append(np.cumsum(step[::-1])[::-1], 0.0)
    by_row = suffix[np.searchsorted(when, days, side="right")]
    for name in PRICES:
        i = frame.schema.get_field_index(name)
        col = frame.column(name).to_numpy(zero_copy_only=False)
        value = col * by_row if adjust == "ratio" else col + by_row
        frame = frame.set_column(i, frame.schema.field(name), pa.array(value, pa.float64()))
    return frame
