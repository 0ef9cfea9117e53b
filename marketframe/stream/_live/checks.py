"""The checks of the live engine's input, in one place: the arguments of
``Stream.indicators`` and of ``LiveIndicators``, the trades ``feed`` takes, the files
``load`` reads and whether a checkpoint fits the call that resumes from it. Each mistake is
an :class:`~marketframe.exceptions.InvalidParams` (or the fitting error of that tree) naming
the argument, column or file, raised before anything is changed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from marketframe.exceptions import InvalidParams, InvalidParamType, MissingColumnsError
from marketframe.indicators import stateful as sf

from .rows import _epoch_us

#: the columns of a trades frame, with the numbers' types (``is_trial``, ``backfilled``:
#: optional)
TRADE_COLUMNS = ("symbol", "time", "price", "size", "serial")
_NUMBERS = (("price", np.float64), ("size", np.float64), ("serial", np.float64))
#: a trade stamped this far past the machine's clock is refused: no exchange runs ahead
_AHEAD_US = 86_400_000_000


def check_symbols(symbols: object, where: str) -> list[str]:
    """The engine's symbols: a list (or tuple) of distinct symbol strings, not one bare
    string (which would be read as its characters)."""
    from marketframe.endpoints import symbol_list

    if isinstance(symbols, str) or not isinstance(symbols, list | tuple):
        raise InvalidParamType(
            where,
            "symbols",
            f"has value {symbols!r} of type {type(symbols).__name__}",
            "a list of symbol strings, like ['2330']",
        )
    syms = symbol_list(symbols, where)
    if len(syms) != len(symbols):
        twice = sorted({s for s in syms if list(symbols).count(s) > 1})
        raise InvalidParams(where, "symbols", f"repeats {', '.join(twice)}", "distinct symbols")
    return syms


def check_timeframe(timeframe: object, where: str, *, text: bool) -> int:
    """A timeframe of minutes the service's candles have: an int (``text``: or its string,
    as ``Stream.indicators`` takes it)."""
    from marketframe.endpoints import MINUTE_TIMEFRAMES

    kinds = (str, int) if text else (int,)
    ok = isinstance(timeframe, kinds) and not isinstance(timeframe, bool)
    if not ok or str(timeframe) not in MINUTE_TIMEFRAMES:
        shown = ", ".join(MINUTE_TIMEFRAMES if text else [f"{m}" for m in MINUTE_TIMEFRAMES])
        raise InvalidParams(
            where,
            "timeframe",
            f"has value {timeframe!r}",
            shown + ("" if text else " (minutes, an int)"),
        )
    return int(str(timeframe))


def check_specs(spec: object, where: str) -> list[sf.IndicatorSpec]:
    """The indicators: one (a name like ``"rsi"`` or an ``IndicatorSpec``) or a list of
    them, none twice."""
    if isinstance(spec, str | sf.IndicatorSpec):
        items: list[Any] = [spec]
    elif isinstance(spec, Iterable) and not isinstance(spec, bytes | Mapping):
        items = list(spec)
    else:
        raise InvalidParamType(
            where, "spec", f"has value {spec!r}", "an indicator name, a spec, or a list of them"
        )
    if not items:
        raise InvalidParams(where, "spec", "is empty", "one or more indicators")
    specs = []
    for s in items:
        if isinstance(s, sf.IndicatorSpec):
            specs.append(s)
        elif isinstance(s, str):
            specs.append(sf.spec(s))
        else:
            raise InvalidParamType(
                where, "spec", f"holds {s!r}", "indicator names or IndicatorSpec objects"
            )
    names = [n for sp in specs for n in sp.names]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidParams(where, "spec", f"gives {', '.join(twice)} twice", "distinct indicators")
    return specs


def check_trades(
    trades: object, where: str = "LiveIndicators.feed"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A trades frame's times (epoch us), prices, sizes and serials, after checking every
    row: the columns there, times that parse and are not past tomorrow, finite prices
    above zero, finite sizes not below zero, whole serials not below zero."""
    if not isinstance(trades, pd.DataFrame):
        raise InvalidParamType(
            where, "trades", f"is a {type(trades).__name__}", "a pandas DataFrame of trades"
        )
    missing = [c for c in TRADE_COLUMNS if c not in trades.columns]
    if missing:
        raise MissingColumnsError(
            f"{where}: the trades lack the column(s) {', '.join(missing)}; they have "
            f"{', '.join(map(str, trades.columns)) or 'none'} (needed: {', '.join(TRADE_COLUMNS)})"
        )
    try:
        times = np.asarray(_epoch_us(trades["time"]))
    except (ValueError, TypeError, OverflowError) as err:
        raise InvalidParams(
            where, "time", f"does not parse as times ({str(err).splitlines()[0]})", "timestamps"
        ) from None
    if times.dtype.kind != "i" or (times == np.iinfo(np.int64).min).any():
        raise InvalidParams(where, "time", "has a missing time", "timestamps")
    ahead = time.time_ns() // 1000 + _AHEAD_US
    if len(times) and int(times.max()) > ahead:
        at = int(np.argmax(times))
        raise InvalidParams(
            where,
            "time",
            f"has {trades['time'].iloc[at]} (row {at}), after tomorrow",
            "times up to a day past the machine's clock",
        )
    cols = []
    for name, dtype in _NUMBERS:
        try:
            cols.append(trades[name].to_numpy(dtype=dtype))
        except (ValueError, TypeError) as err:
            raise InvalidParams(where, name, f"is not numeric ({err})", "numbers") from None
    price, size, serial = cols
    rules = (
        ("price", price, np.isfinite(price) & (price > 0), "finite prices above 0"),
        ("size", size, np.isfinite(size) & (size >= 0), "finite sizes of 0 or more"),
        (
            "serial",
            serial,
            np.isfinite(serial) & (serial >= 0) & (serial == np.round(serial)),
            "whole numbers of 0 or more",
        ),
    )
    for name, values, good, allowed in rules:
        if not bool(good.all()):
            at = int(np.flatnonzero(~good)[0])
            raise InvalidParams(where, name, f"has {values[at]!r} (row {at})", allowed)
    return times, price, size, serial.astype(np.int64)


