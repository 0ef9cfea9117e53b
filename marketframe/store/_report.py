"""What a sync did, and the error raised when any part of it failed."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from typing import Any

from marketframe.exceptions import MarketframeError, MarketframeWarning


@dataclass(frozen=True)
class Failure:
    """One (symbol, window) that could not be fetched; its range stays missing."""

    symbol: str | None
    start: dt.date | None
    end: dt.date | None
    error: str  # the exception's type and message (never the key)

    def __str__(self) -> str:
        what = self.symbol or "(all symbols)"
        span = f" {self.start}..{self.end}" if self.start else ""
        return f"{what}{span}: {self.error}"


@dataclass
class SyncReport:
    """The outcome of :meth:`Store.sync`.

    ``requests`` counts HTTP requests sent (retries included) and ``retries`` the retries, both
    from the client's counters; ``windows_fetched`` the windows requested successfully,
    ``windows_skipped`` the windows of the requested range already held as final,
    ``empty_windows`` the fetched windows that came back with no rows (recorded as confirmed
    empty), ``rows_received`` the rows the service sent, ``rows_written`` the rows added to the
    store (a refetched row replaces its old copy and is not counted again), ``repaired`` the
    partition files (relative paths) found damaged, missing or replaced: their symbol's
    coverage was forgotten and the requested range fetched again.
    """

    dataset: str
    symbols: int = 0
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    windows_fetched: int = 0
    windows_skipped: int = 0
    empty_windows: int = 0
    rows_received: int = 0
    rows_written: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # damaged files found and refetched

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict[str, Any]:
        d = {
            k: getattr(self, k)
            for k in (
                "dataset",
                "symbols",
                "requests",
                "retries",
                "cache_hits",
                "windows_fetched",
                "windows_skipped",
                "empty_windows",
                "rows_received",
                "rows_written",
            )
        }
        d["seconds"] = round(self.seconds, 3)
        d["failures"] = [str(f) for f in self.failures]
        d["repaired"] = list(self.repaired)
        return d

    def __str__(self) -> str:
        head = (
            f"{self.dataset}: {self.symbols} symbols, {self.requests} requests "
            f"({self.retries} retries), {self.windows_fetched} windows fetched, "
            f"{self.windows_skipped} skipped, {self.empty_windows} empty, "
            f"{self.rows_written} rows written in {self.seconds:.2f} s"
        )
        if not self.failures:
            return head
        lines = [head, f"{len(self.failures)} FAILED (their ranges stay missing; rerun to retry):"]
        lines += [f"  {f}" for f in self.failures]
        return "\n".join(lines)


class SyncError(MarketframeError):
    """Some windows of a sync failed; everything else was written; `.report` lists them."""

    def __init__(self, report: SyncReport):
        self.report = report
        super().__init__(str(report))


class StoreCorrupted(MarketframeError):
    """A store file (partition or manifest) is damaged, missing or not the one recorded.

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


@dataclass
class VerifyReport:
    """The outcome of :meth:`Store.verify`: what was checked, found and repaired.

    ``problems`` lists each damaged, missing or replaced file (and a damaged manifest) as
    ``path: problem``; ``repaired`` what a repair did about them; ``failures`` the refetches of
    a repair that failed (rerun ``verify(repair=True)`` to retry them).
    """

    root: str
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing was wrong, or everything wrong was repaired."""
        return not self.failures and (not self.problems or bool(self.repaired))

    def as_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "checked": self.checked,
            "problems": list(self.problems),
            "repaired": list(self.repaired),
            "failures": list(self.failures),
        }

    def __str__(self) -> str:
        lines = [
            f"{self.root}: {self.checked} files checked, {len(self.problems)} problem(s), "
            f"{len(self.repaired)} repaired, {len(self.failures)} failed"
        ]
        lines += [f"  PROBLEM {p}" for p in self.problems]
        lines += [f"  REPAIRED {r}" for r in self.repaired]
        lines += [f"  FAILED {f}" for f in self.failures]
        return "\n".join(lines)
