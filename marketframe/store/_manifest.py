"""The coverage manifest: which date intervals the store holds, per dataset and symbol.

One small JSON file, ``_manifest.json`` at the store root, rewritten atomically (temporary file +
``os.replace``) and only *after* the data it describes is in place. A dataset is identified by
``(endpoint, params fingerprint, timeframe)``; per symbol it records three lists of closed date
intervals:

``final``   fetched (or known empty by the service's rules) and no longer able to change
``open``    fetched but still able to change (today, the open session, an unfinished week or
            month, minute candles); fetched again by the next sync
``empty``   fetched successfully with zero rows (a subset of final or open): confirmed empty,
            e.g. before a listing or during a suspension, never confused with a failure

The file holds no secrets: endpoint names, parameter values that shape the data, dates.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marketframe.store._windows import Interval, intersect, merge, subtract

MANIFEST = "_manifest.json"
VERSION = 1
NO_SYMBOL = "*"  # endpoints without a symbol (corporate actions)


@dataclass(frozen=True)
class DatasetId:
    """What identifies a dataset: the endpoint, the parameters that change its data, timeframe."""

    endpoint: str
    params: str  # fingerprint, hive-safe ("default", "period-20", ...)
    timeframe: str | None

    @property
    def key(self) -> str:
        return f"{self.endpoint}|{self.params}|{self.timeframe or '-'}"


def _iv(pairs: list[list[str]]) -> list[Interval]:
    return [(dt.date.fromisoformat(a), dt.date.fromisoformat(b)) for a, b in pairs]


def _out(ivs: list[Interval]) -> list[list[str]]:
    return [[a.isoformat(), b.isoformat()] for a, b in ivs]


class Manifest:
    """In-memory view of ``_manifest.json``; thread-safe; :meth:`save` writes it atomically."""

    def __init__(self, root: Path):
        self.path = Path(root) / MANIFEST
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {"version": VERSION, "datasets": {}}
        self.reload()

    def reload(self) -> None:
        with self._lock:
            if self.path.exists():
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("version") != VERSION:
                    raise ValueError(f"{self.path}: manifest version {data.get('version')!r} "
                                     f"is not {VERSION}")
                self._data = data
            else:
                self._data = {"version": VERSION, "datasets": {}}

    def save(self) -> None:
        with self._lock:
            text = json.dumps(self._data, indent=1, sort_keys=True)
        tmp = self.path.with_name(f".{MANIFEST}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.path)

    # -- queries ----------------------------------------------------------------------------

    def _entry(self, ds: DatasetId, symbol: str) -> dict[str, list[list[str]]]:
        d = self._data["datasets"].get(ds.key, {})
        return d.get("symbols", {}).get(symbol, {})  # type: ignore[no-any-return]

    def final(self, ds: DatasetId, symbol: str) -> list[Interval]:
        with self._lock:
            return _iv(self._entry(ds, symbol).get("final", []))

    def intervals(self, ds: DatasetId, symbol: str) -> dict[str, list[Interval]]:
        with self._lock:
            e = self._entry(ds, symbol)
            return {k: _iv(e.get(k, [])) for k in ("final", "open", "empty")}

    def datasets(self) -> list[tuple[DatasetId, dict[str, Any]]]:
        with self._lock:
            out = []
            for d in self._data["datasets"].values():
                ds = DatasetId(d["endpoint"], d["params"], d.get("timeframe"))
                out.append((ds, json.loads(json.dumps(d))))
            return out

    # -- updates ----------------------------------------------------------------------------

    def record(self, ds: DatasetId, symbol: str, window: Interval, final_until: dt.date | None,
               *, empty: bool, params: dict[str, Any] | None = None) -> None:
        """``window`` was fetched successfully (``empty``: with zero rows)."""
        with self._lock:
            d = self._data["datasets"].setdefault(
                ds.key, {"endpoint": ds.endpoint, "params": ds.params,
                         "timeframe": ds.timeframe, "values": params or {}, "symbols": {}})
            e = d["symbols"].setdefault(symbol, {"final": [], "open": [], "empty": []})
            final, open_, empties = _iv(e["final"]), _iv(e["open"]), _iv(e["empty"])
            fin = intersect(window, (dt.date.min, final_until)) if final_until else None
            if fin is not None:
                final = merge([*final, fin])
            # the open part is what is neither final now nor final before
            open_ = [piece for iv in merge([*open_, window]) for piece in subtract(iv, final)]
            if empty:
                empties = merge([*empties, window])
            else:
                # a window that now has rows is no longer confirmed empty
                empties = [p for iv in empties for p in subtract(iv, [window])]
            e["final"], e["open"], e["empty"] = _out(final), _out(merge(open_)), _out(empties)
            e["updated"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