def check_every(name: str, value: object, where: str, allowed: str) -> float:
    """A positive number (seconds, or rounds): not a bool, not NaN, not 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidParams(where, name, f"has value {value!r}", allowed)
    if value == float("inf"):
        raise InvalidParams(where, name, f"has value {value!r}", allowed)
    return float(value)


def check_arguments(
    symbols: object,
    timeframe: object,
    spec: object,
    warmup: object,
    warmup_bars: object,
    checkpoint: object,
    idle: object,
    backend: object,
    save_every: object,
    extend_checkpoint: object,
) -> tuple[list[str], int, list[sf.IndicatorSpec]]:
    """The arguments of ``Stream.indicators`` checked when it is called, before anything is
    subscribed or read (it is a generator: without this, a mistake surfaced at the first
    ``next``, and a symbol the service never sends waited for ever); returns the symbols
    (one or a list; repeats dropped), the timeframe in minutes and the specs."""
    from marketframe._checks import check_int
    from marketframe.convert import check_backend
    from marketframe.endpoints import symbol_list

    where = "Stream.indicators"
    syms = symbol_list(symbols, where)
    tf = check_timeframe(timeframe, where, text=True)
    specs = check_specs(spec, where)
    if warmup is not None and not hasattr(warmup, "read_derived") and not hasattr(warmup, "stock"):
        raise InvalidParams(where, "warmup", f"has value {warmup!r}", "a Store, a Client, None")
    check_int("warmup_bars", warmup_bars, 1, where)
    if checkpoint is not None:
        check_checkpoint(checkpoint, where, "checkpoint")
    if idle is not None and (
        isinstance(idle, bool) or not isinstance(idle, int | float) or not idle > 0
    ):
        raise InvalidParams(where, "idle", f"has value {idle!r}", "seconds > 0, or None")
    if backend is not None:
        check_backend(where, backend)
    check_every("save_every", save_every, where, "seconds > 0 (finite)")
    if not isinstance(extend_checkpoint, bool):
        raise InvalidParams(
            where, "extend_checkpoint", f"has value {extend_checkpoint!r}", "True, False"
        )
    return syms, tf, specs


def check_checkpoint(path: object, where: str, name: str) -> None:
    """``path`` is a file path the engine can be saved to: its directory exists. Checked
    before anything changes: otherwise the first save, after the stream's first batch (or
    after ``save`` had folded the engine's bars), failed naming a temporary file."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidParams(where, name, f"has value {path!r}", "a file path, None")
    parent = Path(path).parent
    if not parent.is_dir():
        why = "is not a directory" if parent.exists() else "does not exist"
        raise InvalidParams(
            where, name, f"({path}): its directory {str(parent)!r} {why}", _IN_A_DIRECTORY
        )


