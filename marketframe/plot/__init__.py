"""Charts (matplotlib, the ``plot`` extra): candlesticks with volume and indicators.

``candles(df)`` draws any candles frame (pandas or polars; one block of panels per symbol):
price as candlesticks, volume bars below, overlay columns on the price (moving averages,
Bollinger bands) and oscillators in their own panels (RSI, KDJ, MACD). ``df.md.plot(...)``
calls it.

Every candle, wick and volume bar of a panel is one matplotlib collection (a
``PolyCollection`` of bodies, a ``LineCollection`` of wicks), not one artist per bar: a
chart of thousands of bars draws and saves in a fraction of a second.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import ModuleType
from typing import IO, TYPE_CHECKING

import pandas as pd

from marketframe.exceptions import ExtraNotInstalled, InvalidParams, MissingColumnsError
from marketframe.indicators import registry
from marketframe.plot._artists import (
    BAND,
    DOWN,
    LAST,
    OVERLAYS,
    PANELS,
    PRICE,
    UP,
    _draw,
    _same_times,
    _window,
    overlay_prefixes,
    panel_prefixes,
)

if TYPE_CHECKING:  # matplotlib and polars are optional: imported where they are used
    import polars as pl
    import pyarrow as pa
    from matplotlib.figure import Figure

__all__ = ["BAND", "DOWN", "LAST", "OVERLAYS", "PANELS", "PRICE", "UP", "candles", "pyplot", "save"]


def pyplot() -> ModuleType:
    """``matplotlib.pyplot``, or :class:`ExtraNotInstalled` naming the ``plot`` extra."""
    try:
        import matplotlib

        if not hasattr(matplotlib, "pyplot"):
            import matplotlib.pyplot  # noqa: F401
        return matplotlib.pyplot
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ExtraNotInstalled("matplotlib", "a chart") from e


def _to_pandas(df: pd.DataFrame | pl.DataFrame | pl.LazyFrame | pa.Table) -> pd.DataFrame:
    if isinstance(df, pd.DataFrame):  # pandas already
        return df
    if hasattr(df, "collect"):  # a polars LazyFrame: the chart needs the rows
        df = df.collect()
    return df.to_pandas()  # polars DataFrame or Arrow table


def _normalised(pdf: pd.DataFrame) -> pd.DataFrame:
    """The frame with its base columns spelled as the chart reads them: ``Open``/``CLOSE``
    (any case, as the indicators accept them) as ``open``/``close``, and a time index
    (``Date``, as yfinance returns it) as a ``date`` column."""
    cols = [str(c) for c in pdf.columns]
    rename = {}
    for name in (*PRICE, "volume", "symbol", "date", "time"):
        if name in cols:
            continue
        hits = [c for c in cols if c.lower() == name]
        if len(hits) == 1:
            rename[hits[0]] = name
    if rename:
        pdf = pdf.rename(columns=rename)
    if not {"date", "time"} & set(pdf.columns) and isinstance(pdf.index, pd.DatetimeIndex):
        pdf = pdf.rename_axis("date").reset_index()
    return pdf


def _long(pdf: pd.DataFrame) -> pd.DataFrame:
    """A pivot of several fields (``download(..., layout="wide")``: columns ``(field,
    symbol)``, or ``(symbol, field)`` with ``group_by="ticker"``) as the long frame it was
    made from, symbols in their order: drawn as one block of panels per symbol."""
    cols = pdf.columns
    if not isinstance(cols, pd.MultiIndex) or cols.nlevels != 2:
        return pdf
    names = [{str(v).lower() for v in cols.get_level_values(i)} for i in (0, 1)]
    field = next((i for i in (0, 1) if set(PRICE) <= names[i]), None)
    if field is None:
        return pdf
    level = 1 - field
    parts = []
    for sym in dict.fromkeys(cols.get_level_values(level)):
        one = pd.DataFrame(pdf.xs(sym, axis=1, level=level)).dropna(how="all")
        one.columns = pd.Index([str(c) for c in one.columns])
        one.index.name = str(one.index.name or "date")
        parts.append(one.reset_index().assign(symbol=str(sym)))
    return pd.concat(parts, ignore_index=True)


def _classify(columns: Sequence[str], skip: set[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The columns drawn over the price, and those of each panel, by the indicator table's
    charts (``marketframe.indicators.registry``)."""
    overlays: list[str] = []
    panels: dict[str, list[str]] = {}
    over, below = overlay_prefixes(), panel_prefixes()
    for c in columns:
        if c in skip:
            continue
        low = c.lower()
        if low.startswith(over):
            overlays.append(c)
            continue
        for panel, prefixes in below.items():
            if low.startswith(prefixes) and (len(low) > 1 or low in prefixes):
                panels.setdefault(panel, []).append(c)
                break
    return overlays, panels


