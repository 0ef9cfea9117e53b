"""`marketframe load`: sub-commands generated from ENDPOINTS, run against the sandbox."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from marketframe.cli import _load as _load_cli
from marketframe.endpoints import ENDPOINTS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="marketframe")
    _load_cli.register(parser.add_subparsers(dest="command"))
    return parser


def test_every_endpoint_is_a_subcommand() -> None:
    parser = _parser()
    for name in ENDPOINTS:
        args = parser.parse_args(["load", name, *_required(name)])
        assert args.endpoint == name


def _required(name: str) -> list[str]:
    out: list[str] = []
    for p in ENDPOINTS[name].params:
        if p.required:
            out += [
                _load_cli._options(ENDPOINTS[name], p)[0],
                (p.allowed or ("2024-01-02",))[0]
                if p.type in ("enum", "date")
                else ("7" if p.type == "int" else "2330"),
            ]
    return out


def test_load_writes_parquet(
    tmp_path: Path, sandbox: Any, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    out = tmp_path / "candles.parquet"
    args = _parser().parse_args(
        [
            "load",
            "stock.historical.candles",
            "--symbol",
            "0050",
            "2330",
            "--from",
            "2024-01-01",
            "--to",
            "2024-03-31",
            "--timeframe",
            "D",
            "--out",
            str(out),
            "--base-url",
            sandbox.base_url,
        ]
    )
    assert args.func(args) == 0
    table = pq.read_table(out)
    assert set(table.column("symbol").to_pylist()) == {"0050", "2330"}
    assert str(table.schema.field("date").type) == "date32[day]"


def test_ownership_to_csv_with_the_short_out_flag(
    tmp_path: Path, sandbox: Any, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o`` as ``marketframe download`` has it; an endpoint beyond the reference's 26."""
    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    out = tmp_path / "etf.csv"
    args = _parser().parse_args(
        [
            "load",
            "stock.ownership.etf_holdings",
            "--symbol",
            "0050",
            "--start",
            "2026-11-18",
            "--end",
            "2026-11-20",
            "-o",
            str(out),
            "--base-url",
            sandbox.base_url,
        ]
    )
    assert args.func(args) == 0
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[0].split(",")[:3] == ["type", "exchange", "market"]
    assert "component_symbol" in text.splitlines()[0] and "2330" in text


def test_bad_choice_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["load", "stock.intraday.quote", "--symbol", "2330", "--type", "x"])
    assert "choose from 'oddlot'" in capsys.readouterr().err
