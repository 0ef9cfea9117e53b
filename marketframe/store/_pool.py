"""Fetch threads that an interrupt does not wait for.

``ThreadPoolExecutor`` joins its workers when the interpreter exits, so Ctrl-C during a sync
against a silent server waited for every in-flight request to time out (5 x 30 s each). These
workers are daemon threads: on an interrupt the sync cancels what has not started and returns
at once; a request still in flight is abandoned (its result is never written), and the
process can exit without waiting for it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class DaemonPool:
    """A minimal executor of daemon threads returning :class:`concurrent.futures.Future`."""

    def __init__(self, workers: int, name: str):
        self._queue: queue.SimpleQueue[
            tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None
        ] = queue.SimpleQueue()
        self._futures: list[Future[Any]] = []
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(max(1, workers))
        ]
        for t in self._threads:
            t.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn, args = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                fut.set_exception(exc)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        self._futures.append(fut)
        self._queue.put((fut, fn, args))
        return fut

    def shutdown(self, *, cancel: bool = False) -> None:
        """Stop the workers once they are idle; ``cancel`` drops work not yet started. Never
        waits for work in flight."""
        if cancel:
            for fut in self._futures:
                fut.cancel()
        for _ in self._threads:
            self._queue.put(None)
