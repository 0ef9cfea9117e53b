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
Any failure to renew marks the lease lost, and so does a lease not renewed for 2/3 of its
ttl; a writer with a lost lease stops before its next write (every PUT of a partition and of
the log checks the leases first). Before building a symbol's partition the writer reads
its lease back (still its own ETag) and the latest log (its symbol's records unchanged
by anyone else): nothing is published from a stale view. A reply lost after a conditional
PUT reached the server (the retry then fails its condition on the writer's own write) is
recognised by the owner id in the lease's body. Taking several leases is all or nothing:
a failure releases those taken, and those whose PUT may have landed. Should the release not
reach the store either (the network down), this process takes its leftovers over at once
(a lease of its pid that no live sync of it owns), instead of finding itself locked out.

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from marketframe.exceptions import LeaseLost, StoreLocked, StoreUnavailable
from marketframe.store._dataset import NO_SYMBOL, DatasetId
from marketframe.store._storage._base import _PreconditionFailed, alive


class Conditional(Protocol):
    """What leases ask of an object store: conditional writes and reads with their version
    (:class:`._object.ObjectStorage`), and the two fields through which a sync's writes check
    its leases."""

    url: str
    timeout: float
    guard: Callable[[], None] | None
    leases: Any

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None: ...

    def put_if(
        self, rel: str, data: bytes, token: str | None, deadline: float | None = None
    ) -> str: ...

    def delete(self, rel: str) -> None: ...


LEASES = "_leases"
DEFAULT_TTL = 60.0


def lease_key(ds: DatasetId, symbol: str) -> str:
    name = "_all" if symbol == NO_SYMBOL else symbol
    return f"{LEASES}/{ds.endpoint}/{ds.params}/{ds.timeframe or '-'}/{name}.json"


#: the owner ids of this process's :class:`Leases` that are taking or holding leases. A lease
#: of this process under any other owner is a leftover of a sync whose release could not
#: reach the store (the network down after a PUT failed): taken over at once, for this
#: process would otherwise find itself holding the symbols until the lease expired
_LIVE: set[str] = set()


def stale(lease: dict[str, Any], now: float) -> bool:
    """Whether a lease may be taken over: expired, its owner on this host gone, or a
    leftover of this very process (no live :class:`Leases` of it owns it)."""
    if float(lease.get("expires", 0)) < now:
        return True
    if lease.get("host") != socket.gethostname():
        return False
    pid = int(lease.get("pid", 0))
    if pid == os.getpid():
        return lease.get("owner") not in _LIVE
    return not alive(pid)


#: a lease not renewed for this share of its ttl is no longer written under: the rest of the
#: ttl is the margin in which a PUT already sent still lands before anyone may take it over
FRESH = 2 / 3


class Leases:
    """The leases one sync holds; renewed on a daemon thread until released.

    Any failure to renew a lease (the network, a deadline, a refusal) marks it lost, and so
    does a lease not renewed for ``FRESH`` of its ttl: :meth:`check` (called before every PUT
    of a partition and of the log) then raises :class:`LeaseLost`. Before a symbol's
    partition is built, :meth:`confirm` reads its lease back from the store: the writer
    builds only on a view it still holds the lease over.
    """

    def __init__(self, storage: Conditional, ttl: float = DEFAULT_TTL):
        self.storage = storage
        self.ttl = ttl
        self.owner = uuid.uuid4().hex
        self.held: dict[str, str] = {}  # key -> ETag of our last write
        self.tried: set[str] = set()  # keys whose PUT was sent (it may have landed)
        self.renewed: dict[str, float] = {}  # key -> monotonic time our last write was sent
        self.lost: dict[str, str] = {}  # key -> why
        self._lock = threading.RLock()
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

    def _put(self, key: str, tag: str | None, deadline: float | None = None) -> None:
        sent = time.monotonic()
        self.tried.add(key)
        new = self.storage.put_if(key, self._body(), tag, deadline=deadline)
        with self._lock:
            self.held[key], self.renewed[key] = new, sent

    def _adopt(self, key: str, sent: float) -> bool:
        """After an ambiguous reply (a lost answer, then 412 on the retry): whether the lease
        is ours after all (it holds this writer's owner id); if so it is held from ``sent``."""
        found = self.storage.read_versioned(key)
        if found is None or _owner(found[0]) != self.owner:
            return False
        with self._lock:
            self.held[key], self.renewed[key] = found[1], sent
        return True

    def _try(self, key: str) -> dict[str, Any] | None:
        """Take ``key``; None when taken, else the live lease that holds it."""
        sent = time.monotonic()
        try:
            self._put(key, None)
            return None
        except _PreconditionFailed:
            pass
        except StoreUnavailable:
            # the PUT may have landed and only its reply been lost: ours if it holds our id
            if self._ours(key, sent):
                return None
            raise  # the PUT's error, naming it (not the read-back's)
        found = self.storage.read_versioned(key)
        if found is None:
            return self._try(key)  # released in between
        data, tag = found
        try:
            lease = json.loads(data)
        except ValueError:
            lease = {}
        if not isinstance(lease, dict):
            lease = {}
        if lease.get("owner") == self.owner:  # our own write, its reply lost: the retry saw it
            with self._lock:
                self.held[key], self.renewed[key] = tag, sent
            return None
        if not stale(lease, time.time()):
            return lease
        try:
            self._put(key, tag)
            return None
        except _PreconditionFailed:  # another writer took it over first (or our reply lost)
            return self._try(key)

    def acquire(self, ds: DatasetId, symbols: Sequence[str], timeout: float) -> None:
        """Take the lease of every symbol (in sorted order: no deadlock between writers), or
        none: whatever goes wrong on the way (another writer past ``timeout``, the network,
        Ctrl-C) releases the leases already taken before the error is raised. Leases taken
        are renewed from the first one on (a long wait for a later symbol keeps them)."""
        deadline = None if timeout < 0 else time.monotonic() + timeout
        pause = 0.05
        _LIVE.add(self.owner)
        self._thread = threading.Thread(target=self._renew, name="marketframe-lease", daemon=True)
        self._thread.start()
        try:
            for sym in sorted(symbols):
                key = lease_key(ds, sym)
                while (holder := self._try(key)) is not None:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise StoreLocked(self.storage.url, timeout, _who(ds, sym, holder))
                    # another writer's lease: an event wait, bounded by the deadline
                    left = None if deadline is None else max(0.0, deadline - time.monotonic())
                    time.sleep(min(pause, left) if left is not None else pause)
                    pause = min(pause * 2, max(0.05, self.ttl / 6))
                self.check()  # a lease taken earlier could not be renewed meanwhile
        except BaseException:
            self.release()
            raise
        self.storage.guard = self.check
        self.storage.leases = self

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            self.renew()
            if self.lost:
                return  # the writer stops at its next check; nothing more to keep

    def renew(self) -> None:
        """Push every held lease's expiry ``ttl`` ahead. A lease that cannot be renewed, for
        any reason, is lost: :meth:`check` then refuses to write."""
        with self._lock:
            for key, tag in list(self.held.items()):
                if key in self.lost:
                    continue
                sent = time.monotonic()
                try:
                    self._put(key, tag, deadline=min(self.storage.timeout, self.ttl / 3))
                except _PreconditionFailed:
                    if not self._ours(key, sent):
                        self.lost[key] = "was taken over by another writer after it expired"
                except Exception as exc:  # noqa: BLE001 - any failure: the lease may lapse
                    self.lost[key] = f"could not be renewed ({type(exc).__name__}: {exc})"

    def _ours(self, key: str, sent: float) -> bool:
        try:
            return self._adopt(key, sent)
        except Exception:  # noqa: BLE001 - cannot tell: not ours
            return False

    def check(self) -> None:
        """Raise :class:`LeaseLost` if any lease was lost or is no longer fresh."""
        now = time.monotonic()
        with self._lock:
            for key in self.held:
                age = now - self.renewed.get(key, now)
                if key not in self.lost and age > self.ttl * FRESH:
                    self.lost[key] = f"was not renewed for {age:.0f} s"
            if self.lost:
                raise LeaseLost(
                    self.storage.url,
                    self.ttl,
                    "this writer's lease of "
                    + "; ".join(f"{k} {why}" for k, why in sorted(self.lost.items()))
                    + "; nothing more is written, rerun the sync",
                )

    def confirm(self, ds: DatasetId, symbol: str) -> None:
        """Read ``symbol``'s lease back from the store: still this writer's, else
        :class:`LeaseLost` (before anything is built from this writer's view)."""
        key = lease_key(ds, symbol)
        with self._lock:  # not while a renewal of it is in flight
            self.check()
            found = self.storage.read_versioned(key)
            if found is None or found[1] != self.held.get(key):
                self.lost[key] = "is no longer this writer's (another writer holds it)"
            self.check()

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self.storage.guard == self.check:
            self.storage.guard = None
        if self.storage.leases is self:
            self.storage.leases = None
        for key in sorted(self.tried | set(self.held)):
            try:
                found = self.storage.read_versioned(key)
                if found is not None and (
                    found[1] == self.held.get(key) or _owner(found[0]) == self.owner
                ):  # ours: held, or a PUT that landed though its reply was lost
                    self.storage.delete(key)
            except Exception:  # noqa: BLE001 - best effort: an unreleased lease expires,
                pass  # and this process takes it over at once (:data:`_LIVE`)
            self.held.pop(key, None)
        self.tried.clear()
        _LIVE.discard(self.owner)


def _owner(body: bytes) -> Any:
    """The owner id in a lease's body (None if it is not a lease)."""
    try:
        lease = json.loads(body)
    except ValueError:
        return None
    return lease.get("owner") if isinstance(lease, dict) else None


def _who(ds: DatasetId, sym: str, lease: dict[str, Any]) -> str:
    left = float(lease.get("expires", 0)) - time.time()
    return (
        f"{ds.endpoint} {sym} is being written by pid {lease.get('pid')} on "
        f"{lease.get('host')}; its lease expires in {max(0.0, left):.0f} s unless renewed"
    )


@contextmanager
def leased(
    storage: Conditional,
    ds: DatasetId,
    symbols: Sequence[str],
    timeout: float,
    ttl: float = DEFAULT_TTL,
) -> Iterator[Leases]:
    leases = Leases(storage, ttl)
    leases.acquire(ds, symbols, timeout)  # all or nothing: it releases what it took on error
    try:
        yield leases
    finally:
        leases.release()
