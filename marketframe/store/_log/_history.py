"""The store as it was: snapshots (a name pinned to a generation), the state of any earlier
generation (a snapshot's, or the one current at a time), and ``gc``, which removes only what
nothing pins.

``_snapshots/<name>.json`` names a generation; taking one writes a checkpoint of that
generation (if there was none), so a snapshot's state is one read however long the log grows.
A reader of a snapshot reads its files where they are if the store still holds them as they
were, else under ``_versions/`` (:func:`._io.version_path`), where every replaced file is kept.

``gc(keep)`` removes the kept versions replaced more than ``keep`` ago that neither the
current generation nor a snapshot records, and the log's entries and checkpoints before the
newest checkpoint older than ``keep`` (snapshots' checkpoints stay): every generation of the
last ``keep`` stays readable with ``as_of``, and every snapshot for as long as it exists.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from marketframe._time import TAIPEI
from marketframe.exceptions import InvalidParams, StoreCorrupted
from marketframe.store import _io
from marketframe.store._dataset import DatasetId
from marketframe.store._log import _entries
from marketframe.store._log._document import apply, check, fresh
from marketframe.store._log._entries import FORMAT, _Damaged, checkpoint_name, entry_name
from marketframe.store._log._log import Log, now
from marketframe.store._log._view import View
from marketframe.store._storage import Storage, _PreconditionFailed

SNAPSHOTS = "_snapshots"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_NAMES = "letters, digits, '.', '_' and '-', starting with a letter or digit (at most 100)"


@dataclass(frozen=True)
class Snapshot:
    """A name pinned to a generation of the store: ``time`` is when that generation was
    committed (UTC), ``created`` when the snapshot was taken."""

    name: str
    generation: int
    time: str | None
    created: str


@dataclass
class GcReport:
    """What :meth:`~marketframe.store.Store.gc` removed: superseded file versions and log
    files, the bytes they held, and the oldest time ``as_of`` can still read."""

    versions: int = 0
    log_files: int = 0
    bytes: int = 0
    readable_since: str | None = None
    kept: list[str] = field(default_factory=list)  # snapshots that pinned what it kept

    def __str__(self) -> str:
        since = f"; as_of reads back to {self.readable_since}" if self.readable_since else ""
        return (
            f"removed {self.versions} superseded file version(s) and {self.log_files} log "
            f"file(s), {self.bytes / 1e6:.1f} MB{since}"
        )


def _path(name: str) -> str:
    return f"{SNAPSHOTS}/{name}.json"


def check_name(name: Any, where: str = "Store.snapshot") -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidParams(where, "name", f"has value {name!r}", _NAMES)
    return name


def take(storage: Storage, log: Log, name: str) -> Snapshot:
    """Pin the current generation under ``name`` (under the writer's lock, nothing
    uncommitted)."""
    if storage.exists(_path(name)):
        _taken(storage, name)
    g = log.ensure_checkpoint()
    snap = Snapshot(name, g, log.time, now())
    body = {"format": FORMAT, "kind": "snapshot", **snap.__dict__}
    try:
        storage.create(_path(name), _entries.encode(body))
    except _PreconditionFailed:
        _taken(storage, name)
    return snap


def _taken(storage: Storage, name: str) -> None:
    raise InvalidParams(
        "Store.snapshot",
        "name",
        f"has value {name!r}, a snapshot's name (generation {get(storage, name).generation})",
        "a new name, or delete_snapshot(name) first",
    )


def get(storage: Storage, name: str, where: str = "Store", param: str = "as_of") -> Snapshot:
    try:
        body = _entries.decode(storage.read(_path(name)), "snapshot")
    except FileNotFoundError:
        names = ", ".join(s.name for s in listing(storage)) or "none yet"
        raise InvalidParams(
            where, param, f"has value {name!r}, which names no snapshot", f"the snapshots: {names}"
        ) from None
    except _Damaged as exc:
        raise StoreCorrupted(storage.path(_path(name)), str(exc)) from None
    return Snapshot(body["name"], int(body["generation"]), body.get("time"), body["created"])


def listing(storage: Storage) -> list[Snapshot]:
    out = []
    for name in sorted(storage.names(SNAPSHOTS)):
        if name.endswith(".json"):
            try:
                out.append(get(storage, name[: -len(".json")]))
            except (InvalidParams, StoreCorrupted):
                continue  # deleted meanwhile, or damaged: not listed
    return sorted(out, key=lambda s: (s.generation, s.name))


def delete(storage: Storage, name: str) -> None:
    get(storage, name, "Store.delete_snapshot", "name")  # unknown: an error naming them
    storage.delete(_path(name))


def state_at(storage: Storage, generation: int) -> View:
    """The state of ``generation``: the newest checkpoint at or before it, then the entries
    after it up to ``generation``."""
    if generation < 0:
        return View(generation=generation)
    names = (_entries.parse_name(n) for n in storage.names(_entries.FOLDER))
    starts = sorted((g for g, cp in (n for n in names if n is not None) if cp), reverse=True)
    for g in (g for g in starts if g <= generation):
        try:
            body = _entries.decode(storage.read(checkpoint_name(g)), "checkpoint")
        except (FileNotFoundError, _Damaged):
            continue
        doc = body["state"]
        if check(doc) is not None:
            continue
        time = body.get("time")
        for k in range(g + 1, generation + 1):
            entry = _read(storage, k)
            if entry.get("replaces"):
                whole = _entries.decode(storage.read(checkpoint_name(k)), "checkpoint")
                doc = whole["state"]
            else:
                apply(doc, entry.get("changes", {}))
            time = entry.get("time")
        return View(doc, generation, time)
    if starts == [] or min(starts) > generation:  # no checkpoint before: from the first entry
        try:
            return _replay_from_start(storage, generation)
        except FileNotFoundError:
            pass
    raise InvalidParams(
        "Store",
        "as_of",
        f"asks for generation {generation}, no longer in the store's log (gc removed it)",
        "a snapshot, or a time since the oldest generation gc kept",
    )


def _replay_from_start(storage: Storage, generation: int) -> View:
    doc, time = fresh(), None
    for k in range(0, generation + 1):
        entry = _read(storage, k)
        apply(doc, entry.get("changes", {}))
        time = entry.get("time")
    return View(doc, generation, time)


def _read(storage: Storage, g: int) -> dict[str, Any]:
    try:
        return _entries.decode(storage.read(entry_name(g)), "entry")
    except _Damaged as exc:
        raise StoreCorrupted(storage.path(entry_name(g)), str(exc)) from None


def generation_at(storage: Storage, log: Log, when: dt.datetime) -> int:
    """The last generation committed at or before ``when`` (-1: before the first commit)."""
    stamp = when.astimezone(dt.UTC).isoformat(timespec="microseconds")
    names = (_entries.parse_name(n) for n in storage.names(_entries.FOLDER))
    have = sorted(g for g, cp in (n for n in names if n is not None) if not cp)
    if not have:
        return log.generation if (log.time or "") <= stamp else -1
    lo, hi = 0, len(have) - 1
    first = str(_read(storage, have[0]).get("time", ""))
    if first > stamp:
        why = (
            "before the oldest generation the store keeps (gc removed the older ones)"
            if have[0] > 0
            else "before the store's first commit"
        )
        raise InvalidParams(
            "Store",
            "as_of",
            f"has value {when.isoformat()}, {why}",
            f"a snapshot, or a time since {first}",
        )
    while lo < hi:  # the last entry whose time is <= stamp
        mid = (lo + hi + 1) // 2
        if _read(storage, have[mid]).get("time", "") <= stamp:
            lo = mid
        else:
            hi = mid - 1
    return have[lo]


def gc(storage: Storage, log: Log, keep: dt.timedelta) -> GcReport:
    """Remove what nothing pins and ``keep`` does not cover (see the module docstring); call
    under the writer's lock with the log reloaded."""
    report = GcReport()
    cutoff = (dt.datetime.now(dt.UTC) - keep).isoformat(timespec="microseconds")
    snaps = listing(storage)
    pinned = log.hashes()
    for s in snaps:
        pinned |= state_at(storage, s.generation).hashes()
    versions = log.versions()
    for digest, info in versions.items():
        if str(info.get("time", "")) < cutoff and digest not in pinned:
            report.bytes += _delete(storage, _io.version_path(digest, ""))
            log.forget_version(digest)
            report.versions += 1
    # versions a killed writer kept but never recorded: removed once older than keep
    for rel in storage.files(_io.VERSIONS):
        digest = rel.rsplit("/", 1)[-1]
        if digest in versions or digest in pinned:
            continue
        if _older(storage, rel, cutoff):
            report.bytes += _delete(storage, rel)
            report.versions += 1
    report.log_files, report.readable_since = _trim_log(storage, snaps, cutoff)
    report.kept = [s.name for s in snaps]
    log.commit("gc")
    return report


