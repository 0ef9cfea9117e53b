"""The arguments the store's commands share: a store's path, the parameters that shape a
dataset (``--param NAME=VALUE``), and the symbols (inline, from files, whole boards)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from marketframe.endpoints import ENDPOINTS
from marketframe.exceptions import InvalidParams


def store_path(text: str) -> Path | str:
    """``--store``: an object-store URL stays text, anything else is a local path. An empty
    path (it would make the current directory a store) or an existing file is refused here,
    as a usage error (exit 2) before anything is created."""
    if "://" in text and not text.startswith("file://"):
        return text
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty; give the store's directory (it is created if missing)"
        )
    path = Path(text.removeprefix("file://"))
    if path.expanduser().exists() and not path.expanduser().is_dir():
        raise argparse.ArgumentTypeError(
            f"{text!r} is a file, not a directory; give a store directory (new or holding a store)"
        )
    return path


def add_store(p: argparse.ArgumentParser, text: str = "the store", required: bool = True) -> None:
    """The ``--store`` argument of a store command (parsed by :func:`store_path`)."""
    p.add_argument("--store", type=store_path, required=required, default=None, help=text)


def existing_store(store: Path | str, command: str) -> None:
    """A local store path that does not exist is a typo, not a store: refused before
    ``Store()`` would create it (an object store: the command says so)."""
    if isinstance(store, Path) and not store.expanduser().is_dir():
        raise InvalidParams(
            command,
            "store",
            f"{str(store)!r} does not exist",
            "the directory of an existing store",
        )


def params_of(ep_name: str, items: list[str]) -> dict[str, Any]:
    ep = ENDPOINTS[ep_name]
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in ep.param_map:
            allowed = [
                p.name
                for p in ep.params
                if p.name not in (*(ep.date_range or ()), "symbol", "timeframe", "sort")
            ]
            raise InvalidParams(
                ep_name,
                name or item,
                "is not NAME=VALUE of a parameter here",
                ", ".join(allowed) or "none",
            )
        kind = ep.param_map[name].type
        if kind == "int":
            try:
                out[name] = int(value)
            except ValueError:
                raise InvalidParams(
                    ep_name, name, f"is not an integer: {value!r}", "0, 1, 2, ..."
                ) from None
        else:
            out[name] = value
    return out


def symbols_of(args: argparse.Namespace, client: Any) -> list[str] | None:
    syms: list[str] = list(args.symbols)
    for f in args.symbols_file:
        try:
            lines = f.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InvalidParams(
                "sync",
                "symbols-file",
                f"cannot be read: {exc.strerror}",
                "a readable file of symbols, one a line",
            ) from None
        except UnicodeDecodeError as exc:
            raise InvalidParams(
                "sync",
                "symbols-file",
                f"{str(f)!r} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})",
                "a UTF-8 text file of symbols, one a line",
            ) from None
        syms += [t for line in lines for t in line.split("#", 1)[0].split()]
    boards = [
        client.prepare("stock.intraday.tickers", type=args.type, market=b) for b in args.board
    ]
    for got in client.send_all(boards):  # every board in one fan-out
        if got.error is not None:
            raise got.error
        syms += got.result.table.column("symbol").to_pylist()
    if not syms:
        return None
    return list(dict.fromkeys(syms))
