"""The progress bar of a sync, with an ETA that the plan's rate limit makes honest.

A whole board over fifteen years is tens of thousands of windows. The first requests of a
rate-limited plan go out in a burst (the window's budget), so an ETA from the rate observed so
far promises minutes for what the plan makes hours. Once the service's ``X-RateLimit-*``
headers have been seen (the client's pacer keeps them), the ETA is never less than the
remaining requests at the plan's rate: ``(remaining - budget left in this window) * span /
limit``. The bar shows both the plan and the resulting ETA.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

#: requests a second above which a plan is shown as no limit at all (the sandbox's default
#: plan allows a billion a minute: naming it would only puzzle)
UNLIMITED = 10_000


def honest_eta(
    remaining: int,
    done: int,
    elapsed: float,
    limit: int | None,
    span: float | None,
    budget: float | None,
) -> float | None:
    """Seconds left: the larger of the observed pace and the plan's rate-limit floor
    (``limit`` requests per ``span`` seconds, ``budget`` still available in this window).
    None before anything is known."""
    observed = elapsed / done * remaining if done else None
    floor = None
    if limit and span:
        floor = max(0.0, remaining - max(0.0, budget or 0.0)) * span / limit
    known = [x for x in (observed, floor) if x is not None]
    return max(known) if known else None


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class SyncBar:
    """A tqdm bar over a sync's windows whose postfix is the honest ETA and the plan."""

    def __init__(self, total: int, label: str, progress: bool | None, client: Any):
        # tqdm.auto takes ipywidgets (an optional extra) in a notebook: loaded with a bar
        from tqdm.auto import tqdm

        self._client = client
        self._t0 = time.monotonic()
        # None: shown on a terminal or in a notebook, hidden when stderr is not a TTY (CI)
        self.bar = tqdm(
            total=total,
            desc=label,
            unit="win",
            leave=False,
            file=sys.stderr,
            disable=None if progress is None else False,
            # tqdm puts ", " in front of a postfix itself
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]",
            postfix="ETA ?",
        )

    def plan(self) -> tuple[int | None, float | None, float | None]:
        """The plan's limit, window length and budget left, as the client's pacer saw them."""
        if self._client is None:
            return None, None, None
        stats = self._client.stats()
        return stats.rate_limit, stats.rate_window, stats.rate_remaining

    def eta(self) -> float | None:
        done, total = self.bar.n, self.bar.total or 0
        limit, span, budget = self.plan()
        return honest_eta(total - done, done, time.monotonic() - self._t0, limit, span, budget)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)
        eta = self.eta()
        limit, span, _ = self.plan()
        text = "ETA ?" if eta is None else f"ETA {_clock(eta)}"
        if limit and span and limit / span <= UNLIMITED:
            text += f" (plan: {plan_text(limit, span)})"
        self.bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        # draw the final state once: tqdm skips updates within its minimum interval, so a
        # fast sync would otherwise end on its first frame (0%)
        self.bar.refresh()
        self.bar.close()


def progress_bar(total: int, label: str, progress: bool | None, client: Any = None) -> Any:
    """A bar over ``total`` requests (None when hidden or empty), its ETA bounded below by
    the plan's rate limit as ``client.stats()`` shows it."""
    if progress is False or total == 0:
        return None
    return SyncBar(total, label, progress, client)


def plan_text(limit: int, span: float) -> str:
    """``20 requests / 1 s``. The pacer's window is the longest time to a reset it has seen:
    a lower bound (an answer late in its window shows less), so whole seconds round up
    (0.4 s of a 1 s window is "1 s", never "0 s"), with a little slack for the skew between
    the service's clock and this machine's (a fresh window's 60.003 s is "60 s")."""
    return f"{limit} requests / {max(1, math.ceil(span - 0.05))} s"
