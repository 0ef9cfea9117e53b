"""What a store holds at one generation, as the sync, reads, verify and compute ask it: a
dataset's symbols and intervals, its files and their records. :class:`View` answers from a
state document; the log (:class:`._log.Log`) is a view that moves with the store, and a view
of an earlier generation reads a snapshot or ``as_of``."""

from __future__ import annotations

import threading
from typing import Any

from marketframe.endpoints import Interval
from marketframe.exceptions import StoreCorrupted
from marketframe.store._dataset import DatasetId
from marketframe.store._log._document import Doc, copy, fresh, to_intervals


class View:
    """The state of a store at ``generation`` (``-1``: nothing recorded yet), read-only.

    ``damage`` says why the state could not be read (every query then raises
    :class:`StoreCorrupted`); ``path`` is what errors name.
    """

    def __init__(self, doc: Doc | None = None, generation: int = -1, time: str | None = None):
        self._lock = threading.RLock()
        self._data: Doc = doc if doc is not None else fresh()
        self.generation = generation
        self.time = time  # when the generation was committed (UTC, ISO), if known
        self.damage: str | None = None
        self.path: Any = "_log"

    def check(self) -> None:
        """Raise :class:`StoreCorrupted` if the state could not be read."""
        if self.damage is not None:
            raise StoreCorrupted(self.path, self.damage)

    def _entry(self, ds: DatasetId, symbol: str) -> dict[str, list[list[str]]]:
        self.check()
        d = self._data["datasets"].get(ds.key, {})
        return d.get("symbols", {}).get(symbol, {})  # type: ignore[no-any-return]

    def final(self, ds: DatasetId, symbol: str) -> list[Interval]:
        with self._lock:
            return to_intervals(self._entry(ds, symbol).get("final", []))

    def intervals(self, ds: DatasetId, symbol: str) -> dict[str, list[Interval]]:
        with self._lock:
            e = self._entry(ds, symbol)
            return {k: to_intervals(e.get(k, [])) for k in ("final", "open", "empty")}

    def noted(self, ds: DatasetId, symbol: str, key: str) -> Any:
        """What was noted under ``key`` in the symbol's entry (a derived state), or None."""
        with self._lock:
            return self._entry(ds, symbol).get(key)

    def datasets(self) -> list[tuple[DatasetId, dict[str, Any]]]:
        with self._lock:
            self.check()
            out = []
            for d in self._data["datasets"].values():
                ds = DatasetId(d["endpoint"], d["params"], d.get("timeframe"))
                out.append((ds, copy(d)))
            return out

    def symbols(self, ds: DatasetId) -> list[str]:
        """The symbols the dataset records, sorted."""
        with self._lock:
            self.check()
            return sorted(self._data["datasets"].get(ds.key, {}).get("symbols", {}))

    def files(self, ds: DatasetId) -> dict[str, dict[str, Any]]:
        """The dataset's files (paths relative to the root) and their records."""
        with self._lock:
            self.check()
            d = self._data["datasets"].get(ds.key, {})
            return dict(d.get("files", {}))  # records are replaced, never changed in place

    def file(self, ds: DatasetId, rel: str) -> dict[str, Any] | None:
        with self._lock:
            self.check()
            rec = self._data["datasets"].get(ds.key, {}).get("files", {}).get(rel)
            return dict(rec) if rec is not None else None

    def versions(self) -> dict[str, dict[str, Any]]:
        """The superseded files kept under ``_versions/``: hash -> where it was, when."""
        with self._lock:
            return dict(self._data.get("versions", {}))

    def hashes(self) -> set[str]:
        """Every content hash the state's file records name (pending versions too)."""
        with self._lock:
            out: set[str] = set()
            for d in self._data["datasets"].values():
                for rec in d.get("files", {}).values():
                    if "hash" in rec:
                        out.add(rec["hash"])
                    out.update(p["hash"] for p in rec.get("pending", ()) if "hash" in p)
            return out
