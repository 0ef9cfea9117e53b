"""`marketframe load ENDPOINT --param value ...`: any endpoint as a table, CSV or Parquet file.

The sub-commands and their options are generated from ENDPOINTS. The key comes only from
``MARKETFRAME_API_KEY`` (never a command-line option, which other users could read); without
it the command runs against the embedded sandbox. To enable it, add ``"marketframe.cli._load"``
to ``_COMMANDS`` in ``marketframe/cli.py``.
"""

from __future__ import annotations

import argparse
from typing import Any

from marketframe.cli import add_adjust, add_base_url, add_table_out, emit
from marketframe.endpoints import ENDPOINTS, Endpoint, Param

_TYPES: dict[str, Any] = {"int": int, "float": float}


def _options(ep: Endpoint, p: Param) -> list[str]:
    """The option's wire name, and the glossary's word for it (docs/glossary.md): ``--start``
    / ``--end`` for a date range, ``--symbols`` for the symbol path parameter."""
    words = dict(zip(ep.date_range, ("start", "end"), strict=True)) if ep.date_range else {}
    if p.in_path and p.name == "symbol":
        words[p.name] = "symbols"
    names = ["--" + (p.wire or p.name)]
    return names + ["--" + words[p.name]] if p.name in words else names


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    load = sub.add_parser(
        "load",
        help="load any REST endpoint as a table / CSV / Parquet",
        description="Load one endpoint of the service (see docs/endpoints.md).",
    )
    endpoints = load.add_subparsers(dest="endpoint", metavar="ENDPOINT", required=True)
    for ep in ENDPOINTS.values():
        p = endpoints.add_parser(ep.name, help=ep.doc, description=f"{ep.doc}: GET {ep.path}")
        for param in ep.params:
            kw: dict[str, Any] = {
                "dest": param.name,
                "required": param.required,
                "help": param.doc or None,
            }
            if param.type == "fields":  # a list or a comma string; checked by the params layer
                kw.update(
                    nargs="+",
                    metavar="FIELD",
                    help=f"{param.doc}; any of: {', '.join(param.allowed or ())}",
                )
            elif param.allowed:
                kw["choices"] = param.allowed
            if param.type == "date":
                kw["metavar"] = "YYYY-MM-DD"
            if param.type == "bool":
                kw["choices"] = ("true", "false")
            if param.type in _TYPES:
                kw["type"] = _TYPES[param.type]
            if param.in_path:
                kw["nargs"] = "+"
            p.add_argument(*_options(ep, param), **kw)
        if ep.adjustable:
            add_adjust(p)
        add_table_out(p)
        add_base_url(p)
        p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ep = ENDPOINTS[args.endpoint]
    params: dict[str, Any] = {}
    for param in ep.params:
        value = getattr(args, param.name)
        if value is None:
            continue
        if param.type == "bool":
            value = value == "true"
        if param.in_path and len(value) == 1:
            value = value[0]
        if param.type == "fields":  # `--fields open,close` and `--fields open close` alike
            value = ",".join(value)
        params[param.name] = value
    for word in ("adjust", "as_of"):
        if getattr(args, word, None):
            params[word] = getattr(args, word)
    # the client (requests) loads only for a command that calls the service
    from marketframe.client import connect

    with connect(base_url=args.base_url, backend="arrow") as client:
        table = client.load(ep.name, **params)
    emit(table, args.out)
    return 0
