"""What a read asks for that the store never synced: an error when nothing of it is held, a
warning when part of it is (docs/store.md, "Reading what was never synced")."""

from __future__ import annotations

import datetime as dt
import warnings

from marketframe.endpoints import Interval, merge, subtract
from marketframe.exceptions import NotSynced, PartlySynced
from marketframe.store._dataset import NO_SYMBOL, Dataset, DatasetId
from marketframe.store._log import View

#: a symbol (None: the dataset) and the range of it never synced (None: either end open)
Missing = tuple[str | None, dt.date | None, dt.date | None]


def check(
    log: View, spec: Dataset, symbols: list[str] | None, lo: dt.date | None, hi: dt.date | None
) -> None:
    """Raise :class:`NotSynced` for every asked symbol (``None``: the dataset) the store holds
    nothing of in ``[lo, hi]``; warn :class:`PartlySynced` for the parts of the range that are
    missing where some of it is held. Final, open and known-empty intervals all count."""
    ds = spec.ds
    if symbols is None:
        asked: list[str | None] = [*log.symbols(ds)] or [None]
    else:
        asked = list(symbols)
    missing: list[Missing] = []
    partly: list[tuple[str | None, Interval]] = []
    for sym in asked:
        ivs = [] if sym is None else _held(log, ds, sym if spec.has_symbol else NO_SYMBOL)
        label = sym if spec.has_symbol else None
        if not ivs:
            missing.append((label, lo, hi))
            continue
        if lo is None and hi is None:
            continue
        want = (lo or ivs[0][0], hi or ivs[-1][1])
        if want[0] > want[1]:
            continue
        gaps = subtract(want, ivs)
        if gaps == [want]:
            missing.append((label, lo, hi))
        elif gaps:
            partly += [(label, g) for g in gaps]
    if missing:
        raise NotSynced(_label(spec), missing, _sync_call(spec, missing))
    if partly:
        shown = ", ".join(f"{s or 'every symbol'} {a}..{b}" for s, (a, b) in partly[:5])
        more = f" and {len(partly) - 5} more" if len(partly) > 5 else ""
        fix = _sync_call(spec, [(s, a, b) for s, (a, b) in partly])
        warnings.warn(
            PartlySynced(
                f"{_label(spec)}: never synced {shown}{more}; the frame holds "
                f"only the synced dates (run {fix} to fill them)"
            ),
            stacklevel=4,  # the caller of Store.read (through _read.read)
        )


def _label(spec: Dataset) -> str:
    """``stock.historical.candles (timeframe W, fields-close.volume)``: the dataset, readably."""
    extra = [f"timeframe {spec.ds.timeframe}"] if spec.ds.timeframe else []
    extra += [] if spec.ds.params == "default" else [spec.ds.params]
    return spec.ep.name + (f" ({', '.join(extra)})" if extra else "")


def _held(log: View, ds: DatasetId, symbol: str) -> list[Interval]:
    got = log.intervals(ds, symbol)
    return merge([*got["final"], *got["open"], *got["empty"]])


def _sync_call(spec: Dataset, missing: list[Missing]) -> str:
    """The ``store.sync(...)`` call that fetches ``missing``."""
    args = [repr(spec.ep.name)]
    syms = sorted({s for s, _, _ in missing if s is not None})
    if spec.has_symbol:
        args.append(repr(syms[0]) if len(syms) == 1 else repr(syms) if syms else "SYMBOLS")
    starts = [a for _, a, _ in missing if a is not None]
    ends = [b for _, _, b in missing if b is not None]
    if not spec.latest:
        args.append(f"start={min(starts).isoformat()!r}" if starts else "start='YYYY-MM-DD'")
        if ends:
            args.append(f"end={max(ends).isoformat()!r}")
    if spec.ds.timeframe not in (None, "D"):
        args.append(f"timeframe={spec.ds.timeframe!r}")
    args += [f"{k}={v!r}" for k, v in sorted(spec.params.items())]
    return f"store.sync({', '.join(args)})"
