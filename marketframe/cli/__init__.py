"""The `marketframe` command line.

Each command lives with the module it drives; this file only assembles them and handles their
errors in one place. A command module exposes ``register(subparsers)`` which adds its parser
and sets ``func`` (taking the parsed namespace, returning an exit status).

Errors, for every command: one line on stderr naming the fix, exit status 2 for usage errors
(bad arguments: argparse's own, and :class:`~marketframe.exceptions.InvalidParams`, raised
before any request), 1 for failures, 130 on Ctrl-C. A traceback only with ``--debug``
(anywhere on the command line) or ``MARKETFRAME_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd
import pyarrow.parquet as pq

from marketframe import __version__
from marketframe.adjust import MODES
from marketframe.exceptions import EXTRAS, InvalidParams, MarketframeError, did_you_mean

# Modules each exposing register(subparsers), in the order `--help` lists them.
_COMMANDS: tuple[str, ...] = (
    "marketframe.cli._demo",
    "marketframe.cli._load",
    "marketframe.cli._download",
    "marketframe.cli._crosscheck",
    "marketframe.sandbox._cli",
    "marketframe.cli._academy",
    "marketframe.cli._store",
    "marketframe.cli._history",
    "marketframe.cli._universe",
)

# What to do about the operating-system errors a command commonly meets.
_OS_FIXES = {
    errno.EADDRINUSE: "another program listens on that port: choose another --port "
    "(0 picks a free one)",
    errno.EACCES: "check the path's permissions, or choose another path or port",
    errno.ENOENT: "check the path",
}

DEBUG_ENV = "MARKETFRAME_DEBUG"
USAGE, FAILURE, INTERRUPTED = 2, 1, 130


class _Parser(argparse.ArgumentParser):
    """argparse, plus "did you mean ...?" for a mistyped choice (an endpoint name, a command),
    and a usage error in one line that points at ``--help`` (argparse would print the usage
    block above it). Sub-parsers are of the same class, so every command has it."""

    def error(self, message: str) -> NoReturn:
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if m:
            hint = did_you_mean(m[1], re.findall(r"'([^']*)'", m[2]))
            if hint:
                message = (
                    f"argument {message.split(':', 1)[0].removeprefix('argument ')}: "
                    f"invalid choice: '{m[1]}'{hint}"
                )
        self.exit(USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def out_path(*suffixes: str) -> Callable[[str], Path]:
    """argparse type of an ``--out`` whose suffix chooses the format: refuse other suffixes
    (rather than write, say, CSV into ``data.xlsx``), and a path no file can be written to
    (:func:`out_file`)."""

    def check(text: str) -> Path:
        path = Path(text)
        if path.suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text!r} must end in {' or '.join(suffixes)} (the suffix is the format)"
            )
        return out_file(text)

    return check


def out_file(text: str) -> Path:
    """argparse type of a file a command writes once it has its data: refused at once (exit
    2, before any request) when it is a directory, or when its nearest existing parent is a
    file or not writable, rather than after the data was fetched. Missing parents are made
    when the file is written, and said (:func:`make_parent`)."""
    return _writable(text, directory=False)


def out_dir(text: str) -> Path:
    """argparse type of a directory a command writes into: refused at once when it is a
    file, or when its nearest existing parent is a file or not writable."""
    return _writable(text, directory=True)


def _writable(text: str, directory: bool) -> Path:
    path = Path(text).expanduser()
    try:
        if directory and path.exists() and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} is a file, not a directory")
        if not directory and path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} is a directory: name a file in it")
        parent = path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise argparse.ArgumentTypeError(
                f"{text!r}: {str(parent)!r} is a file, not a directory"
            )
        if not os.access(parent, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{text!r}: {str(parent)!r} is not writable")
    except OSError as exc:  # a name the file system refuses (too long, ...)
        raise argparse.ArgumentTypeError(f"{text!r}: {exc.strerror}") from None
    return path


def make_parent(path: Path, where: str) -> None:
    """Make ``path``'s missing parent directories, saying so on stderr (one line)."""
    if path.parent.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"{where}: created the directory {path.parent}", file=sys.stderr)


def add_table_out(p: argparse.ArgumentParser) -> None:
    """``-o/--out``: where a command that prints a table writes it instead."""
    p.add_argument(
        "-o",
        "--out",
        type=out_path(".csv", ".parquet"),
        help="write .csv or .parquet instead of printing",
    )


