"""Fields the schema does not know: kept as extra columns, never dropped.

Unknown keys of the envelope, of each row, and of known nested objects (``total``, ``raw``,
...) become columns named by their snake_case path; unknown nested objects are flattened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

import pyarrow as pa

from marketframe.schemas import Col, snake


def extra_array(vals: list[Any]) -> pa.Array[Any]:
    """An unknown field: inferred type; mixed JSON types are kept as JSON text."""
    try:
        return cast("pa.Array[Any]", pa.array(vals))  # the stubs' overloads: Any for list[Any]
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        return pa.array(
            [None if v is None else json.dumps(v, ensure_ascii=False) for v in vals],
            type=pa.string(),
        )


def _unknown_keys(items: Sequence[Any], known: set[str], all_dicts: bool = False) -> list[str]:
    dicts = items if all_dicts else [x for x in items if type(x) is dict]
    return sorted(set().union(*dicts) - known) if dicts else []


def _known_tree(cols: Sequence[Col]) -> dict[tuple[Any, ...], set[str]]:
    """prefix path -> keys known under it (list indices are skipped)."""
    tree: dict[tuple[Any, ...], set[str]] = {}
    for c in cols:
        prefix: tuple[Any, ...] = ()
        for key in c.path:
            if isinstance(key, int):
                prefix = (*prefix, key)
                continue
            tree.setdefault(tuple(k for k in prefix if not isinstance(k, int)), set()).add(key)
            prefix = (*prefix, key)
    return tree


#: the known tree of each schema's columns (schemas are built once and live as long as the
#: process): a small call no longer rebuilds it
_TREES: dict[tuple[int, ...], tuple[Sequence[Col], dict[tuple[Any, ...], set[str]]]] = {}


def _known_tree_of(cols: Sequence[Col]) -> dict[tuple[Any, ...], set[str]]:
    key = tuple(map(id, cols))
    hit = _TREES.get(key)
    if hit is None or len(_TREES) > 1024:
        if len(_TREES) > 1024:
            _TREES.clear()
        hit = _TREES[key] = (list(cols), _known_tree(cols))  # the columns kept alive with it
    return hit[1]


def extra_name(path: Sequence[str], taken: set[str]) -> str:
    """snake_case column name of an unknown field's path, made unique among ``taken``."""
    name = "_".join(snake(p) for p in path)
    while name in taken:
        name += "_extra"
    taken.add(name)
    return name


def extras(
    items: Sequence[Any], cols: Sequence[Col], ignore: frozenset[str], taken: set[str]
) -> list[tuple[str, list[Any]]]:
    """Unknown fields of ``items`` (rows, or one envelope; all dicts), flattened."""
    out: list[tuple[str, list[Any]]] = []
    tree = _known_tree_of(cols)

    def values(objs: list[Any], key: str) -> list[Any]:
        return [o.get(key) if type(o) is dict else None for o in objs]

    def visit(prefix: tuple[str, ...], objs: list[Any]) -> None:
        known = tree.get(prefix, set()) | (ignore if not prefix else set())
        for key in _unknown_keys(objs, known, all_dicts=not prefix):
            vals = values(objs, key)
            nonnull = [v for v in vals if v is not None]
            if nonnull and all(type(v) is dict for v in nonnull):  # an unknown object
                for sub in _unknown_keys(vals, set()):
                    out.append((extra_name((*prefix, key, sub), taken), values(vals, sub)))
                continue
            out.append((extra_name((*prefix, key), taken), vals))
        for key in sorted(tree.get(prefix, set())):
            if (*prefix, key) in tree:  # a known nested object: look for unknown keys inside
                visit((*prefix, key), values(objs, key))

    visit((), list(items))
    return out
