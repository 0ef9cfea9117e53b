"""What a sync did, and the error raised when any part of it failed."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any


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


@dataclass
class VerifyReport:
    """The outcome of :meth:`Store.verify`: what was checked, found and repaired.

    ``problems`` lists each damaged, missing or replaced file (and a damaged log) as
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
