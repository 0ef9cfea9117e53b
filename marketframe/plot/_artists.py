"""The drawing of one symbol's panels: candles, wicks, doji ticks and bars as one collection
each, the overlay lines, the legends, the date labels. :func:`marketframe.plot.candles`
lays the symbols out and calls :func:`_draw` for each."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from marketframe.indicators import Chart, registry

if TYPE_CHECKING:  # matplotlib is the optional ``plot`` extra: imported where it draws
    from matplotlib.axes import Axes
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure, SubFigure
    from matplotlib.ticker import MaxNLocator

Floats = NDArray[np.float64]


def _segments(arr: Floats) -> Sequence[Floats]:
    """An ``(n, k, 2)`` array of vertices as matplotlib's collections take it, one ``(k, 2)``
    array per item: their stubs ask for a Sequence, which the array is at run time."""
    return cast("Sequence[Floats]", arr)


def overlay_prefixes() -> tuple[str, ...]:
    """Column-name prefixes drawn over the price: the output columns (and the chart's
    aliases) of the indicators whose row's chart has no panel of its own."""
    return tuple(p for row in registry.rows() if row.chart.panel is None for p in _prefixes(row))


def panel_prefixes() -> dict[str, tuple[str, ...]]:
    """Column-name prefixes drawn in their own panel below the price, by panel (the rows'
    ``chart.panel``)."""
    out: dict[str, tuple[str, ...]] = {}
    for row in registry.rows():
        if row.chart.panel is not None:
            out[row.chart.panel] = out.get(row.chart.panel, ()) + _prefixes(row)
    return out


def panel_chart(panel: str) -> Chart:
    """The chart of the indicator drawn in ``panel`` (its levels and guides)."""
    return next((r.chart for r in registry.rows() if r.chart.panel == panel), Chart(panel))


def _prefixes(row: registry.Indicator) -> tuple[str, ...]:
    return (*row.outputs, *row.chart.aliases)


#: Column-name prefixes drawn in their own panel below the price, by panel: the indicators
#: of the table when the package was imported (a chart reads the table when it is drawn).
PANELS: dict[str, tuple[str, ...]] = panel_prefixes()
#: Prefixes drawn over the price (as ``PANELS``).
OVERLAYS: tuple[str, ...] = overlay_prefixes()

UP, DOWN = "#d62728", "#2ca02c"  # Taiwan convention: red up, green down
_RGBA = {UP: (0.839, 0.153, 0.157, 1.0), DOWN: (0.173, 0.627, 0.173, 1.0)}
BAND = "#8c6bb1"  # Bollinger bands: apart from the moving averages' colours
#: bars drawn by default (of each symbol): about six months of daily candles
LAST = 120
#: body width, in bars
WIDTH = 0.7
#: room above the highest high and below the lowest low, as a share of the range
PAD = 0.05
#: the price columns, as the frame may spell them (``Open``, ``CLOSE``: any case)
PRICE = ("open", "high", "low", "close")


def _tick_labels(times: pd.Series[Any]) -> list[str]:
    """Dates for daily bars; date and time (or just the time, within one day) for intraday."""
    ts = pd.to_datetime(pd.Series(list(times)), errors="coerce")
    if ts.isna().any():
        return [str(t)[:10] for t in times]
    intraday = bool((ts != ts.dt.normalize()).any())
    if not intraday:
        return [t.strftime("%Y-%m-%d") for t in ts]
    one_day = ts.dt.normalize().nunique() == 1
    return [t.strftime("%H:%M" if one_day else "%m-%d %H:%M") for t in ts]


def _column(pdf: pd.DataFrame, name: str) -> Floats:
    """A column as float64, missing values (pandas NA, nulls) as NaN."""
    return np.asarray(pd.to_numeric(pdf[name], errors="coerce"), dtype="float64")


def _rectangles(x: Floats, bottom: Floats, top: Floats) -> Floats:
    """Vertices of one rectangle per bar, ``(n, 4, 2)``, ``WIDTH`` wide, centred on ``x``."""
    w = WIDTH / 2
    verts = np.empty((len(x), 4, 2))
    verts[:, 0, 0] = verts[:, 1, 0] = x - w
    verts[:, 2, 0] = verts[:, 3, 0] = x + w
    verts[:, 0, 1] = verts[:, 3, 1] = bottom
    verts[:, 1, 1] = verts[:, 2, 1] = top
    return verts


