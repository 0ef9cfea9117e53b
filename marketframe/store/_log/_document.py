"""The state the log describes, as one JSON document, and the changes its entries carry.

The state is what the store holds at one generation::

    {"version": 3,
     "datasets": {<DatasetId.key>: {"endpoint", "params", "timeframe", "values",
                                    "symbols": {<symbol>: {"final", "open", "empty", ...}},
                                    "files": {<path>: {"size", "rows", "hash", ...}}}},
     "versions": {<hash>: {"rel", "generation", "time"}}}

``symbols`` holds per symbol three lists of closed date intervals (``final``: fetched and no
longer able to change; ``open``: fetched but still able to change, refetched by the next sync;
``empty``: fetched with zero rows, a subset of the other two) and what compute notes (its
state file, rows). ``files`` holds each recorded file's size, content hash, rows and the
storage's stamp (a modification time or an MD5), with the ``pending`` version that may
replace it. ``versions`` lists the superseded files kept under ``_versions/``.

A change set (an entry's ``changes``) names items by kind (``datasets``, ``symbols``,
``files``, ``versions``) and gives each one's new value whole, or None for removed: applying
it is a set or a delete per item, so an entry holds only what its commit changed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson

from marketframe.endpoints import Interval
from marketframe.store import _io
from marketframe.store._dataset import NO_SYMBOL, DatasetId

VERSION = 3  # 3: the log (2: one _manifest.json, directory keys tf=/sym=, file records)
KINDS = ("datasets", "symbols", "files", "versions")

Doc = dict[str, Any]
Changes = dict[str, dict[str, Any]]


def fresh() -> Doc:
    return {"version": VERSION, "datasets": {}, "versions": {}}


def to_intervals(pairs: list[list[str]]) -> list[Interval]:
    return [(dt.date.fromisoformat(a), dt.date.fromisoformat(b)) for a, b in pairs]


def to_pairs(ivs: list[Interval]) -> list[list[str]]:
    return [[a.isoformat(), b.isoformat()] for a, b in ivs]


def copy(doc: Any) -> Any:
    """A deep copy of JSON data (plain dicts, lists, strings and numbers)."""
    return orjson.loads(orjson.dumps(doc))


def dataset_meta(ds: DatasetId, values: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "endpoint": ds.endpoint,
        "params": ds.params,
        "timeframe": ds.timeframe,
        "values": values or {},
    }


def _dataset(doc: Doc, key: str) -> dict[str, Any]:
    d: dict[str, Any] = doc["datasets"].setdefault(key, {"symbols": {}, "files": {}})
    d.setdefault("symbols", {})
    d.setdefault("files", {})
    return d


def apply(doc: Doc, changes: Changes) -> None:
    """Apply a change set to ``doc`` in place (the values are taken as they are: callers
    pass values nobody else holds)."""
    for key, meta in changes.get("datasets", {}).items():
        if meta is None:
            doc["datasets"].pop(key, None)
        else:
            _dataset(doc, key).update(meta)
    for field in ("symbols", "files"):
        for key, items in changes.get(field, {}).items():
            held = _dataset(doc, key)[field]
            for name, value in items.items():
                if value is None:
                    held.pop(name, None)
                else:
                    held[name] = value
    versions = doc.setdefault("versions", {})
    for h, info in changes.get("versions", {}).items():
        if info is None:
            versions.pop(h, None)
        else:
            versions[h] = info


def touched(changes: Changes) -> set[tuple[str, str]]:
    """The (dataset key, symbol) pairs a change set writes: its symbols' entries and files
    (a dataset without symbols is one pair)."""
    out = {(k, s) for k, items in changes.get("symbols", {}).items() for s in items}
    for key, items in changes.get("files", {}).items():
        for rel in items:
            out.add((key, _io.where(rel)[0] or NO_SYMBOL))
    return out


def check(doc: Any) -> str | None:
    """What is wrong with a state document, or None."""
    if not isinstance(doc, dict) or not isinstance(doc.get("datasets"), dict):
        return "is damaged (not a marketframe store's state)"
    for d in doc["datasets"].values():
        if not isinstance(d, dict) or not {"endpoint", "params", "symbols"} <= set(d):
            return "is damaged (a dataset entry is incomplete)"
    return None
