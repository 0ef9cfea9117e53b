"""Leases: who may write a dataset's symbol in a store on object storage, and until when.

A sync into an object store takes one lease object per (dataset, symbol) it writes, under
``<root>/_leases/<endpoint>/<params>/<timeframe>/<symbol>.json``, created with a conditional
PUT (``If-None-Match: *``): of two writers asking at once the server lets exactly one create
it. Writers of different symbols or datasets therefore proceed in parallel; a writer of a
symbol another writer holds waits for it (``lock_timeout`` seconds, -1 forever), then is
refused with :class:`StoreLocked` naming the symbols and their holder.

A lease holds its owner (host, pid, a random id) and an expiry ``ttl`` seconds ahead on the
owner's clock. A thread renews every held lease each ``ttl / 3`` seconds with a conditional PUT
(``If-Match`` on the lease's ETag). A lease is stale when it expired, or at once when its
owner is a process of this host that no longer runs (``kill -9``). A stale lease is taken
over with ``If-Match`` on the ETag that was read, so of two writers taking it over one wins.
A writer that could not renew (it stalled longer than the ttl, or lost the network) stops
before its next write: every PUT of a partition and of the manifest checks the leases first.

Guarantees and assumptions: writers' clocks agree to within a small fraction of ``ttl``
(NTP); the object store implements conditional PUTs (AWS S3 since 2024, SeaweedFS, MinIO).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from marketframe.exceptions import MarketframeError
from marketframe.store._base import _PreconditionFailed
from marketframe.store._fs import ObjectStorage
from marketframe.store._manifest import NO_SYMBOL, DatasetId
from marketframe.store._report import StoreLocked

LEASES = "_leases"
DEFAULT_TTL = 60.0


class LeaseLost(StoreLocked):
    """An object-store sync could not renew its lease (it stalled longer than ``lease_ttl``,
    or lost the network, and another writer took the symbol over): it stopped before writing
    again. What it wrote before is intact; rerun the sync."""

    def __init__(self, path: str, ttl: float, held: str):
        self.path, self.held = path, held
        MarketframeError.__init__(self, f"{path}: {held} (lease_ttl {ttl:g} s)")


def lease_key(ds: DatasetId, symbol: str) -> str:
    name = "_all" if symbol == NO_SYMBOL else symbol
    return f"{LEASES}/{ds.endpoint}/{ds.params}/{ds.timeframe or '-'}/{name}.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale(lease: dict[str, Any], now: float) -> bool:
    """Whether a lease may be taken over: expired, or its owner on this host is gone."""
    if float(lease.get("expires", 0)) < now:
        return True
    return lease.get("host") == socket.gethostname() and not _alive(int(lease.get("pid", 0)))


class Leases:
    """The leases one sync holds; renewed on a daemon thread until released."""

    def __init__(self, storage: ObjectStorage, ttl: float = DEFAULT_TTL):
        self.storage = storage
        self.ttl = ttl
        self.owner = uuid.uuid4().hex
        self.held: dict[str, str] = {}  # key -> ETag of our last write
        self.lost: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> bytes:
        return json.dumps(
            {
                "owner": self.owner,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "ttl": self.ttl,
                "expires": time.time() + self.ttl,
            }
        ).encode()

    def _try(self, key: str) -> dict[str, Any] | None:
        """Take ``key``; None when taken, else the live lease that holds it."""
        try:
            self.held[key] = self.storage.put_if(key, self._body(), None)
            return None
        except _PreconditionFailed:
            pass
        found = self.storage.read_versioned(key)
        if found is None:
            return self._try(key)  # released in between
        data, tag = found
        try:
            lease = json.loads(data)
        except ValueError:
            lease = {}
        if not stale(lease, time.time()):
            return lease
        try:
            self.held[key] = self.storage.put_if(key, self._body(), tag)
            return None
        except _PreconditionFailed:  # another writer took it over first
            return self._try(key)

    def acquire(self, ds: DatasetId, symbols: Sequence[str], timeout: float) -> None:
        """Take the lease of every symbol (in sorted order: no deadlock between writers)."""
        deadline = None if timeout < 0 else time.monotonic() + timeout
        pause = 0.05
        for sym in sorted(symbols):
            key = lease_key(ds, sym)
            while (holder := self._try(key)) is not None:
                if deadline is not None and time.monotonic() >= deadline:
                    self.release()
                    raise StoreLocked(self.storage.url, timeout, _who(ds, sym, holder))
                # waiting for another writer's lease: an event wait, bounded by the deadline
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                self._stop.wait(min(pause, left) if left is not None else pause)
                pause = min(pause * 2, max(0.05, self.ttl / 6))
        self.storage.guard = self.check
        self._thread = threading.Thread(target=self._renew, name="marketframe-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            self.renew()

    def renew(self) -> None:
        """Push every held lease's expiry ``ttl`` ahead; a lease changed by someone else
        (taken over after it expired) is lost, and :meth:`check` then refuses to write."""
        with self._lock:
            for key, tag in list(self.held.items()):
                try:
                    self.held[key] = self.storage.put_if(key, self._body(), tag)
                except _PreconditionFailed:
                    self.held.pop(key)
                    self.lost.append(key)
                except OSError:
                    pass  # a network error: retried at the next renewal

    def check(self) -> None:
        """Raise :class:`LeaseLost` if any lease could not be renewed."""
        if self.lost:
            raise LeaseLost(
                self.storage.url,
                self.ttl,
                f"this writer's lease of {', '.join(self.lost)} expired or was "
                "taken over; nothing more is written, rerun the sync",
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.storage.guard == self.check:
            self.storage.guard = None
        for key in list(self.held):
            found = self.storage.read_versioned(key)
            if found is not None and found[1] == self.held[key]:
                self.storage.delete(key)
            self.held.pop(key)


def _who(ds: DatasetId, sym: str, lease: dict[str, Any]) -> str:
    left = float(lease.get("expires", 0)) - time.time()
    return (
        f"{ds.endpoint} {sym} is being written by pid {lease.get('pid')} on "
        f"{lease.get('host')}; its lease expires in {max(0.0, left):.0f} s unless renewed"
    )


@contextmanager
def leased(
    storage: ObjectStorage,
    ds: DatasetId,
    symbols: Sequence[str],
    timeout: float,
    ttl: float = DEFAULT_TTL,
) -> Iterator[Leases]:
    leases = Leases(storage, ttl)
    leases.acquire(ds, symbols, timeout)
    try:
        yield leases
    finally:
        leases.release()