_IN_A_DIRECTORY = "a file in an existing directory (create the directory first)"
_LOADER = "LiveIndicators.load"
_SAVED = "a file LiveIndicators.save (or Stream.indicators' checkpoint=) wrote"


@contextlib.contextmanager
def damaged(path: object) -> Iterator[None]:
    """What reading a checkpoint raises, as the one error naming the file."""
    try:
        yield
    except InvalidParams:
        raise
    except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as err:
        refuse(path, str(err) or type(err).__name__)


def refuse(path: object, why: str) -> NoReturn:
    """The checkpoint file ``path`` cannot be resumed from, ``why``."""
    raise InvalidParams(
        _LOADER, "path", f"({path}) is not a readable live-indicator checkpoint: {why}", _SAVED
    ) from None


def write_checkpoint(path: str | os.PathLike[str], arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` as the npz file at ``path``, replacing the last one only once the new one is
    durable (a crash leaves the old file or the new one, never a torn one)."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)
    try:
        with open(tmp, "wb") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def read_checkpoint(path: object, version: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON header and the arrays of the checkpoint file ``path``, read whole; a
    missing file, a directory, an empty, cut or foreign file, or one of another version,
    is an :class:`InvalidParams` naming the file."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidParamType(_LOADER, "path", f"has value {path!r}", "a file path")
    p = Path(path)
    problem = ""
    if not p.exists():
        problem = "does not exist"
    elif not p.is_file():
        problem = "is not a file"
    elif p.stat().st_size == 0:
        problem = "is empty (zero bytes)"
    elif not zipfile.is_zipfile(p):  # numpy's own error offers to unpickle it
        problem = "is not an .npz file (not a zip archive)"
    if problem:
        raise InvalidParams(_LOADER, "path", f"({p}) {problem}", _SAVED)
    with damaged(p), np.load(p, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
        meta = json.loads(arrays.pop("__meta__").tobytes().decode())
        if not isinstance(meta, dict):
            refuse(p, "its header is not an object")
    if meta.get("version") != version:
        raise InvalidParams(
            _LOADER,
            "path",
            f"({p}) is a live-indicator checkpoint of version {meta.get('version')!r}, "
            f"not {version} (written by another marketframe: remove it to start afresh)",
            _SAVED,
        )
    return meta, arrays


Call = tuple[list[str], list[sf.IndicatorSpec], int]


def check_fits(path: object, where: str, had: Call, asked: Call, *, extend: bool) -> None:
    """Refuse a checkpoint whose symbols, specs or timeframe (``had``) are not the call's
    (``asked``): it would resume something else than asked, silently. ``extend``: the call
    may add symbols and specs, keeping every one the checkpoint holds; never change the
    timeframe. Specs are compared as specs, shown as their columns (or, where those agree
    and a convention differs, as specs)."""
    specs = [[json.dumps(sp.to_json(), sort_keys=True) for sp in c[1]] for c in (had, asked)]
    shown: list[list[Any]] = [[n for sp in c[1] for n in sp.names] for c in (had, asked)]
    if sorted(shown[0]) == sorted(shown[1]):
        shown = [[sp.to_json() for sp in c[1]] for c in (had, asked)]
    pairs: dict[str, tuple[tuple[Any, Any], Sequence[Any], Sequence[Any]]] = {
        "timeframe": ((had[2], asked[2]), [had[2]], [asked[2]]),
        "symbols": ((had[0], asked[0]), had[0], asked[0]),
        "spec": ((shown[0], shown[1]), specs[0], specs[1]),
    }
    wrong = []
    for name, ((was, want), a, b) in pairs.items():
        if sorted(map(str, a)) == sorted(map(str, b)):
            continue
        if extend and name != "timeframe" and set(map(str, a)) <= set(map(str, b)):
            continue
        wrong.append(f"{name} {was!r} where this call asks for {want!r}")
    if wrong:
        raise InvalidParams(
            where,
            "checkpoint",
            f"({path}) holds " + "; ".join(wrong),
            "the checkpoint's own symbols, spec and timeframe; extend_checkpoint=True to "
            "add symbols or specs to it; or another file to start afresh",
        )
