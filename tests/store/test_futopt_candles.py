"""futopt.historical.candles in the store: one dataset per product, contract month, timeframe
and session; synced windows read back equal to the loader (daily and minute bars alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from marketframe.client import Client
from marketframe.sandbox import Sandbox
from marketframe.store import NotSynced, Store

from ._helpers import arrow_equal

EP = "futopt.historical.candles"
TODAY = "2026-11-20"


def _fresh(sb: Sandbox, **params: Any) -> Any:
    with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
        return c.fetch_table(EP, sort="asc", **params)


def _fresh_daily(sb: Sandbox) -> float:
    with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
        t = c.fetch_table(
            "futopt.historical.daily", product="TXO", date=TODAY, contractMonth="202612"
        )
    return float(t.column("strike_price")[0].as_py())


@pytest.mark.parametrize(
    ("timeframe", "start", "params"),
    [
        ("D", "2026-01-05", {"contractMonth": "1!"}),
        ("W", "2026-03-02", {"contractMonth": "2!", "session": "afterhours"}),
        ("15", "2026-11-02", {"contractMonth": "202612"}),
        ("D", "2026-11-02", {"contractMonth": "202612", "callPut": "PUT"}),  # + today's strike
    ],
)
def test_sync_then_read_equals_the_loader(
    sb: Sandbox,
    make_store: Callable[..., Store],
    timeframe: str,
    start: str,
    params: dict[str, Any],
) -> None:
    product = "TXO" if "callPut" in params else "TXF"
    if product == "TXO":  # a strike listed today (strikes follow the index day by day)
        params["strikePrice"] = _fresh_daily(sb)
    st = make_store()
    report = st.sync(EP, [product], start, TODAY, timeframe, today=TODAY, **params)
    assert report.ok and report.rows_written > 0
    got = st.read(EP, product, start, TODAY, timeframe, backend="arrow", **params)
    want = _fresh(sb, product=product, from_=start, to=TODAY, timeframe=timeframe, **params)
    assert want.num_rows == report.rows_written
    arrow_equal(got, want)
    served = sb.requests_served
    # windows before this week are final (a weekly bar of this week is not)
    again = st.sync(EP, [product], start, "2026-11-13", timeframe, today=TODAY, **params)
    assert again.requests == 0 and sb.requests_served == served


def test_the_contract_month_is_part_of_the_datasets_identity(
    make_store: Callable[..., Store],
) -> None:
    st = make_store()
    st.sync(EP, ["TXF", "MXF"], "2026-11-02", TODAY, today=TODAY, contractMonth="1!")
    both = st.read(EP, ["TXF", "MXF"], "2026-11-02", TODAY, backend="arrow", contractMonth="1!")
    assert set(both.column("product").to_pylist()) == {"TXF", "MXF"}
    assert both.column("contract_month").to_pylist()[-1] == "202612"  # rolled on 11-19
    with pytest.raises(NotSynced, match="contractMonth='2!'"):
        st.read(EP, "TXF", "2026-11-02", TODAY, contractMonth="2!")
