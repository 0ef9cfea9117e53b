"""The sandbox's copy of the session table (``marketframe/sandbox/_sessions.py``), generated
from :mod:`marketframe.calendar`: the sandbox imports nothing from the rest of the package."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from marketframe.calendar import FIRST_DAY, LAST_DAY, OFFICIAL_LAST_DAY, sessions_in_range

#: Where the sandbox keeps its generated copy of the session table.
SANDBOX_TABLE = "marketframe/sandbox/_sessions.py"


def render_sandbox_table() -> str:
    """The source of ``marketframe/sandbox/_sessions.py``: the weekdays without a stock session
    and the Saturdays with one, per year of the coverage, as ``MMDD`` words."""
    days = {pd.Timestamp(d).date() for d in sessions_in_range(FIRST_DAY, LAST_DAY)}
    closed: dict[int, list[str]] = {y: [] for y in range(FIRST_DAY.year, LAST_DAY.year + 1)}
    opened: dict[int, list[str]] = {y: [] for y in closed}
    d = FIRST_DAY
    while d <= LAST_DAY:
        if d.weekday() < 5 and d not in days:
            closed[d.year].append(d.strftime("%m%d"))
        elif d.weekday() >= 5 and d in days:
            opened[d.year].append(d.strftime("%m%d"))
        d += dt.timedelta(days=1)

    def table(name: str, rows: dict[int, list[str]]) -> list[str]:
        out = [f'{name} = """']
        for year, words in rows.items():
            out += [f"{year} {' '.join(words[i : i + 16])}" for i in range(0, len(words), 16)]
        return [*out, '"""']

    lines = [
        '"""The real Taiwan stock calendar for the sandbox: GENERATED, do not edit.',
        "",
        "Written by ``python -m marketframe._gen`` from",
        "``marketframe.calendar`` (XTAI plus the project's corrections); the sandbox imports",
        "nothing from the rest of the package, so it keeps this copy, and",
        "tests/sandbox/test_calendar_table.py fails when the two disagree. Years outside",
        "FIRST_YEAR..LAST_YEAR use the sandbox's rule-based fallback (``_calendar.py``).",
        "The years after OFFICIAL_LAST_YEAR are the calendar's provisional ones: XTAI's",
        "rules, TWSE has not announced them yet.",
        '"""',
        "",
        f"FIRST_YEAR = {FIRST_DAY.year}",
        f"LAST_YEAR = {LAST_DAY.year}",
        f"OFFICIAL_LAST_YEAR = {OFFICIAL_LAST_DAY.year}",
        "",
        "#: Weekdays without a session: lines of a year and its MMDD days (a year may take",
        "#: several lines).",
        *table("CLOSED_WEEKDAYS", closed),
        "",
        "#: Saturdays and Sundays with a session (make-up Saturdays, until 2018), the same way.",
        *table("OPEN_WEEKEND_DAYS", opened),
        "",
    ]
    return "\n".join(lines)


#: The file, from the repository root.
SANDBOX_PATH = Path(__file__).resolve().parents[2] / SANDBOX_TABLE


def write() -> Path:
    """Write the sandbox's table; return its path."""
    SANDBOX_PATH.write_text(render_sandbox_table(), encoding="utf-8")
    return SANDBOX_PATH
