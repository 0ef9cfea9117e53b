"""zipline-reloaded: a bundle of daily bars (``register_zipline``) on marketframe's calendar.

- the calendar: XTAI as marketframe.calendar corrects it (closures XTAI misses, the make-up
  Saturdays TWSE traded until 2018), registered with exchange_calendars as
  :data:`CALENDAR` over the bars' span (XTAI outside it);
- the assets: each symbol from its first bar to its last, ``auto_close_date`` the day after
  (zipline closes a position still held then at the last close: a delisting);
- the bars: raw prices on every session of the asset's span (a suspension: no trade);
- the adjustments: each row of a factor table (:func:`marketframe.adjust.factor_table`, as
  of the day the bundle should know) or each corporate action of the store's action frames,
  as a split (its share-count ratio: prices and volumes) and a merger (the rest of its price
  ratio: prices only), so zipline's adjusted history is marketframe's ``adjust="all"``.
  A factor table's rows the adjustment leaves out (no previous close, a ratio out of range)
  count 1, as in its cumulative factor. Cash dividends adjust
  prices; they are not paid to a held position as cash.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from marketframe.adjust import MISSING_CLOSE, OUT_OF_RANGE, Event
from marketframe.engines._bars import by_symbol, daily
from marketframe.exceptions import InvalidParams, require_extra

WHERE = "engines.register_zipline"
#: the flags of a factor table's rows the adjustment leaves out (``non_session`` is
#: information: such an action is applied, as by ``adjust="all"``)
FLAGS = (MISSING_CLOSE, OUT_OF_RANGE)
FACTOR_COLUMNS = ("symbol", "date", "ratio", "factor", *FLAGS)
#: the name the corrected calendar is registered under
CALENDAR = "XTAI-MARKETFRAME"
#: a regular session, 09:00-13:30
MINUTES_PER_DAY = 270


def calendar_type(first: pd.Timestamp, last: pd.Timestamp) -> Any:
    """An exchange_calendars calendar class: XTAI, whose sessions from ``first`` to ``last``
    are marketframe.calendar's (Monday to Saturday open, every other day an ad hoc
    holiday)."""
    from exchange_calendars.exchange_calendar_xtai import XTAIExchangeCalendar

    from marketframe import calendar

    days = pd.date_range(first, last, freq="D")
    open_ = set(calendar.sessions_in_range(first.date(), last.date()))
    closed = [d for d in days if d not in open_ and d.weekday() != 6]
    saturdays = pd.date_range("1980-01-05", "2100-12-31", freq="W-SAT")
    outside = [d for d in saturdays if not first <= d <= last]

    class Corrected(XTAIExchangeCalendar):  # type: ignore[misc]
        name = CALENDAR
        weekmask = "1111110"

        @property
        def adhoc_holidays(self) -> list[pd.Timestamp]:
            return [*super().adhoc_holidays, *closed, *outside]

    return Corrected


def _adjustments(
    events: Mapping[str, Sequence[Event]], sids: Mapping[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    splits, mergers = [], []
    for symbol, evs in events.items():
        if symbol not in sids:
            continue
        for e in evs:
            day = pd.Timestamp(e.day)
            if e.shares != 1:
                splits.append((sids[symbol], day, float(e.shares)))
            rest = e.price / e.shares
            if rest != 1:
                mergers.append((sids[symbol], day, float(rest)))
    cols = ["sid", "effective_date", "ratio"]
    return pd.DataFrame(splits, columns=cols), pd.DataFrame(mergers, columns=cols)


def _ingest(bars: pd.DataFrame, events: Mapping[str, Sequence[Event]]) -> Any:
    per = by_symbol(bars)
    sids = {s: i for i, s in enumerate(sorted(per))}

    def ingest(
        environ: Any,
        asset_db_writer: Any,
        minute_bar_writer: Any,
        daily_bar_writer: Any,
        adjustment_writer: Any,
        calendar: Any,
        start_session: Any,
        end_session: Any,
        cache: Any,
        show_progress: bool,
        output_dir: Any,
    ) -> None:
        equities = pd.DataFrame(
            [
                {
                    "symbol": s,
                    "asset_name": s,
                    "start_date": b.index[0],
                    "end_date": b.index[-1],
                    "first_traded": b.index[0],
                    "auto_close_date": b.index[-1] + pd.Timedelta(days=1),
                    "exchange": "XTAI",
                }
                for s, b in per.items()
            ],
            index=[sids[s] for s in per],
        )
        exchanges = pd.DataFrame(
            {"exchange": ["XTAI"], "canonical_name": ["XTAI"], "country_code": ["TW"]}
        )
        asset_db_writer.write(equities=equities, exchanges=exchanges)
        sessions = calendar.sessions_in_range(start_session, end_session)

        def frames() -> Iterator[tuple[int, pd.DataFrame]]:
            for s, b in per.items():
                span = sessions[(sessions >= b.index[0]) & (sessions <= b.index[-1])]
                out = b.reindex(span)
                out["volume"] = out["volume"].fillna(0.0)
                yield sids[s], out

        # a suspension's sessions are NaN: written as zipline's "no trade" without a warning
        daily_bar_writer.write(
            frames(), show_progress=show_progress, invalid_data_behavior="ignore"
        )
        splits, mergers = _adjustments(events, sids)
        adjustment_writer.write(splits=splits, mergers=mergers)

    return ingest


def register_zipline(
    name: str,
    bars: Any,
    *,
    factors: Any = None,
    capital_changes: Any = None,
    dividends: Any = None,
    today: dt.date | None = None,
) -> None:
    """Register zipline bundle ``name`` of raw daily ``bars`` (``zipline ingest -b NAME``
    or ``zipline.data.bundles.ingest``) on the calendar :data:`CALENDAR` (``run_algorithm(...,
    trading_calendar=get_calendar(CALENDAR))``), adjusted by either ``factors``, a factor
    table (:func:`marketframe.adjust.factor_table`; its ``as_of`` is what the bundle knows),
    or the frames of ``stock.corporate_actions.capital_changes`` and ``.dividends`` (store
    reads; every action up to ``today``, default the last bar's day)."""
    if factors is not None and (capital_changes is not None or dividends is not None):
        raise InvalidParams(
            WHERE,
            "factors",
            "is given with " + ("capital_changes" if capital_changes is not None else "dividends"),
            "one of them: a factor table, or the corporate actions' frames",
        )
    require_extra("zipline", WHERE)
    import exchange_calendars as xcals
    import pyarrow as pa
    from zipline.data.bundles import register  # the zipline extra, imported on first use

    from marketframe.adjust import events_of

    frame = daily(WHERE, bars)
    first, last = frame["date"].min(), frame["date"].max()
    events: dict[str, list[Event]] = {}
    if factors is not None:
        events = events_of_factors(factors, set(frame["symbol"]))
    elif capital_changes is not None:
        caps = pa.Table.from_pandas(daily_frame(capital_changes), preserve_index=False)
        divs = None
        if dividends is not None:
            divs = pa.Table.from_pandas(daily_frame(dividends), preserve_index=False)
        events = events_of(caps, divs, "all", today or last.date(), set(frame["symbol"]))
    xcals.register_calendar_type(CALENDAR, calendar_type(first, last), force=True)
    register(
        name,
        _ingest(frame, events),
        calendar_name=CALENDAR,
        start_session=first,
        end_session=last,
        minutes_per_day=MINUTES_PER_DAY,
    )


def events_of_factors(factors: Any, symbols: set[str]) -> dict[str, list[Event]]:
    """The adjustment's events of a factor table's rows (those of ``symbols``); a flagged
    row, whose factor the table counts 1, is left out."""
    table = daily_frame(factors, "factors", FACTOR_COLUMNS)
    flagged = table[list(FLAGS)].any(axis=1) | table["factor"].isna()
    events: dict[str, list[Event]] = {}
    kept = table[~flagged]
    for symbol, day, factor, ratio in zip(
        kept["symbol"].astype(str),
        kept["date"],
        kept["factor"].to_numpy(float),
        kept["ratio"].to_numpy(float),
        strict=True,
    ):
        if symbol in symbols:
            events.setdefault(symbol, []).append(Event(symbol, day, float(factor), float(ratio)))
    return events


def daily_frame(
    frame: Any, name: str = "capital_changes", columns: tuple[str, ...] = ("symbol",)
) -> pd.DataFrame:
    """A pandas frame of a pandas or polars one, its datetime columns as dates."""
    from marketframe._checks import check_frame

    out: pd.DataFrame = check_frame(WHERE, name, frame, columns).copy()
    for c in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[c].dtype):
            out[c] = out[c].dt.date
    return out
