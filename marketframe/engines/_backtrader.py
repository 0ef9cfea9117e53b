"""Backtrader feeds of daily bars: one ``PandasData`` per symbol, on its own sessions."""

from __future__ import annotations

from typing import Any

from marketframe.engines._bars import by_symbol, daily
from marketframe.exceptions import InvalidParams, require_extra

WHERE = "engines.to_backtrader"


def _feed(symbol: str, bars: Any) -> Any:
    import backtrader as bt  # the engines extra, imported on first use

    return bt.feeds.PandasData(dataname=bars, name=symbol, openinterest=None)


def backtrader_feeds(bars: Any) -> dict[str, Any]:
    """A backtrader ``PandasData`` feed per symbol of ``bars``, named by the symbol, with
    the symbol's own sessions only: a feed starts at the listing and ends at the last bar,
    so a strategy sees a delisted stock's feed stop (``len(data) == data.buflen()``)."""
    require_extra("backtrader", "engines.backtrader_feeds")
    return {s: _feed(s, b) for s, b in by_symbol(daily("engines.backtrader_feeds", bars)).items()}


def to_backtrader(bars: Any, symbol: str) -> Any:
    """The backtrader feed of one ``symbol`` of ``bars`` (see :func:`backtrader_feeds`)."""
    require_extra("backtrader", WHERE)
    per = by_symbol(daily(WHERE, bars))
    if symbol not in per:
        known = ", ".join(list(per)[:20]) + (", ..." if len(per) > 20 else "")
        raise InvalidParams(WHERE, "symbol", f"is {symbol!r}, not in bars", known)
    return _feed(symbol, per[symbol])
