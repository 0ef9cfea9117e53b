"""The manifest's JSON document: its file names and layout version, dataset ids, how a
document is parsed and checked, and how one writer's changes merge into the latest
(:class:`marketframe.store._manifest.Manifest` keeps one in memory and saves it)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import orjson

from marketframe.endpoints import Interval
from marketframe.store._dataset import NO_SYMBOL, DatasetId

MANIFEST = "_manifest.json"
PREVIOUS = "_manifest.prev.json"  # the generation before the last save, kept for repair
VERSION = 2  # 2: directory keys tf=/sym=, one physical schema, file records


def to_intervals(pairs: list[list[str]]) -> list[Interval]:
    return [(dt.date.fromisoformat(a), dt.date.fromisoformat(b)) for a, b in pairs]


def to_pairs(ivs: list[Interval]) -> list[list[str]]:
    return [[a.isoformat(), b.isoformat()] for a, b in ivs]


def symbol_view(data: dict[str, Any], ds: DatasetId, symbol: str) -> Any:
    """What ``data`` records of one symbol: its intervals and its files."""
    d = data["datasets"].get(ds.key, {})
    part = f"sym={symbol}/"
    files = {
        rel: rec for rel, rec in d.get("files", {}).items() if symbol == NO_SYMBOL or part in rel
    }
    entry = {k: v for k, v in d.get("symbols", {}).get(symbol, {}).items() if k != "updated"}
    return json.dumps([entry, files], sort_keys=True)


def fresh() -> dict[str, Any]:
    return {"version": VERSION, "datasets": {}}


def _copy(doc: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON document (plain dicts, lists, strings and numbers)."""
    copied: dict[str, Any] = json.loads(json.dumps(doc))
    return copied


def merge_writer(
    base: dict[str, Any], mine: dict[str, Any], touched: set[tuple[str, str, str]]
) -> dict[str, Any]:
    """``base`` (the latest manifest) with this writer's changed entries from ``mine``."""
    if ("all", "", "") in touched:
        return _copy(mine)
    out = _copy(base)
    for kind, key, name in sorted(touched):
        src = mine["datasets"].get(key)
        if src is None:
            continue
        dst = out["datasets"].setdefault(
            key, {k: v for k, v in src.items() if k not in ("symbols", "files")}
        )
        dst.setdefault("symbols", {})
        dst.setdefault("files", {})
        if kind in ("sym", "file"):
            field = "symbols" if kind == "sym" else "files"
            if name in src.get(field, {}):
                dst[field][name] = json.loads(json.dumps(src[field][name]))
            else:
                dst[field].pop(name, None)
    return out


def dump(data: dict[str, Any]) -> bytes:
    """A manifest's bytes: sorted keys, indented. orjson writes a store's manifest of
    thousands of file records in a tenth of the time of ``json.dumps`` (every compute and
    sync saves it whole)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    except TypeError:  # what orjson does not write (a non-string key): the standard library
        return json.dumps(data, indent=1, sort_keys=True).encode()


def parse(path: Path) -> tuple[dict[str, Any], str | None]:
    """The manifest at ``path`` and None, or an empty one and what is wrong with it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return fresh(), f"cannot be read ({exc.strerror})"
    return parse_bytes(raw)


def parse_bytes(raw: bytes) -> tuple[dict[str, Any], str | None]:
    """A manifest's bytes parsed and None, or an empty one and what is wrong with them."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return fresh(), f"is damaged ({type(exc).__name__}: {exc})"
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), dict):
        return fresh(), "is damaged (not a marketframe manifest)"
    if data.get("version") != VERSION:
        return fresh(), (
            f"has layout version {data.get('version')!r}, not {VERSION} (written "
            "by another marketframe version)"
        )
    for d in data["datasets"].values():
        if not isinstance(d, dict) or not {"endpoint", "params", "symbols"} <= set(d):
            return fresh(), "is damaged (a dataset entry is incomplete)"
    return data, None
