"""Every endpoint of ENDPOINTS against the sandbox, on both backends, single and many symbols."""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl
import pytest

from marketframe import BatchError, Client, SymbolNotFound, units
from marketframe.endpoints import ENDPOINTS, MINUTE_TIMEFRAMES

RANGE = {"from_": "2024-01-01", "to": "2024-06-30", "timeframe": "D"}
MANY = {"symbol": ["2330", "0050", "2317"], "market": ["TSE", "OTC"]}
MANY_FUTOPT = ["TXFL6", "MXFL6"]
#: symbols of endpoints that only some instruments have (index codes, ETFs hold, companies
#: have boards)
MANY_BY_NAME = {
    "stock.snapshot.heatmap": ["IX0001", "IX0043"],
    "stock.ownership.etf_holdings": ["0050", "0056"],
    "stock.ownership.director_holdings": ["2330", "2317", "2454"],
}
MANY_PRODUCTS = ["TXF", "MXF"]  # futopt.historical: keyed by product

PANDAS = {
    "float": "float64",
    "int": "Int64",
    "int_str": "Int64",
    "time_us": "datetime64[us, Asia/Taipei]",
    "iso_time": "datetime64[us, Asia/Taipei]",
    "hhmmss": "datetime64[us, Asia/Taipei]",
    "date": "datetime64[us]",
    "date_or_time": "datetime64[us]",
    "month": "datetime64[us]",
    "str": "str",
    "cat": "category",
    "flag": "bool",
}
POLARS = {
    "float": pl.Float64,
    "int": pl.Int64,
    "int_str": pl.Int64,
    "time_us": pl.Datetime("us", "Asia/Taipei"),
    "iso_time": pl.Datetime("us", "Asia/Taipei"),
    "hhmmss": pl.Datetime("us", "Asia/Taipei"),
    "date": pl.Date,
    "date_or_time": pl.Date,
    "month": pl.Date,
    "str": pl.String,
    "cat": pl.Categorical,
    "flag": pl.Boolean,
}


def test_every_example_names_the_rows_parameters_and_fills_the_required_ones() -> None:
    for ep in ENDPOINTS.values():
        assert set(ep.example) <= set(ep.param_map), ep.name
        assert {p.name for p in ep.params if p.required} <= set(ep.example), ep.name


@pytest.fixture(scope="module", params=["pandas", "polars"])
def client_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _params(name: str, many: bool) -> dict[str, Any]:
    ep = ENDPOINTS[name]
    params = dict(ep.example)  # the row's example call
    multi = ep.multi_param
    if multi and many:
        params[multi] = MANY_BY_NAME.get(name) or (
            MANY_FUTOPT
            if multi == "symbol" and ep.group == "futopt"
            else MANY.get(multi, MANY_PRODUCTS)
        )
    return params


def _check_dtypes(name: str, df: Any, backend: str) -> None:
    schema = ENDPOINTS[name].schema
    assert list(df.columns) == schema.names  # the sandbox sends no unknown fields
    for col in schema.columns:
        if backend == "pandas":
            assert str(df[col.name].dtype) == PANDAS[col.kind], col.name
        else:
            assert df.schema[col.name] == POLARS[col.kind], col.name


def _call(client: Client, name: str, params: dict[str, Any]) -> Any:
    node: Any = client
    for part in name.split("."):
        node = getattr(node, part)
    return node(**params)


@pytest.mark.parametrize("name", sorted(ENDPOINTS))
def test_single(client: Client, name: str) -> None:
    df = _call(client, name, _params(name, many=False))
    assert len(df) > 0
    _check_dtypes(name, df, client.backend)
    if client.backend == "pandas" and ENDPOINTS[name].schema.units:
        assert df.attrs["units"].keys() == ENDPOINTS[name].schema.units.keys()


@pytest.mark.parametrize("name", sorted(n for n, e in ENDPOINTS.items() if e.multi_param))
def test_many(client: Client, name: str) -> None:
    ep = ENDPOINTS[name]
    params = _params(name, many=True)
    df = client.load(name, **params)
    _check_dtypes(name, df, client.backend)
    values = params[ep.multi_param]  # type: ignore[index]
    singles = [client.load(name, **{**params, ep.multi_param: v}) for v in values]  # type: ignore[dict-item]
    assert len(df) == sum(len(s) for s in singles)
    # the column of the value each call was made for: the envelope column that echoes the
    # parameter (heatmap: index_symbol), else the column of the parameter's name
    col = next(
        (c.name for c in ep.schema.columns if c.envelope and c.param == ep.multi_param),
        ep.multi_param,
    )
    got = df[col].unique().to_list() if client.backend == "polars" else list(df[col].unique())
    assert sorted(map(str, got)) == sorted(values)


