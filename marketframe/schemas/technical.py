"""Schemas of the stock technical-indicator endpoints (beta): one column per output."""

from __future__ import annotations

from marketframe.schemas._core import Schema
from marketframe.schemas._core import col as _c
from marketframe.schemas._core import env as _env
from marketframe.schemas._core import many as _many
from marketframe.schemas._core import schema as _schema

_TECH_ENV = [_env("symbol", "str", req=True), _env("timeframe", "cat", param="timeframe")]
_TECH_IGNORE = "from to"


def _tech(params: str, values: str, ignore: str = "") -> Schema:
    cols = [*_TECH_ENV, *[_env(p, "int", param=p) for p in params.split()]]
    cols += [_c("date", "date_or_time", req=True), *_many("float", values)]
    return _schema(cols, True, f"{_TECH_IGNORE} {ignore}")


TECHNICAL_SMA = _tech("period", "sma")

TECHNICAL_RSI = _tech("period", "rsi")

TECHNICAL_KDJ = _tech("rPeriod kPeriod dPeriod", "k d j")

TECHNICAL_MACD = _tech("fast slow signal", "macdLine signalLine")

# The field table says fast/slow/signal are echoed, the sample echoes period. A BB request
# has no fast/slow/signal, so an echo of them carries nothing: accepted and ignored rather
# than kept as three always-null columns.
TECHNICAL_BB = _tech("period", "upper middle lower", ignore="fast slow signal")
