"""Helpers shared by the benchmark scripts: timing, and a sandbox in its own process."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def best(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` timed calls (seconds), with a garbage collection before each."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def start_sandbox(*options: str) -> tuple[subprocess.Popen[str], str, str]:
    """Start ``marketframe sandbox --port 0 OPTIONS`` in another process (so the server does
    not compete with the measured client for the GIL); returns it, its base and ws URLs."""
    cmd = [sys.executable, "-m", "marketframe", "sandbox", "--port", "0", *options]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    base = ws = None
    for line in proc.stdout:
        if m := re.search(r"(http://\S+/marketdata/v1\.0)\s*$", line):
            base = m.group(1)
        if m := re.search(r"(ws://\S+)", line):
            ws = m.group(1)
        if base and ws:
            return proc, base, ws
    raise RuntimeError("the sandbox did not print its URLs")


def print_ratios(results: list[tuple[str, float, str]]) -> None:
    """The closing table: each ratio with its verdict (``met``/``MISSED``, or blank for info)."""
    print("\nratios:")
    for label, ratio, verdict in results:
        print(f"  {label:55s} {ratio:6.2f}  {verdict}")


def write_held(storage: Any, manifest: Any, spec: Any, symbol: str, table: Any) -> None:
    """Write ``table`` (one symbol's daily candles) with the store's write path and record its
    dates as synced, as a sync would: reads of a never-synced symbol raise NotSynced."""
    import pyarrow.compute as pc

    from marketframe.store import SyncReport
    from marketframe.store._sync._commit import write_rows

    write_rows(storage, manifest, spec, symbol, table, SyncReport(spec.ds.key))
    bounds = pc.min_max(table.column("date"))
    lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
    manifest.record(spec.ds, symbol, (lo, hi), hi, empty=False, params=spec.params)
