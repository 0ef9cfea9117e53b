"""Answers typed together (``Client.receive_all`` + ``convert_all``, the store's path) equal
each answer converted alone (``send``), and a bad answer fails alone."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from marketframe import Client, SchemaError
from marketframe.endpoints import split


@pytest.fixture(scope="module")
def arrow_client(sandbox: Any, api_key: str) -> Any:
    with Client(api_key, base_url=sandbox.base_url, backend="arrow", cache=False) as c:
        yield c


def _windows(c: Client[Any]) -> list[Any]:
    """Daily windows of two symbols interleaved (as a fan-out's answers come back), a weekly
    window and one of futures: four groups of different envelopes or parameters."""
    jobs = []
    for lo, hi in split(dt.date(2021, 1, 1), dt.date(2024, 6, 30)):
        for sym in ("2330", "0050"):
            jobs.append(c.prepare("stock.historical.candles", symbol=sym, from_=lo, to=hi))
    jobs.append(
        c.prepare(
            "stock.historical.candles",
            symbol="2330",
            from_="2023-01-01",
            to="2023-12-01",
            timeframe="W",
        )
    )
    jobs.append(
        c.prepare(
            "stock.historical.candles",
            symbol="2330",
            from_="2024-01-01",
            to="2024-03-01",
            fields="open,close",
        )
    )
    return jobs


def test_typed_together_equals_each_alone(arrow_client: Any) -> None:
    c = arrow_client
    jobs = _windows(c)
    received = c.receive_all(jobs)
    assert all(o.ok for o in received)
    together = c.convert_all(jobs, [o.result for o in received])
    for job, got in zip(jobs, together, strict=True):
        alone = c.send(job).table
        assert got.ok and got.result.table.num_rows == alone.num_rows > 0
        assert got.result.table.equals(alone, check_metadata=True), job.shown()
        assert got.result.envelopes == c.send(job).envelopes


def test_a_bad_answer_fails_alone(arrow_client: Any) -> None:
    c = arrow_client
    jobs = _windows(c)[:4]
    answers = [o.result for o in c.receive_all(jobs)]
    answers[1].body = answers[1].body.replace(b'"close":', b'"close":"x', 1)
    out = c.convert_all(jobs, answers)
    assert [o.ok for o in out] == [True, False, True, True]
    assert isinstance(out[1].error, SchemaError)
    assert out[0].result.table.equals(c.send(jobs[0]).table)
