"""Adapters from marketframe's daily bars to the engines people backtest with
(docs/engines.md).

Each takes daily bars in long form, one row per symbol and session (``symbol``, ``date``,
``open``, ``high``, ``low``, ``close``, ``volume``: ``Store.read("stock.historical.candles",
...)``, ``download(...)`` or a loader's frame; pandas or polars), and keeps every symbol's own
life: a symbol's data starts at its first bar and ends at its last, so a stock delisted
during the backtest stops there instead of vanishing from the universe. Pass adjusted bars
(``adjust="all"``) for total-return backtests.

- :func:`to_vectorbt`: a ``vectorbt.Data`` (needs the ``vectorbt`` extra);
- :func:`to_backtrader` / :func:`backtrader_feeds`: backtrader feeds (the ``backtrader``
  extra);
- :func:`write_qlib`: a qlib data directory (calendar, instruments with their spans, binary
  features, ``factor``), written without importing qlib;
- :func:`register_zipline`: a zipline-reloaded bundle (assets with their spans, raw bars,
  the corporate actions as adjustments) on XTAI as marketframe.calendar corrects it
  (:data:`ZIPLINE_CALENDAR`); zipline-reloaded pins its own pandas, so it usually lives in an
  environment of its own.

The engines are imported on first use, not with this package.
"""

from __future__ import annotations

from marketframe.engines._backtrader import backtrader_feeds, to_backtrader
from marketframe.engines._qlib import write_qlib
from marketframe.engines._vectorbt import to_vectorbt
from marketframe.engines._zipline import CALENDAR as ZIPLINE_CALENDAR
from marketframe.engines._zipline import register_zipline

__all__ = [
    "ZIPLINE_CALENDAR",
    "backtrader_feeds",
    "register_zipline",
    "to_backtrader",
    "to_vectorbt",
    "write_qlib",
]