def _older(storage: Storage, rel: str, cutoff: str) -> bool:
    found = storage.stat(rel)
    return found is not None and found[1].isoformat(timespec="microseconds") < cutoff


def _delete(storage: Storage, rel: str) -> int:
    found = storage.stat(rel)
    storage.delete(rel)
    return 0 if found is None else found[0]


def _trim_log(storage: Storage, snaps: list[Snapshot], cutoff: str) -> tuple[int, str | None]:
    """The log's files before the newest checkpoint committed before ``cutoff`` (a reader
    of any time since starts there), except the checkpoints snapshots read."""
    names = [(n, _entries.parse_name(n)) for n in storage.names(_entries.FOLDER)]
    found = sorted((p[0], p[1], n) for n, p in names if p is not None)
    start = None
    for g in sorted((g for g, cp, _ in found if cp), reverse=True):
        t = _time_of(storage, g)
        if t is not None and t <= cutoff:
            start = g
            break
    if start is None:
        return 0, _time_of(storage, found[0][0]) if found else None
    pinned = {s.generation for s in snaps}
    removed = 0
    for g, cp, name in found:
        if g < start and not (cp and g in pinned):
            storage.delete(f"{_entries.FOLDER}/{name}")
            removed += 1
    return removed, _time_of(storage, start)


