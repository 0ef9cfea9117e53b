"""``write_qlib``: daily bars as a qlib data directory, written without importing qlib.

qlib's file format (its ``scripts/dump_bin.py`` writes the same):

- ``calendars/day.txt``: the sessions, one ``YYYY-MM-DD`` a line;
- ``instruments/all.txt``: ``SYMBOL<TAB>first<TAB>last`` per instrument, its span (qlib lists
  an instrument only within it, which is how a delisted stock leaves the universe);
- ``features/<symbol, lower case>/<field>.day.bin``: little-endian float32, the first value the
  index in the calendar of the instrument's first session, then one value per calendar session
  up to its last (NaN where it did not trade).

Prices are qlib's adjusted prices and ``factor`` the ratio of the adjusted close to the raw
one (qlib divides by it to get raw prices and trading units); volumes are the raw volumes
divided by the factor, as qlib's collectors write them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from marketframe.engines._bars import PRICES, by_symbol, calendar, daily
from marketframe.exceptions import InvalidParams

WHERE = "engines.write_qlib"
FIELDS = (*PRICES, "factor")


def _bin(path: Path, start: int, values: np.ndarray) -> None:
    np.hstack([[start], values]).astype("<f4").tofile(path)


def write_qlib(bars: Any, path: str | os.PathLike[str], *, adjusted: Any = None) -> Path:
    """Write ``bars`` (raw daily bars) under ``path`` in qlib's format and return the path.

    ``adjusted``: the same bars adjusted (``Store.read(..., adjust="all")``); the written
    prices are then the adjusted ones and ``factor`` adjusted close / raw close. Without it
    prices are the raw ones and ``factor`` is 1. Files of the symbols written are replaced;
    the calendar and ``instruments/all.txt`` describe the bars written."""
    raw = daily(WHERE, bars)
    root = Path(path).expanduser()
    per_raw = by_symbol(raw)
    per_adj = per_raw
    if adjusted is not None:
        per_adj = by_symbol(daily(WHERE, adjusted, "adjusted"))
        for symbol, b in per_raw.items():
            a = per_adj.get(symbol)
            if a is None or not a.index.equals(b.index):
                raise InvalidParams(
                    WHERE,
                    "adjusted",
                    f"does not have the bars' dates of {symbol}",
                    "the same symbols and dates as bars, adjusted",
                )
    days = calendar(raw)
    (root / "calendars").mkdir(parents=True, exist_ok=True)
    (root / "calendars" / "day.txt").write_text(
        "".join(f"{d:%Y-%m-%d}\n" for d in days), encoding="utf-8"
    )
    spans = []
    for symbol, b in per_raw.items():
        a = per_adj[symbol]
        first, last = b.index[0], b.index[-1]
        start = int(days.searchsorted(first))
        span = days[start : int(days.searchsorted(last)) + 1]
        factor = (a["close"] / b["close"]).where(b["close"] > 0)
        cols = {
            "open": a["open"],
            "high": a["high"],
            "low": a["low"],
            "close": a["close"],
            "volume": b["volume"] / factor,
            "factor": factor,
        }
        out = root / "features" / symbol.lower()
        out.mkdir(parents=True, exist_ok=True)
        for field in FIELDS:
            values = pd.Series(cols[field]).reindex(span).to_numpy(dtype="float64")
            _bin(out / f"{field}.day.bin", start, values)
        spans.append(f"{symbol.upper()}\t{first:%Y-%m-%d}\t{last:%Y-%m-%d}\n")
    (root / "instruments").mkdir(parents=True, exist_ok=True)
    (root / "instruments" / "all.txt").write_text("".join(spans), encoding="utf-8")
    return root
