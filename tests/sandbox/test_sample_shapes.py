"""A structural diff of every real REST sample (tests/data/samples) against the sandbox's
answer to the same request: the same keys at the same paths with the same JSON types.

The only differences allowed are the sandbox's documented guesses (:data:`GUESSES`, each
listed in docs/sandbox.md, "Where the sandbox had to guess"); a test checks that the doc
names every one of them. ``null`` matches any type (a value the sample did not know).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from marketframe.sandbox import Sandbox

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
DOC = Path(__file__).parents[2] / "docs" / "sandbox.md"

#: sample -> (the sandbox's "now", the request answering it)
CASES: dict[str, tuple[str, str]] = {
    "stock_intraday_quote": ("2026-11-20T14:00:00+08:00", "stock/intraday/quote/2330"),
    "stock_intraday_quote_20260916": ("2026-11-20T10:30:00+08:00", "stock/intraday/quote/2330"),
    "stock_intraday_ticker": ("2026-11-20T14:00:00+08:00", "stock/intraday/ticker/2330"),
    "stock_intraday_trades": ("2026-11-20T14:40:00+08:00", "stock/intraday/trades/2330"),
    "stock_intraday_volumes": ("2026-11-20T14:00:00+08:00", "stock/intraday/volumes/2330"),
    "stock_intraday_candles": ("2026-11-20T14:00:00+08:00", "stock/intraday/candles/2330"),
    "stock_historical_candles": (
        "2026-11-20T14:00:00+08:00",
        "stock/historical/candles/0050?from=2026-02-06&to=2026-02-10",
    ),
    "stock_snapshot_quotes": ("2026-11-20T14:00:00+08:00", "stock/snapshot/quotes/TSE"),
    "stock_snapshot_heatmap": ("2026-11-20T14:00:00+08:00", "stock/snapshot/heatmap/IX0001"),
    "futopt_intraday_candles": (
        "2026-11-20T14:00:00+08:00",
        "futopt/intraday/candles/TXFL6?timeframe=30",
    ),
    "futopt_historical_daily_TXF_20260916": (
        "2026-11-20T14:00:00+08:00",
        "futopt/historical/daily/TXF",
    ),
    "futopt_historical_daily_TXO_20261002": (
        "2026-11-20T14:00:00+08:00",
        "futopt/historical/daily/TXO",
    ),
    "futopt_historical_candles_TXF_tf5_20260916": (
        "2026-11-20T14:00:00+08:00",
        "futopt/historical/candles/TXF?contractMonth=1%21&timeframe=5&sort=desc"
        "&fields=open,close,volume,average,transaction",
    ),
}


def shape(obj: Any, path: str = "") -> dict[str, set[str]]:
    """{path: JSON types seen there}; list items share the path ``[]``."""
    out: dict[str, set[str]] = {}

    def walk(o: Any, p: str) -> None:
        if isinstance(o, dict):
            out.setdefault(p, set()).add("object")
            for k, v in o.items():
                walk(v, f"{p}.{k}" if p else k)
        elif isinstance(o, list):
            out.setdefault(p, set()).add("array")
            for v in o:
                walk(v, f"{p}[]")
        elif o is None:
            out.setdefault(p, set())
        elif isinstance(o, bool):
            out.setdefault(p, set()).add("boolean")
        elif isinstance(o, (int, float)):
            out.setdefault(p, set()).add("number")
        else:
            out.setdefault(p, set()).add("string")

    walk(obj, path)
    return out


def diff(real: Any, ours: Any) -> set[tuple[str, str]]:
    a, b = shape(real), shape(ours)
    out = {(p, "missing") for p in a.keys() - b.keys()}
    # keys the sandbox sends that the sample lacks; a sample's list may hold fewer kinds of
    # rows (the index row of a heatmap, a trimmed list), so extra keys inside lists count
    # only when the sample's rows all lack them
    out |= {(p, "extra") for p in b.keys() - a.keys()}
    out |= {(p, "type") for p in a.keys() & b.keys() if a[p] and b[p] and not a[p] & b[p]}
    return out


def _allowed() -> dict[str, set[tuple[str, str]]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Differences from the recorded samples") :]
    out: dict[str, set[tuple[str, str]]] = {}
    for line in section.splitlines():
        if not line.startswith("| `") or "`, `" not in line:
            continue
        cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
        sample, path, kind = cells[0], cells[1], cells[2]
        out.setdefault(sample, set()).add((path, kind))
    return out


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    got: dict[str, Any] = {}
    with Sandbox(seed=7, now="2026-11-20T14:00:00+08:00", rate_limit=None) as sb:
        for name, (now, path) in CASES.items():
            sb.set_now(now)
            r = requests.get(
                f"{sb.base_url}/{path}", headers={"X-API-KEY": sb.keys["advanced"]}, timeout=60
            )
            assert r.status_code == 200, (name, r.text)
            got[name] = r.json()
    return got


@pytest.mark.parametrize("name", list(CASES))
def test_the_sandbox_answers_with_the_sample_shape(answers, name: str) -> None:
    real = json.loads((SAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    found = diff(real, answers[name])
    allowed = _allowed().get(name, set())
    assert found <= allowed, f"undocumented differences: {sorted(found - allowed)}"
    assert allowed <= found, f"documented differences that are gone: {sorted(allowed - found)}"


def test_every_rest_sample_is_compared() -> None:
    rest = {p.stem for p in SAMPLES.glob("*.json")}
    rest -= {"error_rate_limit_429"}  # an error body (test_access_and_errors)
    rest = {n for n in rest if "-ws-" not in n}  # stream frames (tests/stream)
    assert rest == set(CASES)