def _candles(
    ax: Axes, x: Floats, o: Floats, h: Floats, lo: Floats, c: Floats
) -> tuple[Floats, NDArray[np.bool_]]:
    """Wicks, bodies and doji ticks as three collections; returns each bar's colour."""
    from matplotlib.collections import LineCollection, PolyCollection

    ok = ~(np.isnan(o) | np.isnan(h) | np.isnan(lo) | np.isnan(c))
    # RGBA rows, not colour names: matplotlib parses each name of an array of them
    colors = np.where((c >= o)[:, None], _RGBA[UP], _RGBA[DOWN])
    xs, cs = x[ok], colors[ok]
    wicks = np.stack([np.column_stack([xs, lo[ok]]), np.column_stack([xs, h[ok]])], axis=1)
    ax.add_collection(
        LineCollection(_segments(wicks), colors=cs, linewidths=0.8, zorder=2), autolim=False
    )
    body = ok & (o != c)
    ax.add_collection(
        PolyCollection(
            _segments(_rectangles(x[body], np.minimum(o, c)[body], np.maximum(o, c)[body])),
            facecolors=colors[body],
            edgecolors=colors[body],
            linewidths=0.5,
            zorder=3,
        ),
        autolim=False,
    )
    doji = ok & (o == c)  # no body: a tick across the wick, so the bar is not lost
    if doji.any():
        w = WIDTH / 2
        ticks = np.stack(
            [np.column_stack([x[doji] - w, c[doji]]), np.column_stack([x[doji] + w, c[doji]])],
            axis=1,
        )
        ax.add_collection(
            LineCollection(_segments(ticks), colors=colors[doji], linewidths=1.2, zorder=3),
            autolim=False,
        )
    return colors, ok


def _bars(
    ax: Axes, x: Floats, values: Floats, colors: Floats | str, label: str | None = None
) -> PolyCollection:
    """Bars from 0 to ``values`` as one PolyCollection (volume, MACD histogram); the y
    limits take them in, with the lines already drawn on the axes."""
    from matplotlib.collections import PolyCollection

    ok = ~np.isnan(values)
    if isinstance(colors, np.ndarray):
        colors = colors[ok]
    bars = PolyCollection(
        _segments(_rectangles(x[ok], np.zeros(ok.sum()), values[ok])),
        facecolors=colors,
        edgecolors="none",
        label=label,
    )
    ax.add_collection(bars, autolim=False)
    lows, highs = [0.0], [0.0]
    if ok.any():
        lows.append(float(values[ok].min()))
        highs.append(float(values[ok].max()))
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata(), dtype="float64")
        if np.isfinite(y).any():
            lows.append(float(np.nanmin(y)))
            highs.append(float(np.nanmax(y)))
    top, bottom = max(highs), min(lows)
    span = (top - bottom) or 1.0
    ax.set_ylim(bottom - (PAD * span if bottom < 0 else 0.0), top + PAD * span)
    return bars


def _same(a: Floats, b: Floats) -> bool:
    """Whether two lines would be drawn on top of each other (equal where both exist)."""
    both = ~(np.isnan(a) | np.isnan(b))
    return bool(both.any()) and bool(np.allclose(a[both], b[both], rtol=1e-9, atol=0.0))


def _overlays(ax: Axes, x: Floats, pdf: pd.DataFrame, overlays: list[str]) -> None:
    """Moving averages and bands over the price. A line equal to one already drawn (the
    Bollinger middle is the SMA of the same period) is dashed and labelled ``(= other)``,
    so neither hides the other; the bands are shaded between upper and lower."""
    drawn: dict[str, Floats] = {}
    bands = {c.lower().split("_")[1]: c for c in overlays if c.lower().startswith("bb_")}
    if "upper" in bands and "lower" in bands:
        ax.fill_between(
            x,
            _column(pdf, bands["lower"]),
            _column(pdf, bands["upper"]),
            color=BAND,
            alpha=0.07,
            linewidth=0,
            zorder=1,
        )
    for col in overlays:
        values = _column(pdf, col)
        twin = next((name for name, v in drawn.items() if _same(values, v)), None)
        style: dict[str, Any] = {"linewidth": 1.0, "zorder": 4}
        if col.lower().startswith("bb_"):
            style.update(color=BAND, linewidth=0.8)
            if "middle" in col.lower():
                style.update(linestyle=(0, (4, 2)))
        if twin is not None:
            style.update(linestyle=(0, (2, 3)), linewidth=1.6)
        ax.plot(x, values, label=col if twin is None else f"{col} (= {twin})", **style)
        drawn[col] = values


