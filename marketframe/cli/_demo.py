"""`marketframe demo`: the main job behind the README's first command.

With no ``MARKETFRAME_API_KEY`` it starts the embedded sandbox; with the key set it uses the
real service. It syncs a handful of symbols' daily history into a local Parquet store (with
progress), computes the five indicators, cross-checks them against the service's technical
endpoints, writes a batch Parquet export and charts, and prints what it did and where.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

import marketframe
from marketframe.cli import out_dir
from marketframe.cli._store import failed_lines
from marketframe.crosscheck import INDICATOR_NAMES
from marketframe.exceptions import SyncError
from marketframe.indicators.options import options
from marketframe.sandbox import iso_time
from marketframe.store import Store

DEFAULT_SYMBOLS = ("2330", "2317", "2454", "0050", "6488")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="a tour of marketframe (no API key needed: runs on the built-in sandbox)",
        description=(
            "Run the main job: sync a few symbols' daily candles into a local Parquet store, "
            "compute SMA, RSI, KDJ, MACD and Bollinger bands, cross-check them against the "
            "service's technical endpoints, and write a Parquet export and charts. With "
            "MARKETFRAME_API_KEY unset, an embedded sandbox serves a synthetic market on "
            "127.0.0.1; with it set, the real service is used."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--out",
        type=out_dir,
        default=Path("marketframe-demo"),
        help="directory for the store, the export and the charts",
    )
    p.add_argument(
        "--symbols",
        nargs="+",
        default=list(DEFAULT_SYMBOLS),
        metavar="SYMBOL",
        help="symbols to sync",
    )
    p.add_argument("--start", default="2016-01-01", help="first day of the daily history")
    p.add_argument("--seed", type=int, default=0, help="sandbox seed (no key only)")
    p.add_argument(
        "--now",
        default=None,
        type=iso_time,
        help="sandbox clock as an ISO time (no key only; default: wall clock)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)


def _step(n: int, text: str) -> None:
    print(f"\n[{n}/5] {text}", flush=True)


def run(args: argparse.Namespace) -> int:
    import matplotlib  # an optional extra, and heavy: loaded by this command only

    matplotlib.use("agg")

    # the client (requests) loads only for a command that calls the service
    from marketframe.client import connect

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    written: list[tuple[str, Path]] = []
    with connect(seed=args.seed, now=args.now, notice=sys.stdout) as client:
        symbols = list(dict.fromkeys(args.symbols))
        _step(
            1,
            f"Syncing daily candles of {', '.join(symbols)} from {args.start} "
            "into a local Parquet store",
        )
        store = Store(out / "store", client)
        missing: set[str | None] = set()
        try:
            synced = str(
                store.sync(
                    "stock.historical.candles",
                    symbols,
                    start=args.start,
                    timeframe="D",
                    progress=not args.no_progress,
                )
            )
        except SyncError as exc:  # one line per failed symbol; the tour goes on without it
            synced = str(exc.report)
            lines, _ = failed_lines(exc.report.failures)
            missing = {f.symbol for f in exc.report.failures}
            symbols = [s for s in symbols if s not in missing]
            for line in lines:
                print(f"      {line}", file=sys.stderr)
            if not symbols:
                return 1
            print(f"      going on with {', '.join(symbols)}")
        print(f"      {synced.splitlines()[0]}")
        again = store.sync(
            "stock.historical.candles", symbols, start=args.start, timeframe="D", progress=False
        )
        print(
            f"      a second sync of the same range sent {again.requests} requests (only the "
            "window holding the latest session is fetched again until it is final)"
        )
        candles = store.read("stock.historical.candles", symbols, timeframe="D")
        last_day = pd.Timestamp(candles["date"].max()).date()

        _step(2, f"Cross-checking the service's technical endpoints for {symbols[0]}")
        start = last_day - dt.timedelta(days=240)
        reports = {}
        for name in INDICATOR_NAMES:
            reports[name] = marketframe.crosscheck(client, symbols[0], name, start, last_day)
            print(f"      {reports[name].summary()}")
        found: dict[str, str] = {}
        for r in reports.values():
            found.update(r.conventions)

        _step(
            3,
            "Computing SMA(20), RSI(14), KDJ(9,3,3), MACD(12,26,9) and Bollinger(20,2) per "
            "symbol, with the conventions the cross-check found",
        )
        print(f"      {_named(found)}")
        with_ind = indicators(candles, found)
        # the service computes over the requested range only (the cross-check's alignment
        # 'range'), so the latest values are compared over the range it checked
        ranged = all(r.best.alignment == "range" for r in reports.values())
        since = start if ranged else None
        print(
            "      latest values"
            + (f", computed like the service over {start}..{last_day}:" if ranged else ":")
        )
        print(table(indicators(candles, found, since) if ranged else with_ind).to_string())

        _step(4, "Writing a batch Parquet export and charts")
        export = out / "export"
        export.mkdir(exist_ok=True)
        path = export / "daily_candles_with_indicators.parquet"
        with_ind.to_parquet(path, index=False)
        written.append(("Parquet export (candles + indicators, all symbols)", path))
        path = export / "crosscheck.parquet"
        pd.concat([r.table().assign(indicator=n) for n, r in reports.items()]).astype(
            {"first_divergence": "string"}
        ).to_parquet(path, index=False)
        written.append(("cross-check results", path))
        first = with_ind[with_ind["symbol"] == symbols[0]]
        fig = first.md.plot(last=160, title=f"{symbols[0]}: daily candles and indicators")
        path = out / f"chart-{symbols[0]}.png"
        fig.savefig(path, dpi=110)
        written.append(("candlestick chart", path))
        path = out / f"crosscheck-{symbols[0]}-macd.png"
        reports["macd"].plot().savefig(path, dpi=110)
        written.append(("cross-check chart (MACD)", path))
        written.append(("Parquet store (hive-partitioned; polars/DuckDB read it)", out / "store"))

        _step(5, "Done")
        matched = sum(r.convention is not None for r in reports.values())
        print(
            f"      {len(symbols)} symbols, {len(candles):,} daily candles up to {last_day}, "
            f"{matched}/5 indicators reproduced locally, in "
            f"{time.perf_counter() - started:.1f} s"
        )
    print("\nFiles:")
    for what, path in written:
        print(f"  {what:<58} {path}")
    print("\nTry next:")
    print(
        f"  marketframe sync stock.historical.candles --store {out / 'store'} "
        "--board TSE --start 2020-01-01"
    )
    daily = out / "store" / "dataset=stock.historical.candles" / "params=default" / "tf=D"
    print(  # sym as a string: hive inference would make sym=0050 the integer 50
        '  python -c "import polars as pl; print(pl.scan_parquet('
        f"'{daily}', hive_schema={{'sym': pl.String}})"
        ".group_by('sym').len().sort('sym').collect())\""
    )
    print("  marketframe crosscheck 2454 --timeframe W")
    print("  marketframe sandbox --port 8000     # the emulator for any client")
    print(
        "  notebooks/ (quickstart, store, indicators, streaming, login, beyond the reference,"
        " stateful indicators, a survivorship-free backtest); docs/index.md"
    )
    return 1 if missing else 0


#: the indicator columns of the demo's table
COLUMNS = ("sma_20", "rsi_14", "kdj_k_9_3_3", "macd_12_26_9", "bb_upper_20_2")


def _named(found: dict[str, str]) -> str:
    if not found:
        return "conventions: the defaults (the cross-check matched none)"
    return "conventions: " + ", ".join(f"{k}={v!r}" for k, v in sorted(found.items()))


def indicators(candles: Any, found: dict[str, str], since: dt.date | None = None) -> Any:
    """The five indicators of every symbol, under the conventions ``found`` by the
    cross-check (so the table shows the numbers the service shows); from ``since`` on only
    when given (the recursive ones, RSI, KDJ and MACD, depend on where the series starts)."""
    if since is not None:
        candles = candles[candles["date"] >= str(since)]
    with options.context(conventions=found):
        return candles.md.sma(20).md.rsi(14).md.kdj().md.macd().md.bbands()


def table(with_ind: Any) -> Any:
    """The latest row of each symbol: date (a date), close and the indicators, 2 decimals."""
    latest = with_ind.groupby("symbol", observed=True).tail(1).set_index("symbol")
    shown = latest[["close", *COLUMNS]].astype("float64").round(2)
    shown.insert(0, "date", latest["date"].dt.date)
    return shown
