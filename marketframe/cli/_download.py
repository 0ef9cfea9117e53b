"""`marketframe download SYMBOL ... [--start D] [--end D] [-o FILE]`: candles of many symbols
over any range as one CSV or Parquet file (or a table on stdout); see ``docs/loaders.md``.

The key comes only from ``MARKETFRAME_API_KEY``; without it the command runs against the
embedded sandbox (or the one at ``--base-url``), like every other command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from marketframe._time import taipei_today
from marketframe.adjust import check_as_of
from marketframe.cli import add_adjust, add_base_url, add_table_out, describe, emit
from marketframe.download import INTERVALS, PERIODS, check, download, resolve
from marketframe.endpoints import (
    EARLIEST,
    HISTORICAL_FIELDS,
    MARKETS,
    MINUTE_TIMEFRAMES,
    TIMEFRAMES,
)
from marketframe.exceptions import BatchError, InvalidParams, MarketframeError

#: the service's first date of daily history (stocks; indices)
FIRST_DATE, FIRST_INDEX_DATE = EARLIEST["stock"], EARLIEST["index"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "download",
        help="candles of many symbols over any range, as one CSV / Parquet file",
        description="Historical candles of SYMBOLs (or whole boards: "
        + ", ".join(MARKETS)
        + ") from --start to --end, fetched in windows of under one year, concurrently; one "
        "file, symbol by symbol in the order given, each oldest first.",
        epilog="example: marketframe download 2330 0050 --start 2010-01-01 --end 2025-12-31 "
        "-o prices.parquet",
    )
    p.add_argument(
        "symbols",
        nargs="+",
        metavar="SYMBOL",
        help="symbols like 2330, or a board name (" + ", ".join(MARKETS) + ")",
    )
    p.add_argument(
        "--start", metavar="YYYY-MM-DD", help="first date (default: one year before --end)"
    )
    p.add_argument("--end", metavar="YYYY-MM-DD", help="last date (default: today, Taipei)")
    p.add_argument(
        "--period",
        choices=PERIODS,
        metavar="PERIOD",
        help="yfinance's period, ending today, instead of --start/--end: " + ", ".join(PERIODS),
    )
    p.add_argument(
        "--timeframe",
        choices=TIMEFRAMES,
        help="D (default), W, M, or minutes (latest 30 days: no --start/--end)",
    )
    p.add_argument(
        "--interval",
        metavar="INTERVAL",
        help="yfinance's interval instead of --timeframe: " + ", ".join(INTERVALS),
    )
    p.add_argument(
        "--fields",
        type=_field_list,
        action="extend",  # one value, so the symbols after it stay symbols
        metavar="FIELD,...",
        help="price fields, comma-separated (or --fields repeated); any of: "
        + ", ".join(HISTORICAL_FIELDS),
    )
    add_adjust(p)
    add_table_out(p)
    p.add_argument(
        "--store",
        metavar="DIR",
        help="sync into this store directory and read from it (fetches only what it lacks)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar (default: when stderr is a terminal)",
    )
    add_base_url(p)
    p.set_defaults(func=run)


def _field_list(text: str) -> list[str]:
    """``--fields close,volume``: the fields of one value (checked with the others later)."""
    return [f for f in text.split(",") if f.strip()] or [text]


def run(args: argparse.Namespace) -> int:
    # the client (requests) loads only for a command that calls the service
    from marketframe.client import connect

    fields: Any = ",".join(args.fields) if args.fields else None
    stray = [s for s in args.symbols if s.lower() in HISTORICAL_FIELDS]
    if stray:  # `--fields close volume 2330`: volume was read as a symbol
        raise InvalidParams(
            "download",
            "symbols",
            f"has {stray[0]!r}, a price field: --fields takes one comma-separated value",
            "--fields " + ",".join([*(args.fields or []), *stray]),
        )
    # bad arguments fail before a sandbox starts or a request is sent (yfinance's words
    # resolved as download() resolves them)
    yf = resolve(
        args.start,
        args.end,
        args.timeframe,
        args.period,
        args.interval,
        args.adjust,
        taipei_today(),
    )
    args_ = check(
        args.symbols, yf.start, yf.end, yf.timeframe, yf.adjust, fields, "arrow", args.store
    )
    check_as_of("download", args.as_of, args_.adjust)
    failed: dict[str, BaseException] = {}
    with connect(base_url=args.base_url, backend="arrow", cache=False) as client:
        try:
            table = download(
                args.symbols,
                args.start,
                args.end,
                period=args.period,
                interval=args.interval,
                timeframe=args.timeframe,
                adjust=args.adjust,
                as_of=args.as_of,
                fields=fields,
                backend="arrow",
                store=args.store,
                client=client,
                progress=args.progress,
            )
        except BatchError as exc:  # the others are written; the failed ones named below
            if exc.frame is None:
                raise _failed_all(exc) from None
            table, failed = exc.frame, exc.errors
    emit(table, args.out)
    # an empty range that starts before the history could begin: say where it begins (a
    # range of closed days later on has said why it is empty: a NoSession warning)
    early = args.start is not None and str(args.start)[:10] < str(FIRST_INDEX_DATE)
    if table.num_rows == 0 and yf.timeframe not in MINUTE_TIMEFRAMES and early:
        print(
            f"no rows in {args.start or '(one year ago)'}..{args.end or '(today)'}: the "
            f"service's history starts on {FIRST_DATE} (indices {FIRST_INDEX_DATE}); "
            f"choose --start {FIRST_DATE} or later",
            file=sys.stderr,
        )
    for sym, err in failed.items():
        print(f"marketframe download: {sym} FAILED: {_one_line(err)}", file=sys.stderr)
    return 1 if failed else 0


def _one_line(err: BaseException) -> str:
    return describe(err)


def _failed_all(exc: Any) -> Exception:
    """Every symbol failed: one error naming each (the first symbol's fix last)."""
    parts = [f"{sym}: {_one_line(err)}" for sym, err in exc.errors.items()]
    return MarketframeError("every symbol failed; nothing written: " + "; ".join(parts))
