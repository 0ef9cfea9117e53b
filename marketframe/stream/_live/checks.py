"""The checks of the live engine's input, in one place: the arguments of
``Stream.indicators`` (and of ``LiveIndicators``).
"""

from __future__ import annotations

import os


def check_arguments(
    symbols: object,
    timeframe: object,
    warmup: object,
    warmup_bars: object,
    checkpoint: object,
    idle: object,
    backend: object,
) -> tuple[list[str], str]:
    """The arguments of ``Stream.indicators`` checked when it is called, before anything is
    subscribed or read (it is a generator: without this, a mistake surfaced at the first
    ``next``, and a symbol the service never sends waited for ever); returns the symbols
    and the timeframe as text."""
    from marketframe._checks import check_int
    from marketframe.convert import check_backend
    from marketframe.endpoints import MINUTE_TIMEFRAMES, symbol_list
    from marketframe.exceptions import InvalidParams

    where = "Stream.indicators"
    syms = symbol_list(symbols, where)
    tf = str(timeframe) if isinstance(timeframe, str | int) else ""
    if isinstance(timeframe, bool) or tf not in MINUTE_TIMEFRAMES:
        raise InvalidParams(
            where, "timeframe", f"has value {timeframe!r}", ", ".join(MINUTE_TIMEFRAMES)
        )
    if warmup is not None and not hasattr(warmup, "read_derived") and not hasattr(warmup, "stock"):
        raise InvalidParams(where, "warmup", f"has value {warmup!r}", "a Store, a Client, None")
    check_int("warmup_bars", warmup_bars, 1, where)
    if checkpoint is not None and not isinstance(checkpoint, str | os.PathLike):
        raise InvalidParams(where, "checkpoint", f"has value {checkpoint!r}", "a file path, None")
    if idle is not None and (
        isinstance(idle, bool) or not isinstance(idle, int | float) or not idle > 0
    ):
        raise InvalidParams(where, "idle", f"has value {idle!r}", "seconds > 0, or None")
    if backend is not None:
        check_backend(where, backend)
    return syms, tf
