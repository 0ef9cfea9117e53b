"""`marketframe download SYMBOL ... [--start D] [--end D] [-o FILE]`: candles of many symbols
over any range as one CSV or Parquet file (or a table on stdout); see ``docs/loaders.md``.

The key comes only from ``MARKETFRAME_API_KEY``; without it the command runs against the
embedded sandbox (or the one at ``--base-url``), like every other command.
"""

from __future__ import annotations

import argparse
from typing import Any

from marketframe.cli import emit, out_path
from marketframe.endpoints import HISTORICAL_FIELDS, MARKETS, TIMEFRAMES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "download",
        help="candles of many symbols over any range, as one CSV / Parquet file",
        description="Historical candles of SYMBOLs (or whole boards: "
        + ", ".join(MARKETS)
        + ") from --start to --end, fetched in windows of under one year, concurrently; one "
        "file sorted by symbol, then date (oldest first).",
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
        "--timeframe",
        default="D",
        choices=TIMEFRAMES,
        help="D (default), W, M, or minutes (latest 30 days: no --start/--end)",
    )
    p.add_argument(
        "--fields",
        nargs="+",
        metavar="FIELD",
        help="price fields (a list or a comma string); any of: " + ", ".join(HISTORICAL_FIELDS),
    )
    p.add_argument(
        "--adjust",
        choices=("splits", "all"),
        default=None,
        help="adjust prices locally for capital changes (splits) or also dividends "
        "(all), from the corporate actions (docs/adjusted.md)",
    )
    p.add_argument(
        "-o",
        "--out",
        type=out_path(".csv", ".parquet"),
        help="write .csv or .parquet instead of printing",
    )
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
    p.add_argument(
        "--base-url",
        default=None,
        help="service URL (default: the real service; without MARKETFRAME_API_KEY, "
        "a sandbox: the one at this URL, else an embedded one)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from marketframe._connect import connect
    from marketframe._download import check, download

    fields: Any = ",".join(args.fields) if args.fields else None
    # bad arguments fail before a sandbox starts or a request is sent
    check(
        args.symbols, args.start, args.end, args.timeframe, args.adjust, fields, "arrow", args.store
    )
    with connect(base_url=args.base_url, backend="arrow", cache=False) as client:
        table = download(
            args.symbols,
            args.start,
            args.end,
            timeframe=args.timeframe,
            adjust=args.adjust,
            fields=fields,
            backend="arrow",
            store=args.store,
            client=client,
            progress=args.progress,
        )
    emit(table, args.out)
    return 0
