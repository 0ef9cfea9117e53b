"""The `marketframe` command line.

Each command lives with the module it drives; this file only assembles them. A command module
exposes ``register(subparsers)`` which adds its parser and sets ``func`` (taking the parsed
namespace, returning an exit status).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules each exposing register(subparsers), in the order `--help` lists them.
_COMMANDS: tuple[str, ...] = (
    "marketframe.demo",
    "marketframe._load_cli",
    "marketframe.crosscheck",
    "marketframe.sandbox._cli",
    "marketframe.academy._cli",
    "marketframe.store._cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="marketframe",
        description=(
            "Taiwan market data as typed pandas/polars DataFrames. "
            "With no MARKETFRAME_API_KEY set, commands run against the built-in sandbox."
        ),
    )
    from marketframe import __version__

    parser.add_argument("--version", action="version", version=f"marketframe {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
