"""Every endpoint of the spec answers with the spec's fields and JSON types (over real HTTP)."""

from __future__ import annotations

import pytest
import requests

from .spec_table import ENDPOINTS

PY_TYPES = {"s": str, "n": (int, float), "b": bool, "o": dict, "a": list}


def check_type(where: str, value: object, kind: str) -> None:
    nullable = kind.endswith("?")
    kind = kind.rstrip("?")
    if value is None:
        assert nullable, f"{where} is null, which the spec does not allow"
        return
    expected = PY_TYPES[kind]
    ok = isinstance(value, expected) and not (kind == "n" and isinstance(value, bool))
    assert ok, f"{where}: expected {kind}, got {type(value).__name__} {value!r}"


def get(sandbox, path: str, key: str | None = None) -> requests.Response:
    return requests.get(
        f"{sandbox.base_url}/{path}", headers={"X-API-KEY": key or sandbox.api_key}, timeout=30
    )


def test_the_table_covers_every_endpoint_of_the_package() -> None:
    """The spec table (written from the document) and the package's rows name the same
    endpoints; the count comes from the rows, never a number written here."""
    from marketframe.endpoints import ENDPOINTS as ROWS

    assert set(ENDPOINTS) == set(ROWS)


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_required_fields_and_json_types(sandbox, name: str) -> None:
    path, types, required, row_types, row_required = ENDPOINTS[name]
    r = get(sandbox, path)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    body = r.json()
    for f in required:
        assert f in body, f"{name}: required field {f!r} missing"
    for f, v in body.items():
        if f in types:
            check_type(f"{name}.{f}", v, types[f])
    rows = body.get("data")
    if row_types:
        assert isinstance(rows, list) and rows, f"{name}: expected rows in data"
        for i, row in enumerate(rows):
            for f in row_required:
                assert f in row, f"{name}.data[{i}]: required field {f!r} missing"
            for f, v in row.items():
                if f in row_types:
                    check_type(f"{name}.data[{i}].{f}", v, row_types[f])


def test_quote_nested_objects(sandbox) -> None:
    q = get(sandbox, "stock/intraday/quote/2330").json()
    for side in ("bids", "asks"):
        assert 1 <= len(q[side]) <= 5
        for level in q[side]:
            assert set(level) == {"price", "size"}
            check_type(side, level["price"], "n")
    assert set(q["total"]) >= {
        "tradeValue",
        "tradeVolume",
        "tradeVolumeAtBid",
        "tradeVolumeAtAsk",
        "transaction",
        "time",
    }
    for obj in ("lastTrade", "lastTrial"):
        assert set(q[obj]) == {"bid", "ask", "price", "size", "time", "serial"}
        for v in q[obj].values():
            check_type(obj, v, "n")
    fq = get(sandbox, "futopt/intraday/quote/TXFL6").json()
    assert set(fq["total"]) == {"tradeVolume", "totalBidMatch", "totalAskMatch", "time"}


@pytest.mark.parametrize(
    "path",
    [
        "stock/corporate-actions/dividends?start_date=2026-06-01&end_date=2026-12-31",
        "stock/corporate-actions/diviends/?start_date=2026-06-01&end_date=2026-12-31",
        "stock/corporate-actions/capital-changes/?start_date=2025-01-01&end_date=2025-12-31",
        "stock/corporate-actions/listing-applicants/?start_date=2026-01-01&end_date=2026-11-20",
    ],
)
def test_corporate_action_path_variants(sandbox, path: str) -> None:
    r = get(sandbox, path)
    assert r.status_code == 200
    assert r.json()["data"]


def test_names_are_traditional_chinese_utf8(sandbox) -> None:
    r = get(sandbox, "stock/intraday/ticker/2330")
    assert "台積電".encode() in r.content
    assert r.json()["name"] == "台積電"
