"""The sandbox's own adjusted (還原) prices: ``adjusted=true`` on historical candles.

This is an independent oracle for :mod:`marketframe.adjust` (which computes backward factors
from the corporate-actions endpoints): it shares no code with the package and works from the
synthetic market's own events, in integer cents, **forward**. A running multiplier starts at
1 on the instrument's first day and, on every event day, is divided by the event's price
ratio; a day's adjusted price is its raw price times its multiplier over today's multiplier,
rounded to the cent (the service sends prices with at most two decimals).

Price ratio of an event (the reference price it sets over the previous close, before ticks):

* capital change (split, reverse split, par-value change, reduction): its ``factor``;
* dividend: ``(previous close - cash) / (previous close * (1 + stock per 1000 / 1000))``.

Events after the service's today (announced, not yet effective) are not applied. Only the
prices (``open``, ``high``, ``low``, ``close`` and the reference behind ``change``) are
adjusted; volume and turnover stay as traded (how the real service treats them is not known:
``docs/adjusted.md``).
"""

from __future__ import annotations

from datetime import date

import numpy as np

from ._daily import Daily

PRICE_COLUMNS = ("ref", "open", "high", "low", "close")


def _events(daily: Daily, today: date) -> list[tuple[date, float]]:
    """(day, price ratio) of every event of ``daily`` effective on or before ``today``."""
    out = [(ch.effective, float(ch.factor)) for ch, _prev, _ref in daily.capital_changes]
    for dv in daily.dividends:
        prev = float(dv.previous_close)
        out.append((dv.ex_date, (prev - dv.cash) / (prev * (1.0 + dv.stock / 1000.0))))
    return [(d, r) for d, r in out if d <= today]


def multipliers(daily: Daily, today: date) -> np.ndarray:
    """The forward multiplier of every day of ``daily`` (1 on the first day)."""
    step = np.ones(len(daily.dates))
    for d, ratio in _events(daily, today):
        i = daily.index_of(d)
        if i is not None:
            step[i] /= ratio
    return np.cumprod(step)


def scale(
    daily: Daily, dates: np.ndarray, cols: dict[str, np.ndarray], today: date
) -> dict[str, np.ndarray]:
    """``cols`` (integer cents on ``dates``, a run of ``daily``'s days) adjusted to today."""
    if len(dates) == 0:
        return cols
    mult = multipliers(daily, today)
    last = int(np.searchsorted(daily.dates, np.datetime64(today, "D"), side="right")) - 1
    anchor = mult[max(last, 0)]
    first = int(np.searchsorted(daily.dates, dates[0]))
    rel = mult[first : first + len(dates)] / anchor
    out = dict(cols)
    for k in PRICE_COLUMNS:
        out[k] = np.rint(cols[k] * rel).astype(np.int64)
    return out
