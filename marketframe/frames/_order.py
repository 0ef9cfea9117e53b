"""The time order of a frame's rows, per symbol: found cheaply, sorted only when needed.

Indicators are defined along time. Candles arrive newest first, and a user's frame can be
in any order, so the accessors never trust the row order when the frame says what the
time is (a time column, or a pandas ``DatetimeIndex``). ``layout`` takes integer symbol
codes and a numeric time key and returns the rows' (symbol, time) order: ``None`` when the
rows are already in it (checked in one vectorized O(n) pass, the common case for frames
from our loaders and store), else a stable sort. The results are put back on the original
rows by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from marketframe.exceptions import InvalidParams, UnorderedRowsError

#: Column names taken as the time of a bar when ``date=`` is left at its default.
TIME_COLUMNS: tuple[str, ...] = ("date", "time", "timestamp", "datetime", "ts")

HINT = (
    "pass date=<time column>, sort the rows ascending in time, or pass date=None to declare "
    "that the row order is the time order"
)


@dataclass(frozen=True)
class Layout:
    """Rows in (symbol, time) order: ``order`` gathers them (None: already so) and
    ``starts`` holds the first sorted row of each symbol (None: one symbol)."""

    size: int
    order: NDArray[np.intp] | None
    starts: NDArray[np.intp] | None

    @property
    def lengths(self) -> NDArray[np.intp] | None:
        if self.starts is None:
            return None
        return np.diff(np.append(self.starts, self.size))


def _boundaries(codes: NDArray[np.integer]) -> NDArray[np.intp]:
    change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.intp)


def in_order(
    starts: NDArray[np.intp],
    first_codes: NDArray[np.integer],
    drops: NDArray[np.intp] | None,
) -> bool:
    """Rows are in (symbol, time) order iff no symbol has two runs of rows (the codes at the
    run starts are distinct) and time goes back (``drops``: rows whose time is earlier
    than the previous row's) only where a new symbol starts."""
    if not len(starts):
        return True
    if len(starts) > int(first_codes.max()) - int(first_codes.min()) + 1:
        return False  # more runs than codes: some symbol has two runs (no sort needed)
    if len(np.unique(first_codes)) != len(starts):
        return False
    if drops is None or not drops.size:
        return True
    at = np.searchsorted(starts, drops)
    return bool(np.all((at < len(starts)) & (starts[np.minimum(at, len(starts) - 1)] == drops)))


def finish(size: int, order: NDArray[np.intp] | None, starts: NDArray[np.intp]) -> Layout:
    return Layout(size, order, starts if len(starts) > 1 else None)


_NAT = np.iinfo(np.int64).min


@dataclass(frozen=True)
class NatKey:
    """Datetime64 times as int64, not yet checked for NaT (the lowest int64)."""

    key: NDArray[np.int64]
    name: str


def _check_nat(k: NatKey, drops: NDArray[np.intp]) -> None:
    # a run of NaT starts at row 0 or where the time drops: O(drops) rather than a pass
    key = k.key
    if key[0] == _NAT or bool(np.any(key[drops] == _NAT)):
        check_no_missing_times(int(np.count_nonzero(key == _NAT)), k.name)


def layout(
    size: int, codes: NDArray[np.integer] | None, key: NDArray[Any] | NatKey | None
) -> Layout:
    """The (symbol, time) order of ``size`` rows, in O(n) vectorized steps when it holds.

    ``codes``: a symbol code per row, None for one symbol. ``key``: a numeric time per row
    (ties keep their row order), None to take the row order as time order.
    """
    if size == 0:
        return Layout(0, None, None)
    nat, times = (key, key.key) if isinstance(key, NatKey) else (None, key)
    drops = None if times is None else np.flatnonzero(times[1:] < times[:-1]) + 1
    if nat is not None and drops is not None:
        _check_nat(nat, drops)
    if codes is None:
        if drops is None or not drops.size:
            return Layout(size, None, None)
        assert times is not None
        return Layout(size, np.argsort(times, kind="stable"), None)
    starts = _boundaries(codes)
    if in_order(starts, codes[starts], drops):
        return finish(size, None, starts)
    return finish(size, *_sort(codes, times, drops))


def _small(values: NDArray[Any]) -> NDArray[np.integer] | None:
    """``values`` as int16 codes (or None if they do not fit): numpy sorts those stably
    with a radix sort, far faster than a comparison sort on two keys."""
    if values.dtype.itemsize <= 2 and values.dtype.kind in "iu":
        return values
    ranks, uniques = pd.factorize(values, sort=True)
    return ranks.astype(np.int16) if len(uniques) < 1 << 15 else None


def _sort(
    codes: NDArray[np.integer], key: NDArray[Any] | None, drops: NDArray[np.intp] | None
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The stable (symbol, time) order, and the symbols' first rows in it."""
    small_codes = _small(codes)
    if drops is None or not drops.size:
        # time already ascending over all rows (e.g. date-major: every symbol's day 1,
        # then day 2 ...): a stable sort by symbol alone keeps it
        order = np.argsort(codes if small_codes is None else small_codes, kind="stable")
    else:
        assert key is not None
        small_key = _small(key)
        if small_codes is None or small_key is None:
            order = np.lexsort((key, codes))  # last key is primary; lexsort is stable
        else:  # two stable radix passes: by time, then by symbol
            by_time = np.argsort(small_key, kind="stable")
            order = by_time[np.argsort(small_codes[by_time], kind="stable")]
    return order, _boundaries(codes[order])


def arrow_time_key(arr: pa.ChunkedArray[Any]) -> NDArray[np.integer]:
    """The integers under an Arrow date/time/timestamp/duration column (zero-copy view)."""
    width = pa.int32() if arr.type.bit_width == 32 else pa.int64()
    return np.asarray(arr.combine_chunks().view(width).to_numpy(zero_copy_only=False))


def check_no_missing_times(missing: int, name: str) -> None:
    if missing:
        raise InvalidParams(
            "md",
            "date",
            f"names the time column {name!r}, which has {missing} missing value(s), so the "
            f"bars cannot be put in time order; drop or fill those rows first",
        )


def not_times(name: str, why: str, convert: str) -> InvalidParams:
    return InvalidParams(
        "md",
        "date",
        f"names {name!r}, whose values are not dates or times ({why}); convert it with "
        f"{convert}, or {HINT}",
    )


def unordered(what: str) -> UnorderedRowsError:
    return UnorderedRowsError(
        "md",
        "date",
        f"cannot be found: the frame has no time column ({', '.join(TIME_COLUMNS)}) or "
        f"DatetimeIndex, and {what}, so indicators along the row order would be silently "
        f"wrong. Fix: {HINT}",
    )
