"""`marketframe universe`: a store's point-in-time universe (docs/universe.md).

``--record`` adds today's tickers list to the store's archive (``Store.sync("universe")``);
without it the command prints (or writes, ``-o``) the instruments listed on ``--as-of``, as
:meth:`Store.universe` answers, fetching nothing. Exit status: 0, 1 when the record failed, 2
for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack

from marketframe.cli import add_base_url, add_table_out, emit
from marketframe.cli._store_args import add_store, existing_store
from marketframe.exceptions import InvalidParams
from marketframe.store import Store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "universe",
        help="the instruments listed on a day, as a store knew them (--record: add today's)",
        description="The point-in-time universe of a Parquet store: the archived tickers list "
        "of the newest day on or before --as-of, or before the archive a reconstruction from "
        "the stored daily candles (each row names its source). --record adds today's list "
        "to the archive.",
        epilog="example: marketframe universe --store data --as-of 2025-06-30 --board TSE",
    )
    add_store(p, "the store directory, or an object-store URL")
    p.add_argument("--as-of", metavar="YYYY-MM-DD", help="the day (default: today, Taipei)")
    # checked by Store.universe, which names what it allows
    p.add_argument("--board", help="keep one exchange or market: TWSE, TPEx, TSE, OTC, ESB")
    p.add_argument("--type", help="keep one type: EQUITY (ETFs included), ETF, INDEX, WARRANT")
    p.add_argument(
        "--record",
        action="store_true",
        help="fetch today's tickers lists into the store's archive instead of reading",
    )
    add_table_out(p)
    add_base_url(p)
    p.set_defaults(func=run_universe)


def run_universe(a: argparse.Namespace) -> int:
    """Errors go to the common handler of marketframe.cli."""
    if a.record:
        for name in ("as_of", "board", "type", "out"):
            if getattr(a, name) is not None:
                option = "--" + name.replace("_", "-")
                raise InvalidParams("universe", option, "is not taken with --record", "--store")
        return _record(a)
    existing_store(a.store, "universe")
    with Store(a.store, client=None) as st:
        table = st.universe(a.as_of, board=a.board, type=a.type, backend="arrow")
    emit(table, a.out)
    return 0


def _record(a: argparse.Namespace) -> int:
    from marketframe.client import connect  # requests load only when the service is called

    with ExitStack() as stack:
        client = stack.enter_context(connect(base_url=a.base_url, backend="arrow", cache=False))
        st = stack.enter_context(Store(a.store, client))
        report = st.sync("universe")
    for failure in report.failures:
        print(f"marketframe universe: {failure.error}", file=sys.stderr)
    if report.failures:
        return 1
    print(f"recorded {report.rows_written} instruments in {a.store}", file=sys.stderr)
    return 0
