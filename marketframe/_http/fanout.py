"""The one fan-out: every multi-request call (many symbols, ``download``, adjusted prices,
``Store.sync``, board exports) runs its requests here.

One :class:`Fanout` belongs to a client. A call (:meth:`Fanout.run`) gets its own
:class:`Budget`, shared by all its requests: one deadline for the whole call and one retry
budget, while the client's one pacer (in the transport) spaces every request of every call.
Workers are daemon threads started for the call: Ctrl-C (or any exception in the calling
thread) cancels what has not started and returns at once; a request still in flight is
abandoned (its answer is dropped), and the interpreter can exit without waiting for it. The
calling thread waits in steps of a quarter second, so a process-directed SIGINT delivered to a
worker still reaches it as ``KeyboardInterrupt`` within that step.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from marketframe.exceptions import DeadlineExceeded, MarketframeError

__all__ = ["Budget", "Fanout", "Outcome"]

J = TypeVar("J")
R = TypeVar("R")
#: how often the calling thread wakes up to notice Ctrl-C and the deadline (seconds)
TICK = 0.25
#: how long past its deadline a call still waits for requests in flight to give up on their
#: own (their timeouts are cut to the deadline, so they normally have already)
GRACE = 1.0


class Budget:
    """What the requests of one call share: the deadline and the retries.

    The deadline runs while the service is silent: ``deadline`` seconds from the call's first
    attempt, moved on by every answer the call gets (:meth:`heard`) and by the waits the
    client imposes on itself to keep under the rate limit (:meth:`paced`). A silent server
    therefore fails the whole call once ``deadline`` seconds have passed, however many
    requests it has; a long call that keeps getting answers is never cut. A single request's
    budget is the same clock, so one request ends within ``deadline`` of its first attempt.

    Retries after connection errors, timeouts and 5xx answers come out of one budget of
    ``retries`` for the call (429 answers, which the service paces, do not count), so a
    service that is down costs a few attempts per call, not a few per request."""

    def __init__(self, deadline: float, retries: int):
        self.deadline = deadline
        self._retries = retries
        self._quiet_from: float | None = None  # monotonic time the silence began
        self._lock = threading.Lock()
        self.cancelled = threading.Event()

    def start(self) -> None:
        with self._lock:
            if self._quiet_from is None:
                self._quiet_from = time.monotonic()

    @property
    def started(self) -> bool:
        return self._quiet_from is not None

    def ends(self) -> float:
        """Monotonic time past which no request of the call is started or waited for."""
        self.start()
        assert self._quiet_from is not None
        return self._quiet_from + self.deadline

    def heard(self) -> None:
        """The service answered: the silence starts again."""
        now = time.monotonic()
        with self._lock:
            self._quiet_from = max(self._quiet_from or now, now)

    def paced(self, wait: float) -> None:
        """A request waits ``wait`` seconds for the rate limit before its first attempt: the
        silence is counted from the end of the wait."""
        end = time.monotonic() + wait
        with self._lock:
            self._quiet_from = max(self._quiet_from or end, end)

    def take_retry(self) -> bool:
        """One retry, if the call has any left."""
        with self._lock:
            if self._retries <= 0:
                return False
            self._retries -= 1
            return True


class Outcome(Generic[R]):
    """What became of one job: its ``result`` or its ``error`` (a :class:`MarketframeError`)."""

    __slots__ = ("error", "result")

    def __init__(self, result: R | None = None, error: MarketframeError | None = None):
        self.result = result
        self.error = error

    @property
    def ok(self) -> bool:
        return self.error is None


class Fanout:
    """Bounded concurrency for one client: ``workers`` requests at a time per call."""

    def __init__(self, workers: int, retries: int, deadline: float, name: str = "marketframe"):
        self.workers = workers
        self.retries = retries
        self.deadline = deadline
        self.name = name

    def run(
        self,
        jobs: Sequence[J],
        work: Callable[[J, Budget], R],
        *,
        progress: Callable[[int, Outcome[R]], None] | None = None,
        workers: int | None = None,
    ) -> list[Outcome[R]]:
        """``work(job, budget)`` for every job, ``workers`` at a time; the outcomes in the
        order of ``jobs``. ``progress(index, outcome)`` runs in the calling thread as each job
        ends. A :class:`MarketframeError` is the job's outcome; any other exception, and
        Ctrl-C, cancels the jobs not started and is raised at once. ``workers`` overrides
        the client's bound for this call."""
        workers = workers or self.workers
        budget = Budget(self.deadline, self.retries * max(1, min(len(jobs), workers)))
        outcomes: list[Outcome[R] | None] = [None] * len(jobs)
        if not jobs:
            return []
        if len(jobs) == 1:  # nothing to overlap: run in the calling thread
            only = _attempt(work, jobs[0], budget)
            if progress is not None:
                progress(0, only)
            return [only]
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(jobs)):
            todo.put(i)
        ended: queue.SimpleQueue[tuple[int, Outcome[R] | BaseException]] = queue.SimpleQueue()

        def worker() -> None:
            while not budget.cancelled.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    ended.put((i, _attempt(work, jobs[i], budget)))
                except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                    ended.put((i, exc))

        budget.start()
        for k in range(min(workers, len(jobs))):
            threading.Thread(target=worker, name=f"{self.name}-{k}", daemon=True).start()
        left = len(jobs)
        try:
            while left:
                try:
                    i, got = ended.get(timeout=TICK)
                except queue.Empty:
                    if time.monotonic() > budget.ends() + GRACE:
                        break  # requests stuck past the deadline: give them up
                    continue
                if isinstance(got, BaseException):
                    raise got
                outcomes[i] = got
                left -= 1
                if progress is not None:
                    progress(i, got)
        finally:
            budget.cancelled.set()  # workers take no new job; those in flight are abandoned
        late = DeadlineExceeded(
            f"no answer within the {budget.deadline:g} s deadline of this call "
            f"({left} of {len(jobs)} requests unanswered)"
        )
        out: list[Outcome[R]] = []
        for i, o in enumerate(outcomes):
            if o is None:
                o = Outcome(error=late)
                if progress is not None:
                    progress(i, o)
            out.append(o)
        return out


def _attempt(work: Callable[[J, Budget], R], job: J, budget: Budget) -> Outcome[R]:
    try:
        return Outcome(work(job, budget))
    except MarketframeError as exc:
        return Outcome(error=exc)
