"""``Ticker.fast_info``: yfinance's ``FastInfo`` shape over the service's answers.

A read-only mapping with yfinance's keys (``fi["lastPrice"]``; also ``fi["last_price"]`` and
``fi.last_price``, as yfinance allows). Each value is fetched on first use, in three groups
of one request each, through the ticker's client (whose HTTP cache answers repeats): the
intraday quote (the day's prices), the ticker (currency, exchange, type) and one year of
daily candles as traded, as yfinance reads them (averages, the year's range and change, the
latest day's volume in shares).
``marketCap`` and ``shares`` are not there: the service publishes no share counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from marketframe.convert import to_pandas
from marketframe.exceptions import UnknownKey

#: yfinance's keys -> (the group that answers it, how to read it from that group's frame)
_QUOTE, _TICKER, _YEAR = "quote", "ticker", "candles"
_KEYS: Mapping[str, tuple[str | None, Callable[[Any], Any]]] = {
    "currency": (_TICKER, lambda t: t["trading_currency"].iloc[0]),
    "dayHigh": (_QUOTE, lambda q: q["high_price"].iloc[0]),
    "dayLow": (_QUOTE, lambda q: q["low_price"].iloc[0]),
    "exchange": (_TICKER, lambda t: t["exchange"].iloc[0]),
    "fiftyDayAverage": (_YEAR, lambda d: d["close"].tail(50).mean()),
    "lastPrice": (_QUOTE, lambda q: q["last_price"].iloc[0]),
    "lastVolume": (_YEAR, lambda d: d["volume"].iloc[-1]),
    "open": (_QUOTE, lambda q: q["open_price"].iloc[0]),
    "previousClose": (_QUOTE, lambda q: q["previous_close"].iloc[0]),
    "quoteType": (_TICKER, lambda t: t["type"].iloc[0]),
    "regularMarketPreviousClose": (_QUOTE, lambda q: q["previous_close"].iloc[0]),
    "tenDayAverageVolume": (_YEAR, lambda d: d["volume"].tail(10).mean()),
    "threeMonthAverageVolume": (_YEAR, lambda d: d["volume"].tail(63).mean()),
    "timezone": (None, lambda _: "Asia/Taipei"),
    "twoHundredDayAverage": (_YEAR, lambda d: d["close"].tail(200).mean()),
    "yearChange": (_YEAR, lambda d: d["close"].iloc[-1] / d["close"].iloc[0] - 1),
    "yearHigh": (_YEAR, lambda d: d["high"].max()),
    "yearLow": (_YEAR, lambda d: d["low"].min()),
}
#: yfinance's keys the service cannot answer, and why
_ABSENT = {
    "marketCap": "the service publishes no share counts",
    "shares": "the service publishes no share counts",
}


def _camel(name: str) -> str:
    """``last_price`` -> ``lastPrice`` (yfinance accepts both spellings)."""
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


class FastInfo(Mapping[str, Any]):
    """yfinance's ``Ticker.fast_info`` for one symbol (see the module)."""

    def __init__(self, fetch: Callable[[str], pa.Table], symbol: str) -> None:
        self._fetch = fetch  # a group's name -> its Arrow table
        self._symbol = symbol
        self._frames: dict[str, Any] = {}

    def _frame(self, group: str) -> Any:
        if group not in self._frames:
            self._frames[group] = to_pandas(self._fetch(group))
        return self._frames[group]

    def __getitem__(self, key: str) -> Any:
        name = _camel(key) if isinstance(key, str) else key
        if name in _ABSENT:
            raise UnknownKey(f"{key!r}: {_ABSENT[name]}")
        if name not in _KEYS:
            raise UnknownKey(f"{key!r} is not a key of fast_info; keys: {', '.join(_KEYS)}")
        group, read = _KEYS[name]
        if group is None:
            return read(None)
        frame = self._frame(group)
        if not len(frame):
            return None  # no bar (yet) for this symbol
        value = read(frame)
        return value.item() if hasattr(value, "item") else value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(exc.args[0]) from None

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)

    def keys(self) -> Any:
        return _KEYS.keys()

    def __repr__(self) -> str:
        return f"marketframe.Ticker({self._symbol!r}).fast_info: keys {', '.join(_KEYS)}"


__all__ = ["FastInfo"]
