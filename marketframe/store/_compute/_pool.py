"""Derived datasets: compute's own process pool, the default executor.

Its workers fork from a server that has imported the kernels and the task (numpy, pyarrow,
pandas), so no worker pays the imports; they never run the caller's main module; each is
handed the store's credentials by its initializer (never by a task) and exits as soon as
the driver is gone (:func:`start_worker`). A worker that dies mid-task is
:class:`~marketframe.exceptions.ComputeInterrupted`, not a bare ``BrokenProcessPool``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from marketframe.store._compute._task import remember

# the modules a worker process needs, imported once in the forkserver (not per worker)
PRELOAD = ["marketframe.indicators", "marketframe.store._compute._task"]


def own_pool(workers: int, store: str, secret: dict[str, Any]) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes for the store at ``store`` (its URL or path), whose
    credentials ``secret`` (of the driver's ``storage_options``) its workers are handed."""
    import multiprocessing as mp

    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)  # only a first start of the server reads this
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=ctx,
        # a worker exits when this process is gone, and has the credentials
        initializer=start_worker,
        initargs=(os.getpid(), {store: secret} if secret else {}),
    )


@contextlib.contextmanager
def worker_deaths(root: Any) -> Iterator[None]:
    """A worker of the pool that died (killed, out of memory) as :class:`ComputeInterrupted`
    (the pool says ``BrokenProcessPool``, or ``EOFError`` while it starts a worker)."""
    from concurrent.futures.process import BrokenProcessPool

    from marketframe.exceptions import ComputeInterrupted

    try:
        yield
    except (BrokenProcessPool, EOFError) as exc:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise ComputeInterrupted(root, why) from exc


@contextlib.contextmanager
def no_main() -> Iterator[None]:
    """While our pool starts its workers (they start on ``submit``): the caller's main
    module hidden from multiprocessing, which would run it again in every worker (as
    ``__mp_main__``) to find functions defined there. A task is our function on plain data
    and needs none of it, while re-running it breaks the pool: a script without an
    ``if __name__ == "__main__"`` guard calls ``compute`` again in the worker, and code
    from ``python -c`` or standard input has no file to run."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {
        k: main.__dict__.pop(k) for k in ("__file__", "__spec__") if k in main.__dict__
    }
    main.__spec__ = None  # multiprocessing reads it without a default
    try:
        yield
    finally:
        del main.__spec__
        main.__dict__.update(saved)


def start_worker(driver: int, credentials: dict[str, dict[str, Any]]) -> None:
    """The initializer of each worker of compute's own pool. ``credentials``: the stores'
    credentials (by URL) given to the driver, which the tasks never carry. The worker exits
    as soon as its driver (process ``driver``) is gone. Nothing else would tell it after a
    ``kill -9`` of the driver: it waits on a queue whose writing end it holds itself, and
    the pool's forkserver and resource tracker live as long as any worker does."""
    for store, secret in credentials.items():
        remember(store, secret)
    threading.Thread(
        target=_exit_after, args=(driver,), name="marketframe-driver-watch", daemon=True
    ).start()


def _exit_after(pid: int) -> None:
    """Wait for process ``pid`` to end (Linux: a pidfd, readable once it has; elsewhere a
    check every half second), then end this process at once."""
    import select
    import time

    from marketframe.store._storage._base import alive

    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or already gone
        fd = None
    if fd is not None:
        select.select([fd], [], [])
    else:
        while alive(pid):
            time.sleep(0.5)
    os._exit(70)  # no cleanup of a task half done: the next run removes its files