def _time_of(storage: Storage, g: int) -> str | None:
    """When generation ``g`` was committed: its entry's time, else its checkpoint's (the
    checkpoint of an upgraded store has no entry)."""
    try:
        return str(_read(storage, g).get("time"))
    except FileNotFoundError:
        pass
    try:
        return str(_entries.decode(storage.read(checkpoint_name(g)), "checkpoint").get("time"))
    except (FileNotFoundError, _Damaged):
        return None


def _moment(storage: Storage, as_of: Any, where: str) -> Snapshot | dt.datetime:
    """What ``as_of`` names: a snapshot (by its name), or a time (a ``datetime``, naive
    meaning this machine's local time, or an ISO text with a time of day)."""
    if isinstance(as_of, str):
        if _NAME.match(as_of) and storage.exists(_path(as_of)):
            return get(storage, as_of)
        when = _parse_time(as_of)
        if when is None:
            names = ", ".join(s.name for s in listing(storage)) or "none yet"
            raise InvalidParams(
                where,
                "as_of",
                f"has value {as_of!r}, which names no snapshot and no time of day",
                f"a snapshot ({names}), or a time: a datetime or '2026-11-20T18:00' "
                "(a date alone is ambiguous: which moment of it?)",
            )
        return when
    if isinstance(as_of, dt.datetime):
        return as_of
    raise InvalidParams(where, "as_of", f"has value {as_of!r}", "a snapshot's name, or a datetime")


def generation_of(storage: Storage, log: Log, as_of: Any, where: str) -> int:
    """The generation ``as_of`` names (:func:`_moment`): a snapshot's, or the store's
    generation at that time."""
    named = _moment(storage, as_of, where)
    if isinstance(named, Snapshot):
        return named.generation
    # naive: this machine's local time, as datetime.now() gives (the store's history is
    # the time its commits were made, not a market's time)
    return generation_at(storage, log, named.astimezone())


def day_of(storage: Storage, as_of: Any, where: str) -> dt.date:
    """The Asia/Taipei day of the moment ``as_of`` names (:func:`_moment`): a snapshot's
    commit time, or the time given (naive: this machine's local time)."""
    named = _moment(storage, as_of, where)
    if isinstance(named, Snapshot):
        named = dt.datetime.fromisoformat(named.time or named.created)
    return named.astimezone().astimezone(TAIPEI).date()


def _parse_time(text: str) -> dt.datetime | None:
    if "T" not in text and " " not in text.strip():
        return None  # a date alone: refused, not read as midnight
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def read_file(
    storage: Storage,
    current: View,
    ds: DatasetId,
    rel: str,
    rec: dict[str, Any],
    hint: str = "",
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """A file as an earlier generation recorded it: in place when the current generation
    records the same version, else its kept version under ``_versions/`` (the other place
    is tried too: a file replaced while this was read)."""
    now_rec = current.file(ds, rel)
    kept = _io.version_path(str(rec.get("hash", "")), rel)
    same = now_rec is not None and now_rec.get("hash") == rec.get("hash")
    first, second = (rel, kept) if same else (kept, rel)
    try:
        return storage.read_file(first, rec, hint, columns)
    except StoreCorrupted as exc:
        try:
            return storage.read_file(second, rec, hint, columns)
        except StoreCorrupted:
            raise StoreCorrupted(
                storage.path(rel),
                "is not in the store as this generation recorded it, in place or kept "
                "(gc removed it, or it was damaged)",
                hint,
            ) from exc
