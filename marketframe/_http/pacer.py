"""The pacer: requests slowed down from the ``X-RateLimit-*`` headers, shared by every thread
of one client (and so by every request of a fan-out)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

__all__ = ["Pacer"]


class Pacer:
    """Slows requests down from the ``X-RateLimit-*`` headers before the service refuses them.

    While ``Remaining`` is above ``reserve`` requests go out at once. Below it, each request
    waits ``(reset - now) / remaining`` so the rest of the window is spread out; at zero it
    waits for the reset and asks again (by then answers may have moved the reset). Requests
    are counted down locally as they go out, and an answer can only lower that count within
    a window (answers lag the requests in flight), so threads share one budget.

    The service's window starts at the first request it counts after the last one ended, so
    a window seen only from this side ends no sooner than our guess: when a window ends, the
    next starts with the whole limit and an end estimated from the window length seen so
    far, until its own headers arrive. If that guess runs out before any answer came,
    requests wait for one (up to one window) rather than open a window the service may not
    have opened yet. A small guard after every reset covers its millisecond rounding and the
    drift between the wall clock it is given in and the clock sleeps are timed by. Answers
    from a window that has ended are ignored.
    """

    def __init__(self, reserve: float = 0.1):
        self.reserve = reserve
        self._lock = threading.Lock()
        self._remaining: float | None = None
        self._limit: int | None = None
        self._reset: float | None = None  # epoch seconds
        self._estimated = False  # _reset is our guess for a window with no answer yet
        self._span = 0.0  # the longest window seen (seconds)
        self._blind = 0  # requests sent before any headers were seen
        self._inflight = 0  # requests counted by delay() and not answered yet

    @property
    def _guard(self) -> float:
        """Seconds past a reset before the next window is taken as open: the header's
        millisecond rounding, and up to 0.1% drift between the wall and monotonic clocks."""
        return 0.002 + 0.001 * self._span

    def update(self, headers: Mapping[str, str]) -> None:
        try:
            limit = int(headers["X-RateLimit-Limit"])
            remaining = int(headers["X-RateLimit-Remaining"])
            reset = int(headers["X-RateLimit-Reset"]) / 1000.0  # epoch milliseconds
        except (KeyError, ValueError):
            return
        now = time.time()
        with self._lock:
            self._inflight = max(self._inflight - 1, 0)
            if reset <= now or (
                self._reset is not None and not self._estimated and reset < self._reset - 0.5
            ):
                return  # an answer from a window that has ended
            self._span = max(self._span, reset - now)
            self._limit = limit
            if self._remaining is None:  # the first answer: the others sent blind are in flight
                remaining -= max(self._blind - 1, 0)
                self._blind = 0
            elif not self._estimated and self._reset is not None and reset > self._reset + 0.5:
                self._roll(reset)  # a window began that delay() has not seen yet
            remaining = (
                min(remaining, int(self._remaining)) if self._remaining is not None else remaining
            )
            self._remaining, self._reset, self._estimated = remaining, reset, False

    def _roll(self, reset: float) -> None:
        """Start a window: the whole limit, less every request still in flight (any sent at
        the end of the last may land in this one)."""
        assert self._limit is not None
        self._remaining = self._limit - self._inflight
        self._reset = reset

    def plan(self) -> tuple[int | None, float | None, float | None]:
        """The plan as answers showed it: requests a window, the window's seconds, and the
        requests left in it (None until the first answer)."""
        with self._lock:
            return self._limit, (self._span or None), self._remaining

    def abandon(self) -> None:
        """A counted request ended without an answer's headers (a connection error, a
        timeout, any other error while it was sent or read)."""
        with self._lock:
            self._inflight = max(self._inflight - 1, 0)

    def delay(self) -> tuple[float, bool]:
        """Seconds to wait, and whether the request is counted against the budget and goes
        out after that wait. When it is not, wait and ask again."""
        with self._lock:
            if self._remaining is None or self._limit is None or self._reset is None:
                self._inflight += 1
                self._blind += 1
                return 0.0, True
            now = time.time()
            guard = self._guard
            if now >= self._reset + guard:
                if self._estimated and self._inflight and now < self._reset + guard + self._span:
                    # our guess ran out with no answer yet: the service's window may have
                    # started later than we did, so wait for its headers (for one more
                    # window at most: a request lost without a word must not stall the rest)
                    return max(guard, self._span / 50), False
                self._roll(now + self._span)  # a new window, its end estimated until it answers
                self._estimated = True
            window = self._reset + guard - now
            remaining = self._remaining
            if remaining <= 0:  # spent: wait for the window's end, then ask again
                return window, False
            self._inflight += 1
            self._remaining = remaining - 1
            if remaining > self.reserve * self._limit:
                return 0.0, True
            return window / remaining, True