def test_minute_timeframe_dates_are_timestamps(client: Client) -> None:
    df = client.stock.technical.sma(
        symbol="2330", from_="2024-01-01", to="2024-01-31", timeframe=MINUTE_TIMEFRAMES[2], period=5
    )
    dtype = df.schema["date"] if client.backend == "polars" else str(df["date"].dtype)
    assert dtype in (pl.Datetime("us", "Asia/Taipei"), "datetime64[us, Asia/Taipei]")


def test_failed_symbol_is_never_dropped(client: Client) -> None:
    with pytest.raises(BatchError) as info:
        client.stock.intraday.quote(symbol=["2330", "NOPE", "2317"])
    err = info.value
    assert list(err.errors) == ["NOPE"] and isinstance(err.errors["NOPE"], SymbolNotFound)
    assert "NOPE" in str(err) and len(err.frame) == 2
    assert isinstance(err.frame, pl.DataFrame if client.backend == "polars" else pd.DataFrame)


def test_units_follow_the_instrument(sandbox: Any, api_key: str) -> None:
    with Client(api_key, base_url=sandbox.base_url, cache=False) as c:
        assert c.stock.intraday.trades(symbol="2330").attrs["units"]["size"] == "lots"
        assert c.stock.intraday.trades(symbol="2330", type="oddlot").attrs["units"]["size"] == (
            "shares"
        )
        assert units(c.stock.intraday.candles(symbol="IX0001"))["volume"] == "TWD"
        index = c.stock.intraday.quote(symbol="IX0001")  # the sandbox sends turnover there too
        assert units(index)["total_trade_volume"] == "TWD"
        esb = c.stock.intraday.tickers(type="EQUITY", market="ESB")["symbol"][0]
        assert units(c.stock.intraday.volumes(symbol=esb))["volume"] == "shares"
        mixed = c.fetch_table("stock.intraday.volumes", symbol=["2330", esb])
        assert units(mixed)["volume"] == f"mixed (2330: lots, {esb}: shares)"
        assert mixed.schema.field("volume").metadata == {b"unit": units(mixed)["volume"].encode()}
        assert units(c.fetch_table("futopt.intraday.trades", symbol="TXFL6"))["size"] == (
            "contracts"
        )
        assert c.units("stock.historical.candles") == {"volume": "shares", "turnover": "TWD"}


def test_generic_load_and_fetch_metadata(sandbox: Any, api_key: str) -> None:
    with Client(api_key, base_url=sandbox.base_url, cache=False, backend="polars") as c:
        df = c.load("stock.intraday.quote", symbol="2330")
        assert isinstance(df, pl.DataFrame) and df["symbol"][0] == "2330"
        fetched = c.fetch("stock.intraday.trades", symbol=["2330", "2317"], limit=5)
        assert fetched.table.num_rows == 10 and len(fetched.responses) == 2
        r = fetched.responses[0]
        assert r.status == 200 and not r.from_cache and "X-RateLimit-Remaining" in r.rate_limit
        assert c.stats().requests == 3


def test_echoed_parameter_columns_belong_to_the_endpoint() -> None:
    """A column filled from a request parameter must name a parameter the endpoint has;
    otherwise it is null in every row (BB used to carry fast/slow/signal that way)."""
    for ep in ENDPOINTS.values():
        wire = {p.wire_name for p in ep.params} | set(ep.param_map)
        strays = [c.name for c in ep.schema.columns if c.param and c.param not in wire]
        assert not strays, (ep.name, strays)


def test_bb_frames_have_no_always_null_columns(client: Client) -> None:
    df = client.stock.technical.bb(symbol="2330", **RANGE, period=20)
    pdf = df if isinstance(df, pd.DataFrame) else df.to_pandas()
    assert not {"fast", "slow", "signal"} & set(pdf.columns)
    assert len(pdf) > 50 and set(pdf["period"]) == {20}
    assert pdf.columns[pdf.isna().all()].tolist() == []
