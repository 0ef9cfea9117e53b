"""The indicator methods shared by every ``md`` accessor; each backend supplies ``_apply``.

Every row of the indicator table (``marketframe.indicators.registry``) is a method:
``df.md.indicator(name, *periods, ...)``, also spelled ``df.md.<name>(...)``. The built-in
ones are also written out below, for their signatures (typed, with their defaults).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ..exceptions import InvalidParams, did_you_mean
from ..indicators import (
    BBandsConvention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    registry,
)
from . import _core

if TYPE_CHECKING:  # matplotlib is the optional ``plot`` extra
    from matplotlib.figure import Figure

F = TypeVar("F")


class IndicatorMethods(Generic[F]):
    """Each method returns the frame with new columns appended, computed per symbol.

    ``symbol``/``date``: the columns that identify a symbol and order its bars. At their
    defaults they are used if present (a frame without ``symbol`` is one series; without
    ``date`` the row order is the time order); pass None to ignore them.
    """

    def __init__(self, frame: F) -> None:
        self._frame = frame  # the accessor's frame (a Series accessor holds its own Series)

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> F:
        raise NotImplementedError

    def _takes(self, row: registry.Indicator) -> None:
        """Raises if the accessor cannot give the indicator its inputs (one Series)."""

    def indicator(
        self,
        /,
        name: str,
        *periods: float,
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: object = None,
        **columns: Any,
    ) -> F:
        """Any indicator of the table by its name: ``df.md.indicator("rsi", 14)`` is
        ``df.md.rsi(14)``. ``periods`` in the row's order (missing ones: its defaults), or by
        name (``slow=30``); the input columns by the row's input names (``close="adj"``,
        ``high="High"``), or ``column=`` for an indicator of one input."""
        row = registry.get(name)
        self._takes(row)
        values = dict(zip((p.name for p in row.periods), row.defaults, strict=True))
        if len(periods) > len(row.periods):
            raise InvalidParams(
                f"md.{name}", "periods", f"takes {len(row.periods)} values, got {len(periods)}"
            )
        values.update(zip(list(values), periods, strict=False))
        inputs = dict(zip(row.inputs, row.inputs, strict=True))
        for key, value in columns.items():
            if key in values:
                values[key] = value
            elif key in inputs or (key == "column" and len(inputs) == 1):
                inputs[row.inputs[0] if key == "column" else key] = value
            else:
                allowed = [*values, *inputs] + (["column"] if len(inputs) == 1 else [])
                raise InvalidParams(
                    f"md.{name}",
                    key,
                    f"is not a period or an input of {name}{did_you_mean(key, allowed)}",
                    ", ".join(allowed),
                )
        request = _core.request(name, tuple(values.values()), tuple(inputs.values()), convention)
        return self._apply(request, symbol, date)

    def __getattr__(self, name: str) -> Callable[..., F]:
        """``df.md.<name>(...)`` for a row of the indicator table without a method here."""
        if name.startswith("_") or name not in registry.names():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return functools.partial(self.indicator, name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *registry.names()})

    def plot(self, **options: Any) -> Figure:
        """A candlestick chart with volume and the indicator columns already on the frame
        (``df.md.sma(20).md.rsi(14).md.plot()``); returns the matplotlib ``Figure``. Options
        as :func:`marketframe.plot.candles` (``title``, ``volume``, ``columns``, ``last``,
        ``symbol``); a frame of several symbols gets one block of panels per symbol."""
        from marketframe.plot import candles

        return candles(cast(Any, self._frame), **options)  # F: a frame of candles' kinds

    def sma(
        self,
        n: int = 20,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
    ) -> F:
        """Simple moving average -> ``sma_{n}`` (``{column}_sma_{n}`` if column != close)."""
        return self._apply(_core.sma_request(n, column, None), symbol, date)

    def ema(
        self,
        n: int = 20,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: EmaConvention | str | None = None,
    ) -> F:
        """Exponential moving average -> ``ema_{n}``."""
        return self._apply(_core.ema_request(n, column, convention), symbol, date)

    def rsi(
        self,
        n: int = 14,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: RsiConvention | str | None = None,
    ) -> F:
        """Wilder RSI -> ``rsi_{n}``."""
        return self._apply(_core.rsi_request(n, column, convention), symbol, date)

    def macd(
        self,
        fast: int = 12,
        slow: int = 26,
        signal: int = 9,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: MacdConvention | str | None = None,
    ) -> F:
        """MACD -> ``macd_{f}_{s}_{g}``, ``macd_signal_{f}_{s}_{g}``, ``macd_hist_{f}_{s}_{g}``."""
        request = _core.macd_request(fast, slow, signal, column, convention)
        return self._apply(request, symbol, date)

    def bbands(
        self,
        n: int = 20,
        mult: float = 2.0,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: BBandsConvention | str | None = None,
    ) -> F:
        """Bollinger bands -> ``bb_upper_{n}_{mult}``, ``bb_middle_...``, ``bb_lower_...``."""
        request = _core.bbands_request(n, mult, column, convention)
        return self._apply(request, symbol, date)

    def kdj(
        self,
        n: int = 9,
        m1: int = 3,
        m2: int = 3,
        *,
        high: str = "high",
        low: str = "low",
        close: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: KdjConvention | str | None = None,
    ) -> F:
        """KDJ -> ``kdj_k_{n}_{m1}_{m2}``, ``kdj_d_...``, ``kdj_j_...``."""
        request = _core.kdj_request(n, m1, m2, high, low, close, convention)
        return self._apply(request, symbol, date)


class SeriesMethods(IndicatorMethods[F]):
    """The methods on one Series (``close.md.rsi(14)``): an indicator of several inputs
    (KDJ: high, low and close) is a clear error there."""

    def _takes(self, row: registry.Indicator) -> None:
        if len(row.inputs) > 1:
            fields = f"{', '.join(row.inputs[:-1])} and {row.inputs[-1]}"
            raise InvalidParams(
                "md",
                row.name,
                f"needs {fields}, not one Series",
                f"df.md.{row.name}() on a frame with {fields} columns",
            )

    def kdj(self, *args: Any, **kwargs: Any) -> F:
        """KDJ needs high, low and close: call it on a frame (``df.md.kdj()``)."""
        return self.indicator("kdj", *args, **kwargs)
