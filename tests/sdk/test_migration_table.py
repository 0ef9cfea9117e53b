"""docs/migration.md's table of the official SDK's methods (issue 13): it lists every public
method of the installed ``fugle-marketdata``'s ``RestClient`` and ``WebSocketClient`` (and of
their sub-clients, walked from the objects themselves), names only methods the SDK has, and
every marketframe call it names exists."""

from __future__ import annotations

import fnmatch
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from marketframe import Client
from marketframe.stream import Stream

fugle = pytest.importorskip("fugle_marketdata")

DOC = Path(__file__).parents[2] / "docs" / "migration.md"
SECTION = "### Every method of the official SDK"


def sdk_methods(clients: set[str] | None = None) -> set[str]:
    """Every public method reachable from a RestClient and a WebSocketClient: the methods of
    each object, and of each object a property returns (sub-clients), by dotted path. The
    paths of the sub-clients themselves go to ``clients``."""
    found: set[str] = set()
    clients = set() if clients is None else clients

    def walk(obj: Any, path: str) -> None:
        cls = type(obj)
        for name in dir(cls):
            if name.startswith("_"):
                continue
            static = inspect.getattr_static(cls, name)
            if isinstance(static, property):
                value = getattr(obj, name)
                if type(value).__module__.startswith("fugle_marketdata"):
                    clients.add(f"{path}.{name}")
                    walk(value, f"{path}.{name}")  # a sub-client
                else:
                    found.add(f"{path}.{name}")  # a plain value (base_url, url)
            elif callable(static):
                found.add(f"{path}.{name}")

    walk(fugle.RestClient(api_key="k"), "RestClient")
    walk(fugle.WebSocketClient(api_key="k"), "WebSocketClient")
    return found


def table() -> list[tuple[list[str], list[str]]]:
    """(SDK names, marketframe calls) of each row, as written in backticks, arguments cut."""
    text = DOC.read_text(encoding="utf-8")
    body = text.split(SECTION, 1)[1].split("\n#", 1)[0]
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or set(cells[0]) <= {"-", " "} or cells[0].startswith("SDK"):
            continue
        names = [re.sub(r"\(.*$", "", t) for t in re.findall(r"`([^`]+)`", cells[0])]
        calls = [re.sub(r"\(.*$", "", t) for t in re.findall(r"`([^`]+)`", cells[1])]
        rows.append((names, [c for c in calls if c.startswith(("client.", "stream."))]))
    return rows


ROWS = table()
CALLS = sorted({c for _, calls in ROWS for c in calls})


def test_the_table_was_read() -> None:
    assert len(ROWS) >= 40 and all(calls for _, calls in ROWS)


def test_every_sdk_method_has_a_row() -> None:
    patterns = [n for names, _ in ROWS for n in names]
    methods = sdk_methods()
    # properties that are plain values (the resolved URLs) are not calls to map
    calls = {m for m in methods if not m.endswith((".base_url", ".url"))}
    missing = sorted(m for m in calls if not any(fnmatch.fnmatchcase(m, p) for p in patterns))
    assert not missing, f"SDK methods missing from docs/migration.md: {missing}"
    assert {
        "RestClient.stock.ownership.etf_holdings",
        "WebSocketClient.futopt.subscribe",
        "RestClient.futopt.historical.daily",
    } <= calls  # the walk reaches the leaves


def test_every_sdk_name_in_the_table_exists() -> None:
    clients: set[str] = set()
    methods = sdk_methods(clients) | clients
    unknown = [
        n for names, _ in ROWS for n in names if not any(fnmatch.fnmatchcase(m, n) for m in methods)
    ]
    assert not unknown, f"docs/migration.md names SDK methods 2.8.0 does not have: {unknown}"


@pytest.fixture(scope="module")
def client() -> Any:
    with Client("k", base_url="http://127.0.0.1:9", cache=False) as c:  # never connects
        yield c


@pytest.mark.parametrize("call", CALLS)
def test_every_marketframe_call_exists(client: Client, call: str) -> None:
    root, *path = call.split(".")
    target: Any = client if root == "client" else Stream
    for part in path:
        assert hasattr(target, part), f"{call}: no {part!r} on {target!r}"
        target = getattr(target, part)
    assert callable(target) or type(target).__name__ == "Node", call
