"""The coverage manifest: which date intervals the store holds, per dataset and symbol.

One small JSON file, ``_manifest.json`` at the store root, rewritten atomically (fsynced
temporary file + ``os.replace``, the previous generation kept as ``_manifest.prev.json``) and
only *after* the data it describes is in place. It also records each partition file's size,
modification time, row count and content hash, checked on read, sync and verify. A dataset
is identified by ``(endpoint, params fingerprint, timeframe)``; per symbol it records three
lists of closed date intervals:

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
from typing import Any

from marketframe.endpoints import Interval, intersect, merge, subtract
from marketframe.exceptions import StoreCorrupted
from marketframe.store._dataset import DatasetId
from marketframe.store._log._document import (
    MANIFEST,
    PREVIOUS,
    dump,
    fresh,
    merge_writer,
    parse,
    parse_bytes,
    symbol_view,
    to_intervals,
    to_pairs,
)
from marketframe.store._storage._base import PreconditionFailed, fsync_dir


class Manifest:
    """In-memory view of ``_manifest.json``; thread-safe; :meth:`save` writes it durably.

    A manifest that cannot be parsed does not stop the store from opening: :attr:`damage`
    says why, and every use of it raises :class:`StoreCorrupted` until
    ``verify(repair=True)`` restores it (from the previous generation when that is intact).
    """

    def __init__(self, storage: Any):
        self.storage = storage if storage.remote else None
        self.root = storage.root if self.storage is None else storage.url
        self.path = self.root / MANIFEST if self.storage is None else storage.path(MANIFEST)
        self._lock = threading.RLock()
        # object stores: what this writer changed, merged into the latest manifest on save
        self._touched: set[tuple[str, str, str]] = set()
        self._data: dict[str, Any] = fresh()
        self._seen: dict[str, Any] = fresh()  # object stores: the generation last read/saved
        self._stamp: tuple[int, int, int] | None = None
        self.damage: str | None = None
        self._dirty = False  # changed since it was read or saved
        self._keep_current = True  # the file on disk is intact: the next save keeps it
        self.reload()

    def reload(self) -> None:
        """Read the file again if it changed (a cheap ``stat`` when it did not)."""
        with self._lock:
            if self.storage is not None:
                return self._reload_remote()
            try:
                st = self.path.stat()
            except FileNotFoundError:
                self._data, self._stamp, self.damage = fresh(), None, None
                return
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
            if stamp == self._stamp:
                return
            data, problem = parse(self.path)
            self._stamp, self._dirty = stamp, False
            self._data, self.damage = (data, None) if problem is None else (fresh(), problem)
            self._keep_current = problem is None

    def check(self) -> None:
        """Raise :class:`StoreCorrupted` if the manifest could not be read."""
        if self.damage is not None:
            raise StoreCorrupted(self.path, self.damage)

    def replace_data(self, data: dict[str, Any]) -> None:
        """Adopt ``data`` (a repaired manifest); :meth:`save` writes it."""
        with self._lock:
            self._data, self.damage, self._dirty = data, None, True
            self._touched.add(("all", "", ""))

    def save(self) -> None:
        with self._lock:  # one save at a time: an older snapshot never lands last
            self.check()
            if self.storage is not None:
                return self._save_remote()
            if not self._dirty and self.path.exists():
                return  # nothing changed: a sync that fetched nothing writes nothing
            text = dump(self._data)
            tmp = self.path.with_name(f".{MANIFEST}.{os.getpid()}.{threading.get_ident()}.tmp")
            with open(tmp, "wb") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            if self.path.exists() and self._keep_current:
                prev = tmp.with_name(tmp.name + ".prev")
                prev.unlink(missing_ok=True)
                os.link(self.path, prev)  # the current generation becomes the previous one
                os.replace(prev, self.root / PREVIOUS)
            os.replace(tmp, self.path)
            fsync_dir(self.root)
            st = self.path.stat()
            self._stamp, self._dirty = (st.st_ino, st.st_size, st.st_mtime_ns), False
            self._keep_current = True

    # -- object storage: compare-and-swap ---------------------------------------------------

    def _reload_remote(self) -> None:
        """One HEAD when the manifest did not change (its ETag), else one GET."""
        info = self.storage.info(MANIFEST)
        if (
            info is not None
            and self._stamp is not None
            and str(info.get("ETag", "")).strip('"') == self._stamp
        ):
            return
        found = self.storage.read_versioned(MANIFEST)
        if found is None:
            self._data, self._stamp, self.damage, self._seen = fresh(), None, None, fresh()
            return
        raw, tag = found
        if tag == self._stamp:
            return
        data, problem = parse_bytes(raw)
        self._stamp, self._dirty, self._touched = tag, False, set()
        self._data, self.damage = (data, None) if problem is None else (fresh(), problem)
        self._seen = json.loads(json.dumps(self._data))
        self._keep_current = problem is None

    def refresh(self, ds: DatasetId, symbol: str) -> bool:
        """Object stores: adopt the latest manifest under this writer's unsaved changes, and
        say whether ``symbol``'s records (its intervals, its files) in it differ from this
        writer's view: someone else wrote them, so the view is stale. (A local store is
        under one lock: never stale.)"""
        with self._lock:
            if self.storage is None:
                return False
            found = self.storage.read_versioned(MANIFEST)
            if found is None or found[1] == self._stamp:
                return False
            raw, tag = found
            base, problem = parse_bytes(raw)
            if problem is not None:
                return False  # the next save reports it (or a repair replaces it)
            stale = symbol_view(base, ds, symbol) != symbol_view(self._seen, ds, symbol)
            self._data = merge_writer(base, self._data, self._touched)
            self._stamp, self._keep_current, self._seen = tag, True, base
            return stale

    def _save_remote(self) -> None:
        """Write the manifest only if nobody wrote it since this writer last read or wrote it
        (``If-Match`` on that ETag): then it is this writer's view, one PUT. Otherwise read
        the latest, merge in what this writer changed and try again. Writers hold leases on
        disjoint symbols, so their changes never overlap. The generation replaced is kept as
        ``_manifest.prev.json`` by a server-side copy."""

        if not self._dirty and self._stamp is not None:
            return
        tag, merged = self._stamp, self._data  # optimistic: nobody wrote since our last look
        intact = tag is not None and self._keep_current  # the current generation parsed
        while True:
            if intact:  # never a damaged manifest over the generation a repair restores from
                self.storage.copy(MANIFEST, PREVIOUS)
            if self.storage.guard is not None:
                self.storage.guard()
            try:
                new_tag = self.storage.put_if(MANIFEST, dump(merged), tag)
                break
            except PreconditionFailed:  # another writer saved in between: merge into theirs
                pass
            found = self.storage.read_versioned(MANIFEST)
            raw, tag = found if found is not None else (None, None)
            base, problem = parse_bytes(raw) if raw is not None else (fresh(), None)
            if problem is not None and ("all", "", "") not in self._touched:
                self.damage = problem
                self.check()
            intact = raw is not None and problem is None
            merged = merge_writer(base, self._data, self._touched)
        self._data, self._stamp, self._dirty = merged, new_tag, False
        self._touched, self.damage, self._keep_current = set(), None, True
        self._seen = json.loads(json.dumps(merged))

    # -- queries ----------------------------------------------------------------------------

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

    def datasets(self) -> list[tuple[DatasetId, dict[str, Any]]]:
        with self._lock:
            self.check()
            out = []
            for d in self._data["datasets"].values():
                ds = DatasetId(d["endpoint"], d["params"], d.get("timeframe"))
                out.append((ds, json.loads(json.dumps(d))))
            return out

    def files(self, ds: DatasetId) -> dict[str, dict[str, Any]]:
        """The dataset's partition files (paths relative to the root) and their records."""
        with self._lock:
            self.check()
            d = self._data["datasets"].get(ds.key, {})
            return dict(d.get("files", {}))  # records are replaced, never changed in place

    def file(self, ds: DatasetId, rel: str) -> dict[str, Any] | None:
        with self._lock:
            self.check()
            d = self._data["datasets"].get(ds.key, {})
            rec = d.get("files", {}).get(rel)
            return dict(rec) if rec is not None else None

    # -- updates ----------------------------------------------------------------------------

    def _dataset(self, ds: DatasetId, params: dict[str, Any] | None) -> dict[str, Any]:
        """The dataset's entry, for a change (every update goes through here)."""
        self.check()
        self._dirty = True
        self._touched.add(("ds", ds.key, ""))
        d = self._data["datasets"].setdefault(
            ds.key,
            {
                "endpoint": ds.endpoint,
                "params": ds.params,
                "timeframe": ds.timeframe,
                "values": params or {},
                "symbols": {},
            },
        )
        d.setdefault("files", {})
        return d  # type: ignore[no-any-return]

    def pend_file(
        self, ds: DatasetId, rel: str, rec: dict[str, Any], params: dict[str, Any] | None = None
    ) -> None:
        """``rec`` is about to replace file ``rel``: either version is accepted until
        :meth:`commit_file` (a process killed between the rename and the manifest's save
        leaves a file that is new, not corrupt)."""
        with self._lock:
            files = self._dataset(ds, params)["files"]
            self._touched.add(("file", ds.key, rel))
            files[rel] = {**files.get(rel, {}), "pending": [dict(rec)]}

    def commit_file(self, ds: DatasetId, rel: str, rec: dict[str, Any]) -> None:
        with self._lock:
            self._dataset(ds, None)["files"][rel] = dict(rec)
            self._touched.add(("file", ds.key, rel))

    def drop_file(self, ds: DatasetId, rel: str) -> None:
        with self._lock:
            self._dataset(ds, None)["files"].pop(rel, None)
            self._touched.add(("file", ds.key, rel))

    def drop_symbol(self, ds: DatasetId, symbol: str) -> None:
        """Forget what is held of ``symbol`` (its files were damaged): the next sync refetches."""
        with self._lock:
            self._dataset(ds, None)["symbols"].pop(symbol, None)
            self._touched.add(("sym", ds.key, symbol))

    def note(self, ds: DatasetId, symbol: str, key: str, value: Any) -> None:
        """Keep ``value`` (JSON) under ``key`` in the symbol's entry (a derived dataset's
        state file); None removes it. Merged on object stores like the symbol's intervals."""
        with self._lock:
            d = self._dataset(ds, None)
            self._touched.add(("sym", ds.key, symbol))
            e = d["symbols"].setdefault(symbol, {"final": [], "open": [], "empty": []})
            if value is None:
                e.pop(key, None)
            else:
                e[key] = value

    def noted(self, ds: DatasetId, symbol: str, key: str) -> Any:
        """What :meth:`note` kept, or None."""
        with self._lock:
            return self._entry(ds, symbol).get(key)

    def record(
        self,
        ds: DatasetId,
        symbol: str,
        window: Interval,
        final_until: dt.date | None,
        *,
        empty: bool,
        params: dict[str, Any] | None = None,
    ) -> None:
        """``window`` was fetched successfully (``empty``: with zero rows)."""
        with self._lock:
            d = self._dataset(ds, params)
            self._touched.add(("sym", ds.key, symbol))
            e = d["symbols"].setdefault(symbol, {"final": [], "open": [], "empty": []})
            final, open_, empties = (
                to_intervals(e["final"]),
                to_intervals(e["open"]),
                to_intervals(e["empty"]),
            )
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
            e["final"], e["open"], e["empty"] = (
                to_pairs(final),
                to_pairs(merge(open_)),
                to_pairs(empties),
            )
            e["updated"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
