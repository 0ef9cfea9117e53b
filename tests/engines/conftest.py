"""A sandbox store of daily bars over a moving universe: 2330 (listed throughout), 6901
(lists on 2024-03-18), 2908 (suspended from 2025-03-03 to 2025-04-14) and 1907 (delisted:
its last session is 2025-08-29), from 2024 to 2025."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

SYMBOLS = ["2330", "6901", "2908", "1907"]
START, END = "2024-01-01", "2025-12-31"
DELISTED, LAST_SESSION = "1907", pd.Timestamp("2025-08-29")


@pytest.fixture(scope="package")
def store(tmp_path_factory: pytest.TempPathFactory, sandbox: Any) -> Any:
    from marketframe import Client, Store

    client = Client(sandbox.keys["advanced"], base_url=sandbox.base_url, cache=False)
    s = Store(tmp_path_factory.mktemp("engines-store"), client)
    s.sync("stock.historical.candles", SYMBOLS, START, END, "D", progress=False)
    return s


@pytest.fixture(scope="package")
def raw(store: Any) -> pd.DataFrame:
    out: pd.DataFrame = store.read("stock.historical.candles", SYMBOLS, START, END)
    return out


@pytest.fixture(scope="package")
def adjusted(store: Any) -> pd.DataFrame:
    out: pd.DataFrame = store.read("stock.historical.candles", SYMBOLS, START, END, adjust="all")
    return out
