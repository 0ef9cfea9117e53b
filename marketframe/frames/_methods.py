"""The indicator methods shared by every ``md`` accessor; each backend supplies ``_apply``."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ..exceptions import InvalidParams
from ..indicators import (
    BBandsConvention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
)
from . import _core

F = TypeVar("F")


class IndicatorMethods(Generic[F]):
    """Each method returns the frame with new columns appended, computed per symbol.

    ``symbol``/``date``: the columns that identify a symbol and order its bars. At their
    defaults they are used if present (a frame without ``symbol`` is one series; without
    ``date`` the row order is the time order); pass None to ignore them.
    """

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> Any:
        raise NotImplementedError

    def plot(self, **options: Any) -> Any:
        """A candlestick chart with volume and the indicator columns already on the frame
        (``df.md.sma(20).md.rsi(14).md.plot()``); returns the matplotlib ``Figure``. Options
        as :func:`marketframe.plot.candles` (``title``, ``volume``, ``columns``, ``last``,
        ``symbol``); a frame of several symbols gets one block of panels per symbol."""
        from marketframe.plot import candles

        frame = self._df if hasattr(self, "_df") else self._lf  # type: ignore[attr-defined]
        return candles(frame, **options)

    def sma(
        self,
        n: int = 20,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
    ) -> F:
        """Simple moving average -> ``sma_{n}`` (``{column}_sma_{n}`` if column != close)."""
        return self._apply(_core.sma_request(n, column, None), symbol, date)  # type: ignore[no-any-return]

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
        return self._apply(_core.ema_request(n, column, convention), symbol, date)  # type: ignore[no-any-return]

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
        return self._apply(_core.rsi_request(n, column, convention), symbol, date)  # type: ignore[no-any-return]

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
        return self._apply(request, symbol, date)  # type: ignore[no-any-return]

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
        return self._apply(request, symbol, date)  # type: ignore[no-any-return]

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
        return self._apply(request, symbol, date)  # type: ignore[no-any-return]


class SeriesMethods(IndicatorMethods[F]):
    """The methods on one Series (``close.md.rsi(14)``): KDJ, which needs high, low and
    close, is a clear error there."""

    def kdj(self, *args: Any, **kwargs: Any) -> F:
        """KDJ needs high, low and close: call it on a frame (``df.md.kdj()``)."""
        raise InvalidParams(
            "md",
            "kdj",
            "needs high, low and close, not one Series",
            "df.md.kdj() on a frame with high, low and close columns",
        )
