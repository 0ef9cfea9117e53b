"""The endpoint tree's parts: one :class:`Call` per endpoint row (its signature and
docstring read from the row) under :class:`Node` groups; :func:`grow` hangs them on a
``Client``, each leaf handed the client's ``load``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from marketframe.endpoints import ENDPOINTS, Endpoint, aliases
from marketframe.exceptions import InvalidParams, did_you_mean


def grow(root: object, load: Callable[..., Any]) -> None:
    """The tree on ``root`` (a client): a :class:`Node` per group, a :class:`Call` of
    ``load`` (the client's) per endpoint row."""
    for ep in ENDPOINTS.values():
        node: Any = root
        parts = ep.name.split(".")
        for i, part in enumerate(parts[:-1]):
            if not hasattr(node, part):
                setattr(node, part, Node(".".join(parts[: i + 1])))
            node = getattr(node, part)
        setattr(node, parts[-1], Call(load, ep))


class Call:
    """One leaf of the tree: ``client.stock.intraday.quote(symbol="2330")``, which is
    ``load("stock.intraday.quote", symbol="2330")``."""

    def __init__(self, load: Callable[..., Any], ep: Endpoint):
        self._load = load
        self.endpoint = ep
        self.__name__ = ep.name.rsplit(".", 1)[1]
        self.__qualname__ = ep.name
        self.__doc__ = docstring(ep)
        self.__signature__ = signature(ep)

    def __call__(self, *args: Any, **params: Any) -> Any:
        """``quote("2330")`` is ``quote(symbol="2330")``: the first required parameter may be
        given by position; every other parameter is keyword-only."""
        if args:
            first = next((p.name for p in self.endpoint.params if p.required), None)
            if first is None or len(args) > 1:
                raise InvalidParams(
                    self.endpoint.name,
                    "*args",
                    f"takes {'one' if first else 'no'} positional value",
                    f"{first}=... by position or name; the others by name"
                    if first
                    else "keyword parameters",
                )
            if first in params:
                raise InvalidParams(
                    self.endpoint.name,
                    first,
                    "is given twice (by position and by name)",
                    "one of the two",
                )
            params[first] = args[0]
        return self._load(self.endpoint.name, **params)

    def __repr__(self) -> str:
        return f"<marketframe endpoint {self.endpoint.name}{self.__signature__}>"


class Node:
    """An inner node of the tree (``client.stock``, ``client.stock.intraday``)."""

    def __init__(self, path: str):
        self._path = path

    def __repr__(self) -> str:
        kids = sorted(k for k in vars(self) if not k.startswith("_"))
        return f"<marketframe {self._path}: {', '.join(kids)}>"

    def __dir__(self) -> list[str]:
        return sorted(k for k in vars(self) if not k.startswith("_"))

    def __getattr__(self, name: str) -> Any:  # only called for names the tree lacks
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(
            f"{self._path} has no endpoint or group {name!r}"
            f"{did_you_mean(name, self.__dir__())}; it has: "
            f"{', '.join(self.__dir__())}"
        )


def signature(ep: Endpoint) -> inspect.Signature:
    """The first required parameter by position or name, every other one by name; a
    parameter that a glossary word (``symbols``, ``start``, ``end``, ``odd_lot``) can stand for
    has a default of None (one of the two spellings is required), and the words follow."""
    ordered = sorted(ep.params, key=lambda p: not p.required)
    words = aliases(ep)
    params = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD
            if i == 0 and p.required
            else inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty
            if p.required and p.name not in words.values()
            else None,
        )
        for i, p in enumerate(ordered)
    ]
    params += [inspect.Parameter(w, inspect.Parameter.KEYWORD_ONLY, default=None) for w in words]
    if ep.adjustable:  # prices adjusted locally (docs/adjusted.md)
        params += [
            inspect.Parameter(w, inspect.Parameter.KEYWORD_ONLY, default=None)
            for w in ("adjust", "as_of")
        ]
    return inspect.Signature(params)


def docstring(ep: Endpoint) -> str:
    lines = [f"{ep.doc or ep.name}: GET {ep.path} (plan: {ep.plan}).", "", "Parameters:"]
    for p in ep.params:
        allowed = f" one of {', '.join(p.allowed)}" if p.allowed else ""
        req = "required" if p.required else "optional"
        lines.append(f"  {p.name} ({p.type}, {req}){allowed} {p.doc}".rstrip())
    if ep.adjustable:
        lines.append(
            "  adjust (str, optional) one of splits, all: prices adjusted locally from "
            "the corporate actions (docs/adjusted.md)"
        )
        lines.append(
            "  as_of (date, optional) with adjust: only the actions that had happened by that day"
        )
    lines.append("")
    lines.append("Columns: " + ", ".join(ep.schema.names))
    return "\n".join(lines)
