"""When the live engine's bars end: the regular stock session's hours from
:mod:`marketframe.calendar`, applied to a whole batch of trade times at once.

The session's last trade is the closing call's, stamped at the close (13:30:00), and it
belongs to the close's minute bar, as the service's intraday candles label it. So a trade
belongs to the session's bars when it is stamped before the minute after the close (the
after-hours fixed-price trade of 14:30 does not: it makes no intraday candle), and once the
stream has a trade at or past that minute, no trade can come into that day's bars any more:
they are final, whether or not their own symbol traded again.

The hours are the same on every trading day; which days trade is the calendar's too, but the
engine takes the days from the trades themselves: a trade is the service saying its day
traded, and a day past the calendar's coverage still has its bars.
"""

from __future__ import annotations

import numpy as np

from marketframe.calendar import HOURS

__all__ = ["day_end", "ended", "session_end"]

_US = 1_000_000
_DAY_US = 86_400 * _US
_TAIPEI_US = 8 * 3_600 * _US  # Asia/Taipei is UTC+8 all year (no daylight saving)
_CLOSE = HOURS[("stock", "regular")].close
#: from a Taipei midnight to the end of the session's last bar (the minute after the close)
_END_US = ((_CLOSE.hour * 60 + _CLOSE.minute + 1) * 60 + _CLOSE.second) * _US


def session_end(times_us: np.ndarray) -> np.ndarray:
    """For each epoch-us time, the end of its Taipei day's regular session: the minute after
    the close (13:31:00), epoch us. A trade before it belongs to that session's bars."""
    day = (np.asarray(times_us, dtype=np.int64) + _TAIPEI_US) // _DAY_US
    return day * _DAY_US - _TAIPEI_US + _END_US


def ended(bar_starts_us: np.ndarray, now_us: int) -> np.ndarray:
    """Which bars (by their start, epoch us) belong to a session that is over at ``now_us``."""
    return session_end(bar_starts_us) <= now_us


def day_end(times_us: np.ndarray) -> np.ndarray:
    """For each epoch-us time, the next Taipei midnight, epoch us: once the stream has a
    trade of a later day, no backfill will revise that day's bars any more."""
    day = (np.asarray(times_us, dtype=np.int64) + _TAIPEI_US) // _DAY_US
    return (day + 1) * _DAY_US - _TAIPEI_US
