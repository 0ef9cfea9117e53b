"""Charts (matplotlib, the ``plot`` extra): candlesticks with volume and indicators.

``candles(df)`` draws any candles frame (pandas or polars, one symbol): price as candlesticks,
volume bars below, overlay columns on the price (moving averages, Bollinger bands) and
oscillators in their own panels (RSI, KDJ, MACD). ``df.md.plot(...)`` calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

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


def candles(df: Any, *, title: str | None = None, volume: bool = True,
            columns: Sequence[str] | None = None, last: int | None = None,
            figsize: tuple[float, float] = (10.0, 6.0)) -> Any:
    """Draw a candlestick chart of one symbol and return the matplotlib ``Figure``.

    ``columns`` picks the indicator columns to draw (default: every column whose name starts
    like an indicator's: ``sma``/``ema``/``bb_`` over the price, ``rsi``, ``kdj_*``, ``macd*``
    in panels). ``last`` keeps only the last N bars. A frame holding several symbols must be
    filtered first (the error lists them).
    """
    plt = _require_matplotlib()
    pdf = _to_pandas(df)
    missing = [c for c in ("open", "high", "low", "close") if c not in pdf.columns]
    if missing:
        raise ValueError(f"a candles frame needs open, high, low and close; missing "
                         f"{missing}; columns available: {list(pdf.columns)}")
    if "symbol" in pdf.columns and pdf["symbol"].nunique() > 1:
        raise ValueError("the frame holds several symbols "
                         f"({sorted(map(str, pdf['symbol'].unique()))}); filter one first")
    time_col = next((c for c in ("date", "time") if c in pdf.columns), None)
    if time_col is not None:
        pdf = pdf.sort_values(time_col)
    if last:
        pdf = pdf.tail(last)
    pdf = pdf.reset_index(drop=True)
    base = {"open", "high", "low", "close", "volume", "turnover", "change", "average", "date",
            "time", "symbol", "type", "exchange", "market", "timeframe", "transaction"}
    chosen = list(columns) if columns is not None else [c for c in pdf.columns if c not in base]
    overlays, panels = _classify(chosen, base)
    show_volume = volume and "volume" in pdf.columns
    heights = [4.0] + ([1.2] if show_volume else []) + [1.5] * len(panels)
    fig, axes = plt.subplots(len(heights), 1, sharex=True, figsize=figsize,
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    axes = axes[:, 0]
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
        labels = [str(pdf[time_col].iloc[i])[:10] for i in ticks]
        axes[-1].set_xticks(ticks, labels, rotation=30, fontsize=8)
    fig.tight_layout()
    return fig


def save(fig: Any, path: Any, dpi: int = 110) -> None:
    """Write a figure as an image (the format follows the file name, e.g. ``.png``)."""
    fig.savefig(path, dpi=dpi)
