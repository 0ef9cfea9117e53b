"""Attention and disposition: the exchanges' measures against abnormal trading, as the
synthetic market applies them to its own prices.

Some stocks have speculative runs (:func:`speculative_runs`, ``Instrument.runs`` a year): days
of steep gains that the market model adds to their returns. Their prices then meet the rules
below, simplified from TPEx's and TWSE's "公布或通知注意交易資訊暨處置作業要點":

- **attention** (注意交易資訊, the first criterion): the close's cumulative change over the
  last six trading days, today included, beyond 32 % either way and at least 20 points away
  from its board index's change over the same days (no index before 2015: 0 %);
- **disposition** (處置) after attention on three consecutive trading days: from the next
  trading day, for 10 trading days, the stock is matched in call auctions every 5 minutes
  (第一次處置, 約每五分鐘撮合一次); a disposition announced within 30 trading days of the
  previous one is a second disposition, matched every 20 minutes (約每二十分鐘撮合一次).
  Attention days inside a disposition period do not count towards the next one, so a stock
  comes out of every period before it can be put under disposition again.

Sources: TPEx, 上櫃公布注意累計次數異常資訊 (tpex.org.tw/zh-tw/announce/market/warning.html:
three consecutive days of the first criterion; counts made during a disposition excluded);
the first criterion's 32 % over six days and 20 points from the market's average, as
quoted from the rule; press reports of dispositions (10 trading days, every 5 minutes; every
20 minutes when a disposition was announced in the last 30 trading days). The other
criteria (turnover, day trading, price-earnings) and the 12-day periods of day-trading cases
are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: six-day cumulative close change that meets the first attention criterion ...
ATTENTION_CHANGE = 0.32
ATTENTION_DAYS = 6
#: ... when it is this far from the board index's change over the same days
ATTENTION_GAP = 0.20
#: consecutive attention days that put a stock under disposition
TRIGGER_RUN = 3
#: trading days of a disposition period
PERIOD = 10
#: a disposition announced within this many trading days of the previous one is a second one
REPEAT_WINDOW = 30
#: seconds between call auctions under a first and a second (or later) disposition
FIRST_INTERVAL = 300
REPEAT_INTERVAL = 1200


@dataclass(frozen=True)
class Status:
    """Per row of an instrument's daily history: on the attention list, and the seconds
    between call auctions (0: continuous trading; else under disposition)."""

    attention: np.ndarray  # bool
    interval: np.ndarray  # int64

    def at(self, i: int | None) -> tuple[bool, int]:
        if i is None:
            return False, 0
        return bool(self.attention[i]), int(self.interval[i])


def six_day_change(close: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Each row's cumulative close change over its last six rows, each day's from its
    reference price (so ex-dividend days and capital changes are not moves); 0 for the
    first rows."""
    step = np.concatenate(([0.0], np.cumsum(np.log(close / ref))))
    out = np.zeros(len(close))
    out[ATTENTION_DAYS:] = np.expm1(step[ATTENTION_DAYS + 1 :] - step[1:-ATTENTION_DAYS])
    return out


def status(change: np.ndarray, market_change: np.ndarray) -> Status:
    """Attention and disposition from a stock's six-day changes and its board index's over
    the same rows."""
    n = len(change)
    attention = (np.abs(change) > ATTENTION_CHANGE) & (
        np.abs(change - market_change) >= ATTENTION_GAP
    )
    interval = np.zeros(n, dtype=np.int64)
    run, last, i = 0, -(10**9), 0
    flags = attention.tolist()
    while i < n:
        run = run + 1 if flags[i] else 0
        if run >= TRIGGER_RUN:
            level = REPEAT_INTERVAL if i - last <= REPEAT_WINDOW else FIRST_INTERVAL
            interval[i + 1 : i + 1 + PERIOD] = level
            last, run, i = i, 0, i + 1 + PERIOD  # its days do not count towards the next
            continue
        i += 1
    return Status(attention, interval)


def speculative_runs(rng: np.random.Generator, n: int, per_year: float) -> np.ndarray:
    """Extra log returns of ``n`` trading days: about ``per_year`` runs a year of 5 to 11 days
    of gains of 4.5-10 % a day (the limit clamps them); half the runs are followed, three to
    four weeks after they start, by another."""
    out = np.zeros(n)
    if per_year <= 0 or n == 0:
        return out
    count = int(rng.poisson(per_year * n / 250))
    starts = rng.integers(0, n, count).tolist()
    for start in starts:
        length = int(rng.integers(5, 12))
        legs = [(start, length)]
        if rng.random() < 1 / 2:
            legs.append((start + int(rng.integers(14, 22)), int(rng.integers(5, 12))))
        for a, m in legs:
            b = min(n, a + m)
            if a < b:
                out[a:b] += rng.uniform(0.045, 0.10, b - a)
    return out
