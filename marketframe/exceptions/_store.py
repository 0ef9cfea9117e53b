"""The Parquet store and its storage (``marketframe.store`` re-exports these)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

from marketframe.exceptions._base import MarketframeError, MarketframeWarning

__all__ = [
    "SyncError",
    "StoreCorrupted",
    "StoreReadOnly",
    "StoreLocked",
    "ComputeInterrupted",
    "NotSynced",
    "PartlySynced",
    "StoreUnavailable",
    "LeaseLost",
]


class Failed(Protocol):
    """One item a sync could not fetch (a ``marketframe.store.Failure``)."""

    @property
    def symbol(self) -> str | None: ...


class Report(Protocol):
    """What a :class:`SyncError` carries: a ``marketframe.store.SyncReport``, as the errors
    see it (the store imports the errors; the errors, at the bottom, never import the store).
    ``str()`` of it is the error's message."""

    @property
    def failures(self) -> Sequence[Failed]: ...


class SyncError(MarketframeError):
    """Some windows of a sync failed; everything else was written; `.report` lists them."""

    def __init__(self, report: Report):
        self.report = report
        super().__init__(str(report))


class StoreCorrupted(MarketframeError):
    """A store file (partition, or the log's) is damaged, missing or not the one recorded.

    Nothing is read from it; ``.path`` names it. ``store.verify(repair=True)`` (or
    ``marketframe verify --store ROOT --repair``) refetches what it held.
    """

    def __init__(self, path: str | os.PathLike[str], problem: str, fix: str = ""):
        self.path = str(path)
        fix = fix or (
            "run `marketframe verify --store STORE --repair` (or store.verify(repair=True))"
        )
        super().__init__(f"{self.path} {problem}; to repair it, {fix}")


class StoreReadOnly(MarketframeError, PermissionError):
    """The store is on a read-only file system (or not writable by this user) and the call
    needs to write: a sync with windows to fetch, a repair. Reading, ``coverage()``,
    ``verify()`` and a sync of what is already held work without writing."""

    hint = "sync into a writable copy of the store, or remount it read-write"

    def __init__(self, path: str | os.PathLike[str], what: str, why: str):
        self.path = str(path)
        MarketframeError.__init__(
            self, f"{self.path} is read-only ({why}): {what} needs to write to it"
        )


class StoreLocked(MarketframeError):
    """Another process is syncing this store (on an object store: these symbols) and
    ``lock_timeout`` ran out before it finished; ``.held`` says who holds what."""

    def __init__(self, path: str | os.PathLike[str], timeout: float, held: str = ""):
        self.path = str(path)
        self.held = held  # object stores: which symbols, by which writer, until when
        what = f" ({held})" if held else ""
        super().__init__(
            f"{self.path} is locked by another sync{what} (waited {timeout:g} s); "
            "wait "
            "for it to finish, or give Store(..., lock_timeout=SECONDS) a longer "
            "wait (-1 waits forever)"
        )


class ComputeInterrupted(MarketframeError):
    """A worker process of :meth:`Store.compute`'s own pool died before its task finished
    (killed, out of memory). What the other tasks finished is recorded; a rerun resumes,
    computing only what is missing."""

    hint = "rerun store.compute(...): it resumes where this run stopped"

    def __init__(self, path: str | os.PathLike[str], why: str):
        self.path = str(path)
        super().__init__(
            f"{self.path}: a worker process of compute's pool died ({why}); the symbols "
            "finished before are recorded. Rerun store.compute(...): it resumes where this "
            "run stopped"
        )


class NotSynced(MarketframeError, LookupError):
    """:meth:`Store.read` asked for a dataset, symbol or date range the store never synced.

    Raised instead of an empty frame, which would read as "no trading". ``.missing`` lists
    ``(symbol, start, end)`` (None: any date); the message gives the ``store.sync(...)`` call
    that fetches it.
    """

    def __init__(self, dataset: str, missing: list[tuple[str | None, Any, Any]], fix: str):
        self.dataset = dataset
        self.missing = missing
        shown = ", ".join(_span(*m) for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        super().__init__(f"the store holds nothing of {dataset} for {shown}{more}; run {fix} first")


class PartlySynced(MarketframeWarning):
    """:meth:`Store.read` returned what the store holds, but part of the asked range was
    never synced (the message names it and the ``sync`` that fetches it)."""


def _span(symbol: str | None, start: Any, end: Any) -> str:
    who = symbol if symbol is not None else "every symbol"
    if start is None and end is None:
        return who
    return f"{who} {start or '...'}..{end or '...'}"


class StoreUnavailable(MarketframeError, OSError):
    """The object store could not be reached or did not answer in time (``.what`` names the
    operation tried, never credentials). Nothing after it was written; rerun when the store
    answers again (a sync resumes where it stopped)."""

    hint = "check the network and the endpoint URL, then rerun (a sync resumes)"

    def __init__(self, what: str, problem: str):
        self.what = what
        MarketframeError.__init__(self, f"{what}: {problem}")


class LeaseLost(StoreLocked):
    """An object-store sync could not renew its lease (it stalled longer than ``lease_ttl``,
    or lost the network, and another writer took the symbol over): it stopped before writing
    again. What it wrote before is intact; rerun the sync."""

    def __init__(self, path: str, ttl: float, held: str):
        self.path, self.held = path, held
        MarketframeError.__init__(self, f"{path}: {held} (lease_ttl {ttl:g} s)")
