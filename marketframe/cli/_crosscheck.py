"""`marketframe crosscheck`: the command of :func:`marketframe.crosscheck.crosscheck`."""

from __future__ import annotations

import argparse

from marketframe.cli import make_parent, out_file
from marketframe.crosscheck import INDICATOR_NAMES, TOLERANCE, check_tolerance, crosscheck
from marketframe.endpoints import TIMEFRAMES
from marketframe.exceptions import InvalidParams, NotCheckable


def _tolerance(text: str) -> float:
    """``--tolerance``: a finite number > 0 (a usage error, exit 2, otherwise)."""
    try:
        return check_tolerance(float(text))
    except (ValueError, InvalidParams):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number > 0") from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "crosscheck",
        help="audit the service's technical indicators against local recomputation",
        description=(
            "Fetch the service's SMA, RSI, KDJ, MACD and Bollinger series for a symbol, "
            "recompute each locally under every known convention, and print which convention "
            "the service follows and how closely it agrees. Without MARKETFRAME_API_KEY the "
            "built-in sandbox is audited."
        ),
    )
    p.add_argument("symbol", nargs="?", default="2330", help="stock symbol")
    p.add_argument(
        "--start",
        help="first date (YYYY-MM-DD); default: about 6 months before "
        "--end for D, just under a year for W and M",
    )
    p.add_argument("--end", help="last date (YYYY-MM-DD); default: today")
    p.add_argument(
        "--timeframe",
        default="D",
        choices=TIMEFRAMES,
        help="D, W, M or minutes (" + ", ".join(TIMEFRAMES) + ")",
    )
    p.add_argument(
        "--indicator",
        action="append",
        choices=INDICATOR_NAMES,
        help="check only these (repeatable); default: all five",
    )
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=TOLERANCE,
        help="largest relative difference counted as agreement",
    )
    p.add_argument(
        "--chart",
        type=out_file,
        metavar="PNG",
        help="also write the cross-check charts here "
        "(one file per indicator, the name gets a suffix)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    """Check each indicator; one that cannot be checked is reported and skipped. Exit 1 when
    any indicator disagrees with every known convention, or when none could be checked."""
    # the client (requests) loads only for a command that calls the service
    from marketframe.client import connect

    failures = checked = 0
    with connect() as client:  # the sandbox notice on stderr, as every command
        for name in args.indicator or INDICATOR_NAMES:
            try:
                report = crosscheck(
                    client,
                    args.symbol,
                    name,
                    args.start,
                    args.end,
                    args.timeframe,
                    tolerance=args.tolerance,
                )
            except NotCheckable as exc:
                print(
                    f"{name.upper()} {args.symbol} {args.timeframe}: not checkable: {exc}; "
                    f"{exc.hint}"
                )
                continue
            checked += 1
            print(report.summary())
            failures += report.convention is None
            if args.chart:
                path = args.chart
                out = path.with_name(f"{path.stem}-{name}{path.suffix or '.png'}")
                make_parent(out, "marketframe crosscheck")
                report.plot().savefig(out, dpi=110)
                print(f"  chart: {out}")
    return 1 if failures or not checked else 0
