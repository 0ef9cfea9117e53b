"""`marketframe snapshot` and `marketframe gc`: a store's history (docs/store.md, "Snapshots
and reading as of"). A snapshot pins the store as it is; ``export --as-of`` reads one back;
``gc`` removes what no snapshot pins and ``--keep`` does not cover."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from marketframe._time import duration
from marketframe.cli._store_args import add_store, existing_store
from marketframe.store import Store


def _days(text: str) -> dt.timedelta:
    """``--keep``: ``7d``, ``36h``, ``0``: how long replaced versions stay readable."""
    kept = duration(text)
    if kept is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: write e.g. 7d, 36h or 0")
    return kept


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    s = sub.add_parser(
        "snapshot",
        help="pin a store as it is now (create, list, delete)",
        description="Snapshots of a Parquet store: `export --as-of NAME` and "
        "Store.read(..., as_of=NAME) read a snapshot exactly as it was taken.",
    )
    what = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action, helptext in (
        ("create", "pin the store as it is now under NAME"),
        ("list", "the store's snapshots"),
        ("delete", "forget a snapshot (gc then removes what only it pinned)"),
    ):
        a = what.add_parser(action, help=helptext, description=helptext)
        if action != "list":
            a.add_argument("name", metavar="NAME", help="letters, digits, '.', '_' and '-'")
        add_store(a)
        a.add_argument("--json", action="store_true", help="print the result as JSON")
        # the command as typed, for its errors (and the common handler's prefix)
        a.set_defaults(func=run_snapshot, command=f"snapshot {action}")
    g = sub.add_parser(
        "gc",
        help="remove superseded file versions no snapshot pins",
        description="Remove the file versions replaced more than --keep ago that no snapshot "
        "pins, and the log before them: reading as of any time of the last --keep stays "
        "possible, and of every snapshot.",
    )
    add_store(g)
    g.add_argument(
        "--keep",
        type=_days,
        default=dt.timedelta(days=7),
        help="how long replaced versions stay readable: 7d (the default), 36h, 0",
    )
    g.add_argument("--json", action="store_true", help="print the report as JSON")
    g.set_defaults(func=run_gc)


def _shown(snap: Any) -> dict[str, Any]:
    return {
        "name": snap.name,
        "generation": snap.generation,
        "time": snap.time,
        "created": snap.created,
    }


def run_snapshot(a: argparse.Namespace) -> int:
    """Errors go to the common handler of marketframe.cli."""
    existing_store(a.store, a.command)
    with Store(a.store, client=None) as st:
        if a.action == "create":
            made = st.snapshot(a.name)
            print(
                json.dumps(_shown(made))
                if a.json
                else f"snapshot {made.name!r} pins generation {made.generation} ({made.time})"
            )
        elif a.action == "delete":
            st.delete_snapshot(a.name)
            print(json.dumps({"deleted": a.name}) if a.json else f"deleted snapshot {a.name!r}")
        else:
            snaps = st.list_snapshots()
            if a.json:
                print(json.dumps([_shown(s) for s in snaps], indent=1))
            for s in [] if a.json else snaps:
                print(f"{s.name}\tgeneration {s.generation}\t{s.time}")
            if not snaps and not a.json:
                print(f"{a.store}: no snapshots")
    return 0


def run_gc(a: argparse.Namespace) -> int:
    """Errors go to the common handler of marketframe.cli."""
    existing_store(a.store, "gc")
    with Store(a.store, client=None) as st:
        report = st.gc(keep=a.keep)
    if a.json:
        print(json.dumps({**report.__dict__}, indent=1))
    else:
        print(f"{a.store}: {report}")
    return 0
