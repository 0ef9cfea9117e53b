"""`marketframe sync` and `marketframe export`: the store for batch jobs.

Symbols come inline (``--symbols 2330 2317``), from a file (``--symbols-file``: one a line,
``#`` comments) or as whole boards from the tickers endpoint (``--board TSE OTC``). The key
comes only from ``MARKETFRAME_API_KEY`` (a command-line option would be visible to other
users); without it the commands run against the embedded sandbox. The exit status is 0 when
everything was fetched, 1 when anything failed (each failed item is listed on stderr), 2 for
bad arguments (nothing was requested).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from marketframe import exceptions
from marketframe.cli import add_base_url, make_parent, out_path
from marketframe.cli._store_args import (
    add_store,
    existing_store,
    params_of,
    symbols_of,
)
from marketframe.endpoints import ENDPOINTS, MARKETS, MINUTE_TIMEFRAMES, TIMEFRAMES, get
from marketframe.exceptions import (
    AuthenticationError,
    BadRequest,
    InvalidParams,
    NotFound,
    NotSynced,
    PlanError,
    RepeatedPage,
    SchemaError,
)
from marketframe.store import Store


def _add_common(p: argparse.ArgumentParser) -> None:
    ranged = [n for n, e in ENDPOINTS.items() if e.date_range]
    p.add_argument(
        "endpoint",
        choices=ranged,
        metavar="ENDPOINT",
        help="a date-ranged endpoint: " + ", ".join(ranged),
    )
    src = p.add_argument_group("symbols (combine freely; none for corporate actions)")
    src.add_argument("--symbols", nargs="+", default=[], metavar="SYMBOL")
    src.add_argument(
        "--symbols-file",
        type=Path,
        action="append",
        default=[],
        help="a file of symbols, one a line (# starts a comment)",
    )
    src.add_argument(
        "--board",
        nargs="+",
        default=[],
        type=str.upper,  # a board in any case, as download takes it
        choices=MARKETS,
        metavar="MARKET",
        help="every ticker of these boards (" + ", ".join(MARKETS) + ")",
    )
    src.add_argument(
        "--type",
        default="EQUITY",
        choices=("EQUITY", "INDEX", "WARRANT"),
        help="ticker type of --board",
    )
    p.add_argument("--start", help="first day, YYYY-MM-DD (not with minute timeframes)")
    p.add_argument("--end", help="last day, YYYY-MM-DD (default: today)")
    p.add_argument("--timeframe", choices=TIMEFRAMES, help="D (default), W, M or minutes")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter that shapes the data, e.g. period=20 or fields=open,close (repeatable)",
    )
    p.add_argument(
        "--today",
        help="the service's date for responses without one "
        "(technical, corporate actions); default: today in Taipei",
    )
    p.add_argument("--workers", type=int, default=8, help="concurrent requests")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar (default: when stderr is a terminal), as for download",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_base_url(p)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    s = sub.add_parser(
        "sync",
        help="fetch what a local Parquet store is missing",
        description="Sync a date-ranged endpoint into a Parquet store "
        "(docs/store.md): only missing windows are fetched.",
    )
    add_store(
        s,
        "the store directory, or an object-store URL (s3://bucket/prefix; "
        "credentials and AWS_ENDPOINT_URL from the AWS environment)",
    )
    _add_common(s)
    s.set_defaults(func=run_sync)
    e = sub.add_parser(
        "export",
        help="write an endpoint's rows over any range to one Parquet file",
        description="Fetch (through a store: only what is missing) and write "
        "the rows of the range to one Parquet file.",
    )
    e.add_argument(
        "--out", type=out_path(".parquet"), required=True, help="the .parquet file to write"
    )
    add_store(e, "a store to sync through (default: a temporary one)", required=False)
    e.add_argument(
        "--as-of",
        default=None,
        metavar="SNAPSHOT|TIME",
        help="export what --store held then (a snapshot, or a time such as "
        "2026-11-20T18:00), fetching nothing",
    )
    _add_common(e)
    e.set_defaults(func=run_export)
    v = sub.add_parser(
        "verify",
        help="check a Parquet store's files and log; --repair",
        description="Check every file a store records (size, content hash, "
        "page checksums, rows) and its log; with --repair, "
        "rebuild a damaged log and fetch damaged data again.",
    )
    add_store(v, "the store directory, or an object-store URL")
    v.add_argument("--repair", action="store_true", help="repair what does not match")
    v.add_argument("--today", help="the service's date for refetched responses without one")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--base-url", default=None, help="service URL for refetches (as for sync)")
    v.add_argument("--workers", type=int, default=8, help="concurrent requests of a repair")
    v.set_defaults(func=run_verify)


def _session(stack: ExitStack, args: argparse.Namespace) -> Any:
    # the client (requests) loads only for a command that calls the service
    from marketframe.client import connect

    return stack.enter_context(
        connect(
            base_url=args.base_url, backend="arrow", cache=False, max_workers=max(1, args.workers)
        )
    )


def _sync(
    args: argparse.Namespace, root: Path | str, stack: ExitStack
) -> tuple[Any, Any, dict[str, Any]]:
    params = params_of(args.endpoint, args.param)
    client = _session(stack, args)
    store = stack.enter_context(Store(root, client, max_workers=max(1, args.workers)))
    symbols = symbols_of(args, client)
    report = store.sync(
        args.endpoint,
        symbols,
        args.start,
        args.end,
        args.timeframe,
        today=args.today,
        progress=args.progress,
        strict=False,
        **params,
    )
    return store, report, {"symbols": symbols, "params": params}


#: errors a rerun does not mend: the service answered, and will answer the same again
_FINAL = (
    BadRequest,
    AuthenticationError,
    PlanError,
    NotFound,
    SchemaError,
    InvalidParams,
    RepeatedPage,
)


def failed_lines(failures: Sequence[Any]) -> tuple[list[str], bool]:
    """A sync's failures (``SyncReport.failures``) as one line per symbol, however many of
    its windows failed, and whether a rerun may mend any of them (a 404 will not)."""
    by_symbol: dict[str | None, list[Any]] = {}
    for f in failures:
        by_symbol.setdefault(f.symbol, []).append(f)
    lines, retry = [], False
    for sym, failed in by_symbol.items():
        kind = failed[0].error.split(":", 1)[0]
        cls = getattr(exceptions, kind, None)
        final = (
            isinstance(cls, type)
            and issubclass(cls, _FINAL)
            and all(f.error.startswith(f"{kind}:") for f in failed)
        )
        retry = retry or not final
        span = f" {failed[0].start}..{failed[-1].end}" if failed[0].start else ""
        many = f" ({len(failed)} windows)" if len(failed) > 1 else ""
        if final and kind == "SymbolNotFound":
            text = (
                f"SymbolNotFound: the service does not know {sym!r} (HTTP 404); check it "
                "(`marketframe load stock.intraday.tickers --type EQUITY --market TSE` lists "
                "a board's symbols)"
            )
        else:
            text = " ".join(failed[0].error.split())
        lines.append(
            f"FAILED {sym or '(all symbols)'}{span}{many}: {text}"
            + ("; a rerun will not mend it" if final else "")
        )
    return lines, retry


def _finish(args: argparse.Namespace, report: Any, extra: dict[str, Any] | None = None) -> int:
    if args.json:
        print(json.dumps({**report.as_dict(), **(extra or {})}, indent=1))
    else:
        print(report.__str__().splitlines()[0])
    if report.failures:
        lines, retry = failed_lines(report.failures)
        again = "; rerun the same command to retry them" if retry else ""
        print(f"{len(lines)} symbol(s) FAILED{again}:", file=sys.stderr)
        for line in lines:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


def run_sync(a: argparse.Namespace) -> int:
    """Errors go to the common handler of marketframe.cli; Ctrl-C says what was saved."""
    with ExitStack() as stack:
        try:
            _, report, _ = _sync(a, a.store, stack)
        except KeyboardInterrupt:  # the common handler's one line says what was kept
            raise KeyboardInterrupt(_saved(a)) from None
    return _finish(a, report)


def _saved(a: argparse.Namespace) -> str:
    """After Ctrl-C: what the store holds of the endpoint (every window is committed as it
    arrives, so nothing fetched is lost) and that the same command resumes."""
    held = ""
    try:
        with Store(a.store, client=None) as st:
            cov = st.coverage()
        cov = cov[(cov["dataset"] == a.endpoint) & (cov["status"] != "empty")]
        if len(cov):
            held = (
                f"; it holds {a.endpoint} for {cov['symbol'].nunique()} symbol(s), "
                f"{cov['start'].min()} to {cov['end'].max()} at most"
            )
    except Exception:  # noqa: BLE001 - a summary only: the interrupt is what matters
        held = ""
    return (
        f"every window fetched before it is saved in {a.store}{held}; rerun the same "
        "command to fetch only the rest"
    )


def run_verify(a: argparse.Namespace) -> int:
    """Errors go to the common handler of marketframe.cli."""
    existing_store(a.store, "verify")
    with ExitStack() as stack:
        client = _session(stack, a) if a.repair else None
        store = stack.enter_context(Store(a.store, client))
        report = store.verify(repair=a.repair, today=a.today)
    print(json.dumps(report.as_dict(), indent=1) if a.json else str(report))
    if not report.ok or (report.problems and not a.repair):
        print(
            f"{a.store}: damaged; run `marketframe verify --store {a.store} --repair`"
            if not a.repair
            else "some repairs failed; rerun to retry them",
            file=sys.stderr,
        )
        return 1
    return 0


def _read_synced(store: Any, a: argparse.Namespace, ctx: dict[str, Any], failed: bool) -> Any:
    """What the export's sync left in the store. Symbols whose every window failed hold
    nothing (``NotSynced``): they are left out, and the report lists their failures."""
    args = (a.endpoint, ctx["symbols"], a.start, a.end, a.timeframe)
    try:
        return store.read(*args, backend="arrow", **ctx["params"])
    except NotSynced as exc:
        if not failed:
            raise
        gone = {sym for sym, _, _ in exc.missing}
        keep = [s for s in ctx["symbols"] or () if s not in gone]
        if keep:
            return store.read(a.endpoint, keep, *args[2:], backend="arrow", **ctx["params"])

        minute = a.timeframe in MINUTE_TIMEFRAMES
        return get(a.endpoint).schema.arrow(minute=minute).empty_table()


def run_export(a: argparse.Namespace) -> int:
    """Errors go to the common handler of marketframe.cli."""
    with ExitStack() as stack:
        if a.as_of is not None:
            table, report = _held_then(a, stack), None
        else:
            root = a.store or Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="marketframe-export-"))
            )
            store, report, ctx = _sync(a, root, stack)
            table = _read_synced(store, a, ctx, failed=bool(report.failures))
        make_parent(a.out, "marketframe export")
        tmp = a.out.with_name(f".{a.out.name}.{os.getpid()}.tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, a.out)
    print(f"wrote {table.num_rows} rows to {a.out}", file=sys.stderr)
    if report is None:
        return 0
    return _finish(a, report, {"out": str(a.out), "rows": table.num_rows})


def _held_then(a: argparse.Namespace, stack: ExitStack) -> Any:
    """``export --as-of``: the rows the store held then, nothing fetched."""
    if a.store is None:
        raise InvalidParams("export", "as-of", "needs --store", "--store STORE --as-of NAME")
    existing_store(a.store, "export")
    store = stack.enter_context(Store(a.store, client=None))
    symbols = list(a.symbols) or None
    if a.symbols_file or a.board:
        raise InvalidParams(
            "export", "as-of", "reads the store only", "--symbols (or none: every symbol held)"
        )
    params = params_of(a.endpoint, a.param)
    return store.read(
        a.endpoint, symbols, a.start, a.end, a.timeframe, backend="arrow", as_of=a.as_of, **params
    )
