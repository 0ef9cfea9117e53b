"""A structural diff of every real sample (tests/data/samples) against the sandbox's answer to
the same request: REST bodies and WebSocket frames, the same keys at the same paths with the
same JSON types.

Types are compared as sets per path (the rows of a list merged): the answer may be ``null``
only at a path the sample has as ``null``, and a type the sample shows at a path the answer
must show too (an option row's ``callPut`` string, not only the futures rows' ``null``). A
template's placeholder (``"<CHANNEL_ID>"``), or a path ``null`` in every row of a sample,
matches any type: the sample gives none.

The only differences allowed are the sandbox's documented guesses (listed in docs/sandbox.md,
"Differences from the recorded samples"); a test checks that the doc names every one of them.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests

from marketframe.sandbox import Sandbox

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
DOC = Path(__file__).parents[2] / "docs" / "sandbox.md"
#: a template's placeholder value: ``<CHANNEL_ID>``, ``<Timestamp>``, ``<ANY>``
PLACEHOLDER = re.compile(r"<[A-Za-z_0-9]+>")
ANY = "any"

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
    """{path: JSON types seen there, ``null`` included}; list items share the path ``[]``."""
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
            out.setdefault(p, set()).add("null")
        elif isinstance(o, bool):
            out.setdefault(p, set()).add("boolean")
        elif isinstance(o, (int, float)):
            out.setdefault(p, set()).add("number")
        elif PLACEHOLDER.fullmatch(o):
            out.setdefault(p, set()).add(ANY)
        else:
            out.setdefault(p, set()).add("string")

    walk(obj, path)
    return out


def diff(real: Any, ours: Any) -> set[tuple[str, str]]:
    """(path, kind): ``missing`` in ours, ``extra`` in ours, ``type`` where ours has a type
    the sample lacks (``null`` included) or lacks one the sample has (``null`` excepted: a
    value the sample did not have, as an untraded row's prices, may be there in ours). A
    placeholder, or a path that is ``null`` in every row of the sample, matches any type:
    the sample gives none."""
    a, b = shape(real), shape(ours)
    out = {(p, "missing") for p in a.keys() - b.keys()}
    out |= {(p, "extra") for p in b.keys() - a.keys()}
    out |= {
        (p, "type")
        for p in a.keys() & b.keys()
        if ANY not in a[p] and a[p] != {"null"} and (b[p] - a[p] or a[p] - b[p] - {"null"})
    }
    return out


def test_null_matches_only_null() -> None:
    assert diff({"a": None}, {"a": None}) == set()
    assert diff({"a": 1}, {"a": None}) == {("a", "type")}
    assert diff({"d": [{"a": None}, {"a": 1}]}, {"d": [{"a": 2}]}) == set()
    assert diff({"d": [{"a": None}, {"a": "x"}]}, {"d": [{"a": None}]}) == {("d[].a", "type")}
    assert diff({"a": "<CHANNEL_ID>"}, {"a": 5}) == set()
    assert diff({"d": [{"a": None}]}, {"d": [{"a": 2}]}) == set()  # the sample gives no type


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


def test_the_rate_limit_body_has_the_sample_shape() -> None:
    with Sandbox(seed=7, now="2026-11-20T14:00:00+08:00", rate_limit=1) as sb:
        for _ in range(2):
            r = requests.get(
                f"{sb.base_url}/stock/intraday/quote/2330",
                headers={"X-API-KEY": sb.keys["advanced"]},
                timeout=60,
            )
    assert r.status_code == 429
    real = json.loads((SAMPLES / "error_rate_limit_429.json").read_text(encoding="utf-8"))
    assert diff(real, r.json()) == set()


# --- WebSocket ------------------------------------------------------------------------------

KEY = "sandbox-advanced"
Pick = Callable[[dict[str, Any]], bool]


def _data(channel: str, **flags: bool) -> Pick:
    """The first data frame of ``channel`` (with ``flags`` set in its data: the sample's kind
    of event, as the closing trade)."""
    return lambda m: (
        m["event"] == "data"
        and m["channel"] == channel
        and all(m["data"].get(k) is v for k, v in flags.items())
    )


def _event(name: str) -> Pick:
    return lambda m: bool(m["event"] == name)


def _template(name: str, **fill: Any) -> dict[str, Any]:
    """A client frame of ws_control_messages.json, its placeholders filled."""
    frame = json.loads((SAMPLES / "ws_control_messages.json").read_text(encoding="utf-8"))[name]
    data = {k: fill.get(k, v) for k, v in frame["data"].items()}
    return {"event": frame["event"], "data": data}


SUBSCRIBE = _template("subscribe_request", channel="trades", symbol="2330")
#: sample (file, or file:key of the control messages) -> (the sandbox's "now", market,
#: credential, the frames sent after the auth frame, the frame that answers the sample)
WS_CASES: dict[str, tuple[str, str, str, list[dict[str, Any]], Pick]] = {
    "ws_stock_trades": ("14:00", "stock", KEY, [SUBSCRIBE], _data("trades", isClose=True)),
    "ws_stock_books": (
        "14:00",
        "stock",
        KEY,
        [_template("subscribe_request", channel="books", symbol="2330")],
        _data("books"),
    ),
    "ws_stock_candles": (
        "14:00",
        "stock",
        KEY,
        [_template("subscribe_request", channel="candles", symbol="2330")],
        _data("candles"),
    ),
    "futopt-ws-trades_v1.0_afterhours_doc": (
        "20:00",
        "futopt",
        KEY,
        [
            {
                "event": "subscribe",
                "data": {"channel": "trades", "symbol": "TXFL6", "afterHours": True},
            }
        ],
        _data("trades"),
    ),
    "futopt-ws-books_v1.0_doc": (
        "14:00",
        "futopt",
        KEY,
        [_template("subscribe_request", channel="books", symbol="TXFL6")],
        _data("books"),
    ),
    "futopt-ws-candles_v1.0_doc": (
        "14:00",
        "futopt",
        KEY,
        [_template("subscribe_request", channel="candles", symbol="TXFL6")],
        _data("candles"),
    ),
    "ws_control_messages:authenticated": ("14:00", "stock", KEY, [], _event("authenticated")),
    "ws_control_messages:auth_failed": ("14:00", "stock", "not-a-key", [], _event("error")),
    "ws_control_messages:heartbeat": ("14:00", "stock", KEY, [], _event("heartbeat")),
    "ws_control_messages:pong": (
        "14:00",
        "stock",
        KEY,
        [_template("ping_request", state="hello")],
        _event("pong"),
    ),
    "ws_control_messages:subscribed": ("14:00", "stock", KEY, [SUBSCRIBE], _event("subscribed")),
    "ws_error_max_connections": ("14:00", "stock", KEY, [], _event("error")),
}
#: the client's frames of ws_control_messages.json: sent above, not answers
REQUESTS = {"auth_request", "ping_request", "subscribe_request", "subscribe_many_request"}


async def _frame(sb: Sandbox, name: str) -> dict[str, Any]:
    """The sandbox's frame answering sample ``name``."""
    _, market, key, sent, pick = WS_CASES[name]
    url = sb.ws_url.replace("/stock/", f"/{market}/")
    async with aiohttp.ClientSession() as s, s.ws_connect(url) as ws:
        if name == "ws_error_max_connections":  # a second connection past max_connections=1
            async with s.ws_connect(url) as second:
                return dict(await second.receive_json(timeout=60))
        auth = _template("auth_request", apikey=key)
        for frame in (auth, *sent):
            await ws.send_json(frame)
        while True:
            message = await ws.receive_json(timeout=60)
            if pick(message):
                return dict(message)


@pytest.fixture(scope="module")
def frames() -> dict[str, Any]:
    got: dict[str, Any] = {}
    opts = {"heartbeat": 0.5, "max_connections": 1}
    with Sandbox(seed=7, now="2026-11-20T14:00:00+08:00", rate_limit=None, **opts) as sb:
        for name, (hhmm, *_) in WS_CASES.items():
            sb.set_now(f"2026-11-20T{hhmm}:00+08:00")
            got[name] = asyncio.run(_frame(sb, name))
            while sb.streaming.connections:  # max_connections=1: the last one has left
                time.sleep(0.05)
    return got


def _sample(name: str) -> Any:
    file, _, key = name.partition(":")
    body = json.loads((SAMPLES / f"{file}.json").read_text(encoding="utf-8"))
    return body[key] if key else body


@pytest.mark.parametrize("name", list(WS_CASES))
def test_the_sandbox_streams_with_the_sample_shape(frames, name: str) -> None:
    found = diff(_sample(name), frames[name])
    allowed = _allowed().get(name, set())
    assert found <= allowed, f"undocumented differences: {sorted(found - allowed)}"
    assert allowed <= found, f"documented differences that are gone: {sorted(allowed - found)}"


def test_every_sample_is_compared() -> None:
    names = {p.stem for p in SAMPLES.glob("*.json")}
    assert names == set(CASES) | {n.partition(":")[0] for n in WS_CASES} | {"error_rate_limit_429"}
    control = json.loads((SAMPLES / "ws_control_messages.json").read_text(encoding="utf-8"))
    answered = {n.partition(":")[2] for n in WS_CASES if ":" in n}
    assert set(control) == answered | REQUESTS
