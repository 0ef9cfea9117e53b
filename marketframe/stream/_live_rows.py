"""The live engine's data (``_live``): a bar's layout, a trade into a bar, trade times in, and
the rows out, built as columns and joined into one frame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from marketframe.indicators import stateful as sf

_TZ = "Asia/Taipei"
# a bar: time (start, epoch us), open, high, low, close, volume, and the serials of its
# first and last trades (a late trade opens or closes it only by its serial; NaN: history)
_W = 8


def _epoch_us(col: pd.Series[Any]) -> pd.Series[Any]:
    t = pd.to_datetime(col)
    if t.dt.tz is None:
        t = t.dt.tz_localize(_TZ)
    return t.dt.as_unit("us").astype("int64")


def _add(bar: list[float], price: float, size: float, serial: float) -> None:
    """A trade into a bar. A late (backfilled) trade is placed by its serial: it opens the
    bar only if it came before the bar's first trade, closes it only if after its last."""
    bar[2] = max(bar[2], price)
    bar[3] = min(bar[3], price)
    bar[5] += size
    if serial < bar[6]:
        bar[1], bar[6] = price, serial
    if not serial < bar[7]:
        bar[4], bar[7] = price, serial


def _chunk(
    specs: Sequence[sf.IndicatorSpec],
    syms: Any,
    rows: np.ndarray,
    res: list[Any],
    which: Any,
    peek: bool,
    revised: bool = False,
) -> dict[str, Any]:
    """Rows ``which`` of a step as columns (no per-row Python objects)."""
    idx = np.asarray(which, dtype=np.intp)
    sel = rows[idx]
    cols: dict[str, Any] = {"symbol": np.asarray(syms, dtype=object)[idx]}
    cols["time"] = sel[:, 0].astype(np.int64)
    for j, name in enumerate(("open", "high", "low", "close", "volume"), 1):
        cols[name] = sel[:, j]
    for sp, r in zip(specs, res, strict=True):
        parts = r if isinstance(r, tuple) else (r,)
        for name, p in zip(sp.names, parts, strict=True):
            cols[name] = np.asarray(p)[0, idx]
    cols["is_final"] = np.full(len(idx), not peek)
    cols["revised"] = np.full(len(idx), revised)
    return cols


def _row(
    specs: Sequence[sf.IndicatorSpec], sym: str, bar: list[float], res: list[Any], t: int,
    col: int, *, final: bool, revised: bool,
) -> dict[str, Any]:  # fmt: skip
    row: dict[str, Any] = {
        "symbol": sym,
        "time": int(bar[0]),
        "open": bar[1],
        "high": bar[2],
        "low": bar[3],
        "close": bar[4],
        "volume": bar[5],
    }
    for sp, r in zip(specs, res, strict=True):
        parts = r if isinstance(r, tuple) else (r,)
        for name, p in zip(sp.names, parts, strict=True):
            row[name] = float(p[t, col])
    row["is_final"] = final
    row["revised"] = revised
    return row


def _one(row: dict[str, Any]) -> dict[str, Any]:
    """A row as a chunk of one."""
    return {k: [v] for k, v in row.items()}


def _frame(chunks: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """Chunks of columns (a step's rows, or one row) as one frame, in their order;
    ``columns``: the indicators' output columns."""
    cols = ["symbol", "time", "open", "high", "low", "close", "volume"]
    cols += columns + ["is_final", "revised"]
    data: dict[str, Any] = {}
    for c in cols:
        parts = [np.asarray(ch[c]) for ch in chunks]
        data[c] = np.concatenate(parts) if parts else np.empty(0)
    # built with their dtypes (the same whether or not the frame has rows)
    # the symbol column converted once (str dtype), not per chunk or twice
    data["symbol"] = pd.array(data["symbol"].astype(object), dtype=str)
    for c in cols[2:-2]:
        data[c] = data[c].astype(np.float64, copy=False)
    for c in cols[-2:]:
        data[c] = data[c].astype(bool, copy=False)
    t = pd.DatetimeIndex(data["time"].astype("int64").astype("datetime64[us]"), tz="UTC")
    data["time"] = t.tz_convert(_TZ)
    return pd.DataFrame(data, columns=cols, copy=False)