def add_adjust(p: argparse.ArgumentParser) -> None:
    """``--adjust`` and ``--as-of``: prices adjusted locally from the corporate actions, as
    they stood on a day."""
    p.add_argument(
        "--adjust",
        choices=MODES,
        help="adjust prices locally for capital changes (splits) or also dividends "
        "(all), from the corporate actions (docs/adjusted.md)",
    )
    p.add_argument(
        "--as-of",
        dest="as_of",
        metavar="DATE",
        help="with --adjust: only the corporate actions that had happened by DATE",
    )


def add_base_url(p: argparse.ArgumentParser) -> None:
    """``--base-url``: the service a command calls (the rule of ``client.connect``)."""
    p.add_argument(
        "--base-url",
        default=None,
        help="service URL (default: the real service; without MARKETFRAME_API_KEY, "
        "a sandbox: the one at this URL, else an embedded one)",
    )


def emit(table: Any, out: Path | None) -> None:
    """A command's table: printed, or written to ``out`` (.parquet or .csv by its suffix) next
    to it then renamed, so an interrupted run leaves no torn file."""
    if out is None:
        with pd.option_context("display.width", 200, "display.max_columns", 12):
            print(table.to_pandas())
        return
    make_parent(out, "marketframe")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        if out.suffix.lower() == ".parquet":
            pq.write_table(table, tmp)
        else:
            table.to_pandas().to_csv(tmp, index=False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    print(f"wrote {table.num_rows} rows to {out}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="marketframe",
        description=(
            "Taiwan market data as typed pandas/polars DataFrames. "
            "With no MARKETFRAME_API_KEY set, commands run against the built-in sandbox."
        ),
        epilog="Run `marketframe COMMAND --help` for a command's options.",
    )

    parser.add_argument("--version", action="version", version=f"marketframe {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the traceback of an error (also: {DEBUG_ENV}=1); "
        "accepted anywhere on the command line",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def describe(exc: BaseException) -> str:
    """One line saying what went wrong and, where known, what to do next."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, MarketframeError):  # the next step, unless the message ends with it
        step = exc.next_step()
        if step and step not in text and exc.hint not in text:
            text += f" ({exc.hint})"
    elif isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror + (f": {exc.filename}" if exc.filename else "")
    fix = _os_fix(exc)
    return f"{type(exc).__name__}: {text}" + (f"; {fix}" if fix else "")


def _os_fix(exc: BaseException | None) -> str:
    """The fix for an operating-system error behind ``exc`` (itself or a cause), if known."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and exc.errno in _OS_FIXES:
            return _OS_FIXES[exc.errno]
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return ""


def missing_extra(exc: BaseException | None) -> tuple[str, str] | None:
    """``(package, extra)`` when ``exc`` (or a cause) is an optional package not installed."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            root = exc.name.split(".")[0]
            if root in EXTRAS:
                return root, EXTRAS[root]
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def exit_status(exc: BaseException) -> int:
    """2 for a usage error (nothing was requested), 1 for a failure."""
    return USAGE if isinstance(exc, InvalidParams) else FAILURE


def run_command(args: argparse.Namespace, *, debug: bool = False) -> int:
    """Run a parsed command under the common error handler."""
    where = f"marketframe {args.command}"

    def one_line(message: Any, category: Any, *_: Any, **__: Any) -> None:
        print(f"{where}: warning: {message}", file=sys.stderr)  # not Python's file:line form

    try:
        with warnings.catch_warnings():
            warnings.showwarning = one_line
            return int(args.func(args) or 0)
    except KeyboardInterrupt as stop:  # a command may say what it kept, in the same line
        kept = f"; {stop.args[0]}" if stop.args and isinstance(stop.args[0], str) else ""
        print(f"{where}: interrupted{kept}", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - every error ends as one line (or a traceback)
        if debug:
            traceback.print_exc()
        if (needed := missing_extra(exc)) is not None:
            package, extra = needed
            print(
                f"{where}: this needs the optional package {package!r}: "
                f"pip install 'marketframe[{extra}]'",
                file=sys.stderr,
            )
            return USAGE
        print(f"{where}: error: {describe(exc)}", file=sys.stderr)
        if not debug and not isinstance(exc, MarketframeError):
            print(f"{where}: run with --debug for the traceback", file=sys.stderr)
        return exit_status(exc)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug is global but accepted anywhere (users add it at the end of a failing command)
    debug = "--debug" in argv or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # argparse: --help/--version (0) or a usage error (2, printed)
        return done.code if isinstance(done.code, int) else USAGE
    if not getattr(args, "func", None):
        parser.print_help()
        return USAGE
    return run_command(args, debug=debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
