"""The live engine's data (``engine``): a bar's layout, a trade into a bar, trade times in, and
the rows out: steps leave their rows as blocks of columns (``_Rows``), joined into one frame
with its blocks handed to pandas as they are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from marketframe._time import TZ_NAME
from marketframe.indicators import stateful as sf

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
    # text as ISO 8601 (what the service and pandas write): inferring a format per call
    # warned a user about the guess, and a guess can read a day first
    text = col.dtype == object or pd.api.types.is_string_dtype(col.dtype)
    t = pd.to_datetime(col, format="ISO8601") if text else pd.to_datetime(col)
    if t.dt.tz is None:
        t = t.dt.tz_localize(TZ_NAME)
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
    OHLCV, each indicator output in spec order) and the rows' two flags (each one for all
    the rows, or one per row)."""

    codes: np.ndarray
    block: np.ndarray
    final: bool | np.ndarray
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
    row["volume"] = None if np.isnan(row["volume"]) else int(row["volume"])
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
            block = np.concatenate([c.block for c in chunks], axis=1)
        else:
            codes, block = np.empty(0, dtype=np.intp), np.empty((width, 0))
        n = len(codes)
        flags = np.empty((2, n), dtype=bool)
        if len(chunks) == 1:
            flags[0], flags[1] = chunks[0].final, chunks[0].revised
        elif chunks:
            for k, flag in enumerate(("final", "revised")):
                each = [np.broadcast_to(getattr(c, flag), c.codes.shape) for c in chunks]
                flags[k] = np.concatenate(each)
        us = block[0].astype(np.int64).view("datetime64[us]")
        time = pd.DatetimeIndex(us, tz="UTC").tz_convert(TZ_NAME).array
        sym = self._symbols(codes)
        floats = block[1:]
        volume = _volume(floats[4])
        if blocks and self._create is not None:
            parts = [
                (sym, np.array([0])),
                (time, np.array([1])),
                (floats[:4], np.arange(2, 6)),  # open..close
                (volume, np.array([6])),
                (flags, np.array([width + 1, width + 2])),
            ]
            if len(floats) > 5:  # the indicators' outputs
                parts.append((floats[5:], np.arange(7, 2 + len(floats))))
            out: pd.DataFrame = self._create(parts, index=pd.RangeIndex(n), columns=self._index)
            return out
        data: dict[str, Any] = {"symbol": sym, "time": time}
        data.update(zip(self.columns[2:-2], floats, strict=True))
        data["volume"] = volume
        data["is_final"], data["revised"] = flags
        return pd.DataFrame(data, columns=self.columns, copy=False)


def _volume(vals: np.ndarray) -> Any:
    """A bar's volume (a sum of trade sizes, carried as a float in the block) as the
    documented nullable ``Int64``; a history bar without one stays null."""
    missing = np.isnan(vals)
    return pd.arrays.IntegerArray(np.where(missing, 0, vals).astype(np.int64), missing)


def _create() -> Any:
    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:  # pandas < 3
        return None
    return create_dataframe_from_blocks
