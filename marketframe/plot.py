"""Charts (matplotlib, the ``plot`` extra): candlesticks with volume and indicators.

``candles(df)`` draws any candles frame (pandas or polars; one block of panels per symbol):
price as candlesticks, volume bars below, overlay columns on the price (moving averages,
Bollinger bands) and oscillators in their own panels (RSI, KDJ, MACD). ``df.md.plot(...)``
calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from marketframe.exceptions import InvalidParams, MissingColumnsError

#: Column-name prefixes drawn in their own panel below the price, by panel.
PANELS: dict[str, tuple[str, ...]] = {
    "rsi": ("rsi",),
    "kdj": ("kdj_k", "kdj_d", "kdj_j", "k", "d", "j"),
    "macd": ("macd",),
}
#: Prefixes drawn over the price.
OVERLAYS: tuple[str, ...] = ("sma", "ema", "bb_", "bbands")

UP, DOWN = "#d62728", "#2ca02c"  # Taiwan convention: red up, green down


def _require_matplotlib() -> Any:
    try:
        import matplotlib

        if not hasattr(matplotlib, "pyplot"):
            import matplotlib.pyplot  # noqa: F401
        return matplotlib.pyplot
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("charts need matplotlib: pip install 'marketframe[plot]'") from e


def _to_pandas(df: Any) -> Any:
    if hasattr(df, "iloc"):  # pandas already
        return df
    if hasattr(df, "collect"):  # a polars LazyFrame: the chart needs the rows
        df = df.collect()
    return df.to_pandas()  # polars DataFrame or Arrow table


def _classify(columns: Sequence[str], skip: set[str]) -> tuple[list[str], dict[str, list[str]]]:
    overlays: list[str] = []
    panels: dict[str, list[str]] = {}
    for c in columns:
        if c in skip:
            continue
        low = c.lower()
        if low.startswith(OVERLAYS):
            overlays.append(c)
            continue
        for panel, prefixes in PANELS.items():
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


def _tick_labels(times: Any) -> list[str]:
    """Dates for daily bars; date and time (or just the time, within one day) for intraday."""
    ts = pd.to_datetime(pd.Series(list(times)), errors="coerce")
    if ts.isna().any():
        return [str(t)[:10] for t in times]
    intraday = bool((ts != ts.dt.normalize()).any())
    if not intraday:
        return [t.strftime("%Y-%m-%d") for t in ts]
    one_day = ts.dt.normalize().nunique() == 1
    return [t.strftime("%H:%M" if one_day else "%m-%d %H:%M") for t in ts]


def candles(
    df: Any,
    *,
    title: str | None = None,
    volume: bool = True,
    columns: Sequence[str] | None = None,
    last: int | None = None,
    symbol: str | None = None,
    figsize: tuple[float, float] | None = None,
) -> Any:
    """Draw a candlestick chart and return the matplotlib ``Figure``.

    ``columns`` picks the indicator columns to draw (default: every column whose name starts
    like an indicator's: ``sma``/``ema``/``bb_`` over the price, ``rsi``, ``kdj_*``, ``macd*``
    in panels). ``last`` keeps only the last N bars (of each symbol). A frame holding several
    symbols is drawn as one block of panels per symbol, stacked; ``symbol=`` draws only that
    one.
    """
    plt = _require_matplotlib()
    pdf = _to_pandas(df)
    missing = [c for c in ("open", "high", "low", "close") if c not in pdf.columns]
    if missing:
        raise MissingColumnsError(
            f"a candles frame needs open, high, low and close; missing {missing}; "
            f"columns available: {list(pdf.columns)}"
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
    symbols = list(dict.fromkeys(map(str, pdf["symbol"]))) if has_symbol else [""]
    chosen = list(columns) if columns is not None else [c for c in pdf.columns if c not in _BASE]
    overlays, panels = _classify(chosen, _BASE)
    show_volume = volume and "volume" in pdf.columns
    heights = [4.0] + ([1.2] if show_volume else []) + [1.5] * len(panels)
    if figsize is None:
        figsize = (10.0, 6.0 * len(symbols) if len(symbols) > 1 else 6.0)
    fig = plt.figure(figsize=figsize, layout="constrained")
    targets = [fig] if len(symbols) == 1 else list(fig.subfigures(len(symbols), 1))
    for target, sym in zip(targets, symbols, strict=True):
        part = pdf if len(symbols) == 1 else pdf[pdf["symbol"].astype(str) == sym]
        _draw(
            target,
            part,
            heights,
            show_volume,
            overlays,
            panels,
            last,
            title if len(symbols) == 1 else (f"{title}: {sym}" if title else None),
        )
    return fig


def _draw(
    target: Any,
    pdf: Any,
    heights: list[float],
    show_volume: bool,
    overlays: list[str],
    panels: dict[str, list[str]],
    last: int | None,
    title: str | None,
) -> None:
    """One symbol's price, volume and indicator panels on a figure or subfigure."""
    time_col = next((c for c in ("date", "time") if c in pdf.columns), None)
    if time_col is not None:
        pdf = pdf.sort_values(time_col, kind="stable")
    if last:
        pdf = pdf.tail(last)
    pdf = pdf.reset_index(drop=True)
    axes = target.subplots(
        len(heights), 1, sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False
    )[:, 0]
    ax = axes[0]
    x = np.arange(len(pdf))
    o, h, lo, c = (pdf[k].to_numpy(dtype=float) for k in ("open", "high", "low", "close"))
    colors = np.where(c >= o, UP, DOWN)
    ax.vlines(x, lo, h, colors=colors, linewidth=0.8)
    ax.bar(x, np.abs(c - o) + 1e-12, bottom=np.minimum(o, c), color=colors, width=0.7)
    for col in overlays:
        ax.plot(x, pdf[col].to_numpy(dtype=float), linewidth=1.0, label=col)
    if overlays:
        ax.legend(loc="upper left", fontsize=8)
    symbol = str(pdf["symbol"].iloc[0]) if "symbol" in pdf.columns and len(pdf) else ""
    ax.set_title(title or (f"{symbol} candles" if symbol else "candles"))
    row = 1
    if show_volume:
        axes[row].bar(x, pdf["volume"].to_numpy(dtype=float), color=colors, width=0.7)
        axes[row].set_ylabel("volume", fontsize=8)
        row += 1
    for panel, cols in panels.items():
        pax = axes[row]
        for col in cols:
            values = pdf[col].to_numpy(dtype=float)
            if "hist" in col:
                pax.bar(x, values, width=0.7, color="0.6", label=col)
            else:
                pax.plot(x, values, linewidth=1.0, label=col)
        if panel == "rsi":
            for level in (30, 70):
                pax.axhline(level, color="0.7", linewidth=0.6, linestyle="--")
        pax.set_ylabel(panel, fontsize=8)
        pax.legend(loc="upper left", fontsize=7)
        row += 1
    if time_col is not None and len(pdf):
        ticks = np.linspace(0, len(pdf) - 1, num=min(8, len(pdf))).astype(int)
        labels = _tick_labels(pdf[time_col].iloc[ticks])
        axes[-1].set_xticks(ticks, labels, rotation=30, fontsize=8)


def save(fig: Any, path: Any, dpi: int = 110) -> None:
    """Write a figure as an image (the format follows the file name, e.g. ``.png``)."""
    fig.savefig(path, dpi=dpi)