_BASE = {
    "open",
    "high",
    "low",
    "close",
    "volume",
    "turnover",
    "change",
    "average",
    "date",
    "time",
    "symbol",
    "type",
    "exchange",
    "market",
    "timeframe",
    "transaction",
}


def candles(
    df: pd.DataFrame | pl.DataFrame | pl.LazyFrame | pa.Table,
    *,
    title: str | None = None,
    volume: bool = True,
    columns: Sequence[str] | None = None,
    last: int | None = LAST,
    symbol: str | None = None,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Draw a candlestick chart and return the matplotlib ``Figure``.

    ``columns`` picks the indicator columns to draw (default: every column whose name starts
    like an indicator's: ``sma``/``ema``/``bb_`` over the price, ``rsi``, ``kdj_*``, ``macd*``
    in panels). ``last`` keeps the last N bars of each symbol (default 120, about six months
    of daily candles; the title says so when bars were left out); ``last=None`` draws every
    bar. Indicators are computed before, on the whole frame, so the window never shortens
    their warm-up. A frame holding several symbols is drawn as one block of panels per
    symbol, stacked; ``symbol=`` draws only that one. ``open``/``high``/``low``/``close``
    may be spelled in any case (``Close``), as for the indicators.
    """
    plt = pyplot()
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
        raise InvalidParams("plot", "last", f"has value {last!r}", "an integer >= 1, or None")
    pdf = _normalised(_long(_to_pandas(df)))
    missing = [c for c in PRICE if c not in pdf.columns]
    if missing:
        # a column that holds a field in its name without being it: close_2330, 2330_close
        pivot = any(registry.field_of(c) not in (None, str(c).lower()) for c in pdf.columns)
        raise MissingColumnsError(
            f"a candles frame needs open, high, low and close (any case); missing {missing}"
            + (  # polars' download(..., layout="wide"): close_2330
                "; the frame is a pivot of several fields: plot the long frame (download's "
                "default layout)"
                if pivot
                else ""
            )
            + f"; columns available: {list(pdf.columns)}"
        )
    has_symbol = "symbol" in pdf.columns
    if symbol is not None:
        if not has_symbol:
            raise MissingColumnsError(
                f"symbol={symbol!r} given but the frame has no 'symbol' "
                f"column; columns available: {list(pdf.columns)}"
            )
        present = sorted(map(str, pdf["symbol"].unique()))
        if str(symbol) not in present:
            raise InvalidParams(
                "plot", "symbol", f"{symbol!r} is not in the frame", ", ".join(present)
            )
        pdf = pdf[pdf["symbol"].astype(str) == str(symbol)]
    chosen = list(columns) if columns is not None else [c for c in pdf.columns if c not in _BASE]
    overlays, panels = _classify(chosen, _BASE)
    show_volume = volume and "volume" in pdf.columns
    heights = [4.0] + ([1.2] if show_volume else []) + [1.5] * len(panels)
    if has_symbol:
        keys = pdf["symbol"].astype(str)
        parts = {str(k): g for k, g in pdf.groupby(keys, sort=False, observed=True)}
    else:
        parts = {"": pdf}
    if figsize is None:
        figsize = (11.0, 5.0 * len(parts) if len(parts) > 1 else 6.0)
    # fixed margins in inches, not a layout engine: constrained layout measured every tick
    # label of every panel on each save (most of the time of a 10-symbol chart)
    fig: Figure = plt.figure(figsize=figsize)
    width, height = figsize
    block = height / len(parts)
    grid = {
        "height_ratios": heights,
        "left": 0.75 / width,
        "right": 1 - 2.0 / width,  # room for the legends, outside the data
        "top": 1 - 0.4 / block,
        "bottom": 0.65 / block,
        "hspace": 0.12,
    }
    targets = [fig] if len(parts) == 1 else list(fig.subfigures(len(parts), 1, squeeze=False)[:, 0])
    windows = [_window(part, last) for part in parts.values()]
    # blocks over the same bars share the lowest block's dates, as stacked panels do
    shared = len(windows) > 1 and _same_times([w for w, _ in windows])
    # tick label sizes as the axes are made (tick_params afterwards rebuilds every tick)
    with plt.rc_context({"xtick.labelsize": 8, "ytick.labelsize": 8}):
        for i, (target, sym, (window, total)) in enumerate(
            zip(targets, parts, windows, strict=True)
        ):
            _draw(
                target,
                window,
                total,
                grid,
                show_volume,
                overlays,
                panels,
                title if len(parts) == 1 else (f"{title}: {sym}" if title else None),
                legend=i == 0,  # every block has the same lines in the same colours
                dates=not shared or i == len(windows) - 1,
            )
    return fig


def save(fig: Figure, path: str | os.PathLike[str] | IO[bytes], dpi: int = 110) -> None:
    """Write a figure as an image (the format follows the file name, e.g. ``.png``)."""
    fig.savefig(path, dpi=dpi)
