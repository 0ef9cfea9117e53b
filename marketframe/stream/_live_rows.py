"""The live engine's data (``_live``): a bar's layout, a trade into a bar, trade times in, and
the rows out: steps leave their rows as blocks of columns (``_Rows``), joined into one frame
with its blocks handed to pandas as they are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from marketframe.indicators import stateful as sf

_TZ = "Asia/Taipei"
# a bar: time (start, epoch us), open, high, low, close, volume, and the serials of its
# first and last trades (a late trade opens or closes it only by its serial; NaN: history)
_W = 8
# a step's block of rows: the bar's time..volume, then the indicators' outputs
_HEAD = 6
_BASE = ["symbol", "time", "open", "high", "low", "close", "volume"]


def _epoch_us(col: pd.Series[Any]) -> Any:
    """Trade or candle times as epoch microseconds (int64 numpy); naive times are Taipei's."""
    dtype = col.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):  # the stream's: read as they are, no parsing
        return col.to_numpy(dtype="datetime64[us]").view(np.int64)
    t = pd.to_datetime(col)
    if t.dt.tz is None:
        t = t.dt.tz_localize(_TZ)
    return t.dt.as_unit("us").astype("int64").to_numpy()


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


class _Rows(NamedTuple):
    """Rows out, as columns: symbol indices, a ``(_HEAD + outputs, rows)`` float block (time,
    OHLCV, each indicator output in spec order) and the rows' two flags."""

    codes: np.ndarray
    block: np.ndarray
    final: bool
    revised: bool


def _chunk(
    codes: Any, block: np.ndarray, which: Any = None, *, final: bool, revised: bool
) -> _Rows:
    """Rows ``which`` (None: all) of a step; the block the step made, kept as it is when all
    are taken."""
    codes = np.asarray(codes, dtype=np.intp)
    if which is not None and len(which) != len(codes):
        codes, block = codes[which], block[:, which]
    return _Rows(codes, block, final, revised)


def _row(
    specs: Sequence[sf.IndicatorSpec], sym: str, block: np.ndarray, j: int, *, final: bool
) -> dict[str, Any]:
    """Column ``j`` of a step's block as one row (a dict)."""
    vals = block[:, j].tolist()
    row: dict[str, Any] = {"symbol": sym, "time": int(vals[0])}
    names = _BASE[2:] + [name for sp in specs for name in sp.names]
    row.update(zip(names, vals[1:], strict=True))
    row["is_final"] = final
    row["revised"] = False
    return row


class _Out:
    """Builds the frames out: the symbol column from a cached ``str`` array of the names
    (taken once per distinct set of symbols in a row, then copied: no strings converted per
    batch), the float columns as one block."""

    def __init__(self, symbols: Sequence[str], columns: list[str]) -> None:
        self.names = pd.array(np.array(list(symbols), dtype=object), dtype=str)
        self.columns = _BASE + columns + ["is_final", "revised"]
        self._index = pd.Index(self.columns)
        self._codes: np.ndarray | None = None
        self._taken: Any = None
        self._create = _create()

    def _symbols(self, codes: np.ndarray) -> Any:
        last = self._codes
        if last is None or last.shape != codes.shape or not bool((last == codes).all()):
            self._codes, self._taken = codes.copy(), self.names.take(codes)
        return self._taken.copy()  # an Arrow string array's copy shares its immutable buffers

    def frame(self, chunks: list[_Rows], *, blocks: bool = True) -> pd.DataFrame:
        """The chunks' rows as one frame, in their order (``blocks=False``: through the
        ``DataFrame`` constructor, the path pandas < 3 takes)."""
        width = len(self.columns) - 3
        if len(chunks) == 1:
            codes, block = chunks[0].codes, chunks[0].block
        elif chunks:
            codes = np.concatenate([c.codes for c in chunks])
            block = _joined([c.block for c in chunks])
        else:
            codes, block = np.empty(0, dtype=np.intp), np.empty((width, 0))
        n = len(codes)
        flags = np.empty((2, n), dtype=bool)
        if chunks:
            sizes = [len(c.codes) for c in chunks]
            flags[0] = np.repeat([c.final for c in chunks], sizes)
            flags[1] = np.repeat([c.revised for c in chunks], sizes)
        us = block[0].astype(np.int64).view("datetime64[us]")
        time = pd.DatetimeIndex(us, tz="UTC").tz_convert(_TZ).array
        sym = self._symbols(codes)
        floats = block[1:]
        if blocks and self._create is not None:
            parts = [
                (sym, np.array([0])),
                (time, np.array([1])),
                (floats, np.arange(2, 2 + len(floats))),
                (flags, np.array([width + 1, width + 2])),
            ]
            out: pd.DataFrame = self._create(parts, index=pd.RangeIndex(n), columns=self._index)
            return out
        data: dict[str, Any] = {"symbol": sym, "time": time}
        data.update(zip(self.columns[2:-2], floats, strict=True))
        data["is_final"], data["revised"] = flags
        return pd.DataFrame(data, columns=self.columns, copy=False)


def _joined(blocks: list[np.ndarray]) -> np.ndarray:
    """Blocks side by side: the array they are slices of when they tile it in order (the
    passes of one step), else a concatenation."""
    base = blocks[0].base
    if isinstance(base, np.ndarray) and base.ndim == 2 and base.dtype == np.float64:
        at = base.ctypes.data
        for b in blocks:
            if b.base is not base or b.ctypes.data != at or b.shape[0] != base.shape[0]:
                break
            at += b.shape[1] * base.itemsize
        else:
            if at == base.ctypes.data + base.shape[1] * base.itemsize:
                return base
    return np.concatenate(blocks, axis=1)


def _create() -> Any:
    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:  # pandas < 3
        return None
    return create_dataframe_from_blocks