def _legend(ax: Axes, fontsize: int) -> None:
    """A legend outside the plot, to its right: it never covers a bar."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.005, 1.0),
            fontsize=fontsize,
            frameon=False,
            borderaxespad=0.0,
        )


@functools.cache
def _inside() -> type[MaxNLocator]:
    """``MaxNLocator`` keeping only the ticks inside the view: it also returns one tick beyond
    each end (for round numbers), and matplotlib builds a tick object, with its label, for
    every location on each save, drawn or not."""
    from matplotlib.ticker import MaxNLocator

    class Inside(MaxNLocator):
        def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
            locs = np.asarray(super().tick_values(vmin, vmax))  # an array already
            lo, hi = min(vmin, vmax), max(vmin, vmax)
            # the array, as MaxNLocator returns it (the stubs' Sequence, at run time)
            return cast("Sequence[float]", locs[(locs >= lo) & (locs <= hi)])

    return Inside


def _time_column(pdf: pd.DataFrame) -> str | None:
    return next((c for c in ("date", "time") if c in pdf.columns), None)


def _window(pdf: pd.DataFrame, last: int | None) -> tuple[pd.DataFrame, int]:
    """The bars drawn of one symbol (the last ``last`` in time order) and how many it has."""
    time_col = _time_column(pdf)
    if time_col is not None:
        pdf = pdf.sort_values(time_col, kind="stable")
    total = len(pdf)
    if last is not None:
        pdf = pdf.tail(last)
    return pdf.reset_index(drop=True), total


def _same_times(windows: list[pd.DataFrame]) -> bool:
    """Whether every window has the same bar times (then only the lowest block is dated)."""
    cols = [_time_column(w) for w in windows]
    if cols[0] is None or len(set(cols)) != 1:
        return False
    first = windows[0][cols[0]].to_numpy()
    return all(
        len(w) == len(first) and bool((w[cols[0]].to_numpy() == first).all()) for w in windows[1:]
    )


def _draw(
    target: Figure | SubFigure,
    pdf: pd.DataFrame,
    total: int,
    grid: dict[str, Any],
    show_volume: bool,
    overlays: list[str],
    panels: dict[str, list[str]],
    title: str | None,
    legend: bool = True,
    dates: bool = True,
) -> None:
    """One symbol's price, volume and indicator panels on a figure or subfigure: ``pdf`` is
    its window (:func:`_window`) of ``total`` bars; ``dates=False`` leaves the time axis
    out (the block below has the same dates)."""
    time_col = _time_column(pdf)
    from matplotlib.ticker import FixedLocator

    # not sharex: shared axes each build the ticks of the bottom one; here only the bottom
    # panel has x ticks, and every panel the same x limits (set below)
    axes = target.subplots(len(grid["height_ratios"]), 1, gridspec_kw=grid, squeeze=False)[:, 0]
    for i, a in enumerate(axes):  # few y ticks: each label is text to lay out on every save
        a.yaxis.set_major_locator(_inside()(nbins=4 if i == 0 else 2))
        # fixed places for titles and axis labels: placing them automatically measures
        # every tick label of every panel on each save
        a.set_title("", y=1.0)
        a.yaxis.set_label_coords(-0.055, 0.5)
        if i < len(axes) - 1 or not dates:  # no x axis to draw: it would measure no labels
            a.xaxis.set_visible(False)
    ax = axes[0]
    n = len(pdf)
    x = np.arange(n, dtype="float64")
    o, h, lo, c = (_column(pdf, k) for k in PRICE)
    colors, ok = _candles(ax, x, o, h, lo, c)
    _overlays(ax, x, pdf, overlays)
    if ok.any():  # the candles and the lines over them, with room above and below
        top, bottom = float(np.nanmax(h[ok])), float(np.nanmin(lo[ok]))
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), dtype="float64")
            if np.isfinite(y).any():
                top, bottom = max(top, float(np.nanmax(y))), min(bottom, float(np.nanmin(y)))
        span = (top - bottom) or abs(top) or 1.0
        ax.set_ylim(bottom - PAD * span, top + PAD * span)
    for a in axes:
        a.set_xlim(-1.0, max(n, 1))
    if legend:
        _legend(ax, 8)
    symbol = str(pdf["symbol"].iloc[0]) if "symbol" in pdf.columns and n else ""
    head = title or (f"{symbol} candles" if symbol else "candles")
    if n < total:
        head += f" (last {n:,} of {total:,} bars; last=None for all)"
    ax.set_title(head, y=1.0, pad=6.0)
    row = 1
    if show_volume:
        from matplotlib.ticker import EngFormatter

        _bars(axes[row], x, _column(pdf, "volume"), colors)
        axes[row].yaxis.set_major_formatter(EngFormatter(sep=""))  # 60M, not a 1e8 offset
        axes[row].set_ylabel("volume", fontsize=8)
        row += 1
    for panel, cols in panels.items():
        pax = axes[row]
        hist = [col for col in cols if "hist" in col]
        for col in cols:  # lines first: the histogram's limits take them in
            if col not in hist:
                pax.plot(x, _column(pdf, col), linewidth=1.0, label=col)
        for col in hist:
            _bars(pax, x, _column(pdf, col), "0.6", label=col)
        chart = panel_chart(panel)
        if chart.guides:
            # the guides as one collection in data units across the window (axhline's
            # axes-spanning transform cost more to place than the panel's lines)
            from matplotlib.collections import LineCollection

            left, right = -1.0, float(max(n, 1))
            guides = [[(left, float(v)), (right, float(v))] for v in chart.levels]
            pax.add_collection(
                LineCollection(guides, colors="0.7", linewidths=0.6, linestyles="--")
            )
        if chart.levels:
            pax.set_yticks(list(chart.levels))
        pax.set_ylabel(panel, fontsize=8)
        if legend:
            _legend(pax, 7)
        row += 1
    if time_col is not None and n and dates:
        ticks = np.linspace(0, n - 1, num=min(6, n)).astype(int)
        labels = _tick_labels(pdf[time_col].iloc[ticks])
        axes[-1].xaxis.set_major_locator(FixedLocator(ticks.tolist()))
        axes[-1].set_xticks(ticks, labels, rotation=30, fontsize=8, ha="right")
