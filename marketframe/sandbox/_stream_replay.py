"""What the sandbox's streams replay (``_streaming`` speaks the protocol): the settings, the
market clock every connection shares, and the events of each (channel, symbol, day).

Replay. ``stream_speed`` > 0 runs one market clock shared by every connection:
``market time = stream_from + (wall time since the replay started) x speed`` (1 is real time);
a connection sees each event when the market clock reaches it, so a client that drops and
reconnects misses what happened in between, as on the real service. ``stream_speed`` = 0
replays as fast as possible, each connection from ``stream_from`` on. The replay day is the
session day of the sandbox's clock; ``stream_from`` defaults to 08:30 (trial matching).

The streamed trades of a day are the intraday trades endpoint's trades (trial matches flagged
``isTrial``); each (channel, symbol, day)'s events are built once and shared while any
subscription or the cache holds them.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from datetime import time as dtime

from . import _calendar as cal
from . import _stream_futopt as fo
from ._service import Service
from ._stream_events import Events, build_events, pack

#: (channel, symbol, odd lot or after hours, session day, market, version): one event list
_Key = tuple[str, str, bool, date, str, str]

#: the default cap of subscriptions per connection (the service documents none)
MAX_SUBSCRIPTIONS = 200
#: the default bound of the bytes waiting for one client (docs/sandbox.md, "Slow consumers")
SEND_BUFFER = 1 << 20
#: seconds without a connection closing before the memory they held goes back to the system
_SETTLE = 0.5
#: bytes of replays kept after their last subscriber left (a client that reconnects finds
#: its replays built); what subscriptions hold is shared outside this budget, and the rest
#: is freed, so the sandbox's memory comes back when its connections close
CACHE_BYTES = 4 << 20


@dataclass
class StreamSettings:
    stream_speed: float = 0.0  # 0: as fast as possible; 1: real time; N: N x real time
    stream_from: str = "08:30"  # time of day (Asia/Taipei) where the replay starts
    heartbeat: float = 30.0  # seconds between heartbeats
    drop_after: int | None = None  # close a connection after this many data events
    max_connections: int | None = None
    auth_timeout: float = 30.0  # seconds allowed to authenticate before the server closes
    garbage_every: int | None = None  # send a malformed frame after every N data events
    # subscriptions one connection may hold (each holds a day's replay of one channel and
    # symbol: without a cap one connection subscribing to everything took ~5 GiB)
    max_subscriptions: int | None = MAX_SUBSCRIPTIONS
    # bytes that may wait for one client on a market clock (stream_speed > 0) before it is
    # told and dropped; None: no bound (replayed as fast as possible, the replay waits)
    send_buffer: int | None = SEND_BUFFER


class Replay:
    """The shared market clock and the event lists it replays (``Streaming`` sends them)."""

    def __init__(self, service: Service, settings: StreamSettings) -> None:
        self.service = service
        self.market = service.market
        self.settings = settings
        self._cache: OrderedDict[_Key, Events] = OrderedDict()
        self._cache_lock = threading.Lock()  # events() runs on the executor's threads
        # every replay a subscription still holds, whether or not the LRU above still does:
        # a connection past the LRU's size shares them instead of building its own copies
        self._shared: weakref.WeakValueDictionary[_Key, Events] = weakref.WeakValueDictionary()
        self._building: dict[_Key, asyncio.Future[Events]] = {}
        self.connections = 0
        self._settle: asyncio.TimerHandle | None = None
        self.builds = 0  # event lists built (each (channel, symbol, day) once while cached)
        self.restart()

    def restart(self) -> None:
        """Start the shared market clock again from ``stream_from``."""
        self._wall0 = time.monotonic()

    # --- the replay day ------------------------------------------------------------------------

    def replay_date(self) -> date:
        return self.service.today()

    def start_us(self) -> int:
        h, m = (int(x) for x in self.settings.stream_from.split(":")[:2])
        return cal.epoch_us(cal.at(self.replay_date(), dtime(h, m)))

    def market_now_us(self) -> int:
        speed = self.settings.stream_speed
        return self.start_us() + int((time.monotonic() - self._wall0) * speed * 1e6)

    # --- events of one (channel, symbol) ---------------------------------------------------------

    def events(
        self, channel: str, symbol: str, oddlot: bool, market: str = "stock", version: str = "v1.0"
    ) -> Events:
        """``oddlot``: odd-lot (stock) or the after-hours session (``market="futopt"``)."""
        d = self.replay_date()
        key = (channel, symbol, oddlot, d, market, version)
        got = self._known(key)
        if got is None:
            self.builds += 1
            rng = self.market.rng
            if market == "futopt":
                day = fo.day_of(self.service.futopt, symbol, d, oddlot)
                got = fo.build(channel, day, version, rng) if day is not None else None
            else:
                day = self.market.day(symbol, d, oddlot=oddlot)
                got = build_events(channel, day, rng) if day is not None else None
            got = got or pack(())
            self._shared[key] = got
        self._keep(key, got)
        return got

    def _known(self, key: _Key) -> Events | None:
        """The events of ``key`` if the cache or a subscription holds them."""
        got = self._cache.get(key)
        return got if got is not None else self._shared.get(key)

    def _keep(self, key: _Key, events: Events) -> None:
        """``events`` the most recently used of the cache, which drops the least recently
        used past :data:`CACHE_BYTES` (or 512 lists)."""
        with self._cache_lock:
            self._cache[key] = events
            self._cache.move_to_end(key)
            total = sum(e.nbytes for e in self._cache.values())
            while len(self._cache) > 1 and (total > CACHE_BYTES or len(self._cache) > 512):
                total -= self._cache.popitem(last=False)[1].nbytes

    async def events_async(
        self, channel: str, symbol: str, oddlot: bool, market: str = "stock", version: str = "v1.0"
    ) -> Events:
        """``events`` built off the event loop, once: connections that ask for the same
        (channel, symbol, day) while it is being built wait for that one build (100 clients
        subscribing at once must not build it 100 times over)."""
        key = (channel, symbol, oddlot, self.replay_date(), market, version)
        got = self._known(key)
        if got is not None:
            self._keep(key, got)
            return got
        pending = self._building.get(key)
        if pending is None:
            pending = asyncio.get_running_loop().run_in_executor(
                None, self.events, channel, symbol, oddlot, market, version
            )
            self._building[key] = pending
            pending.add_done_callback(lambda _: self._building.pop(key, None))
        return await asyncio.shield(pending)

    def release(self) -> None:
        """A connection closed: its replays that nobody else holds are freed at once (by their
        count of references). Once connections stop closing for :data:`_SETTLE` seconds, the
        heap's free pages go back to the system, off the event loop."""
        if self._settle is not None:
            self._settle.cancel()
        loop = asyncio.get_running_loop()
        self._settle = loop.call_later(
            _SETTLE, lambda: loop.run_in_executor(None, self._return_memory)
        )

    def _return_memory(self) -> None:
        # no gc.collect() here: the replays are freed by their counts of references, and a
        # full collection holds the interpreter for as long as the process's heap is large (a
        # sandbox inside a big process, a notebook's or a test run's, would stall its clients)
        trim_heap()


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None  # glibc only
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def trim_heap() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; elsewhere
    nothing). The many small objects of a replay's build, freed, leave pages the allocator
    keeps for itself otherwise: the sandbox would stay at its peak after its clients left."""
    if _TRIM is not None:
        _TRIM(0)
