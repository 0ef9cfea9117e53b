"""The README's first command: `marketframe demo` runs to the end with no key, and the files
it names exist and open (Parquet reads back, charts are real images)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow  # end to end: `pytest -m 'not slow'` skips it

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_with_no_key_its_files_open_and_its_suggestions_work(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MARKETFRAME_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    out = tmp_path / "demo"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "marketframe",
            "demo",
            "--out",
            str(out),
            "--no-progress",
            "--now",
            "2026-11-20T14:00:00+08:00",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    assert "built-in sandbox" in text and "5/5 indicators reproduced locally" in text
    named = [Path(p) for p in re.findall(r"^  .+? {2,}(/\S+)$", text, re.M)]
    assert len(named) == 5 and all(p.exists() for p in named), named
    for p in named:
        if p.suffix == ".parquet":
            assert pq.read_table(p).num_rows > 0
        elif p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 20_000
    export = pq.read_table(out / "export" / "daily_candles_with_indicators.parquet")
    assert {"sma_20", "rsi_14", "kdj_k_9_3_3", "macd_12_26_9", "bb_upper_20_2"} <= set(
        export.column_names
    )
    held = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{out}/store/**/*.parquet', hive_partitioning = true)"
    ).fetchall()
    assert held[0][0] == export.num_rows
    assert "Try next" in text
    _run_suggestions(text, tmp_path)


def _suggestions(text: str) -> list[str]:
    tail = text.split("Try next:", 1)[1]
    return [
        line.strip()
        for line in tail.splitlines()
        if line.startswith(("  marketframe ", "  python "))
    ]


def _run_suggestions(text: str, cwd: Path) -> None:
    """The demo's "Try next" commands work as printed (on the sandbox, no key)."""
    from docs.test_doc_blocks import run_command

    from cli.test_cli_errors import serve_then_interrupt

    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETFRAME_")}
    commands = _suggestions(text)
    assert len(commands) == 4, text
    for command in commands:
        if command.startswith("marketframe sandbox"):
            serve_then_interrupt(command.split("#")[0], env)
            continue
        ran = run_command(command.split("  #")[0], env, cwd)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, (command, ran.stderr)
        if command.startswith("marketframe crosscheck"):
            assert ran.stdout.count("matches convention") == 5, ran.stdout
        if command.startswith("python"):  # the directory key sym stays "0050", not 50
            assert re.search(r"│ sym\s+┆", ran.stdout) and "│ 0050 " in ran.stdout, ran.stdout


def test_the_demo_table_shows_the_services_numbers_for_the_conventions_it_names() -> None:
    """Step 3 computes the indicators under the conventions step 2 discovered, so each number
    of its table is the one the service's technical endpoint gives for that symbol and day."""
    import datetime as dt

    import marketframe
    from marketframe.cli._demo import indicators, table
    from marketframe.crosscheck import INDICATOR_NAMES

    with marketframe.Client.sandbox(now="2026-11-20T14:00:00+08:00") as client:
        candles = marketframe.download(["2330", "2454"], start="2016-01-01", client=client)
        last = candles["date"].max().date()
        start = last - dt.timedelta(days=240)  # the demo's cross-check range
        found: dict[str, str] = {}
        for name in INDICATOR_NAMES:
            report = marketframe.crosscheck(client, "2330", name, start, last)
            assert report.best.alignment == "range"
            found.update(report.conventions)
        assert found["kdj"].startswith("kdj=recursive50") and found["bbands"] == "bb_ddof=1"
        shown = table(indicators(candles, found, start))
        window = {"start": start, "end": last, "timeframe": "D"}
        for sym in ("2330", "2454"):
            row = shown.loc[sym]
            assert row["date"] == last
            tech = {
                n: client.load(f"stock.technical.{n}", symbol=sym, **window, **kw).iloc[-1]
                for n, kw in (
                    ("sma", {"period": 20}),
                    ("rsi", {"period": 14}),
                    ("kdj", {"rPeriod": 9, "kPeriod": 3, "dPeriod": 3}),
                    ("macd", {"fast": 12, "slow": 26, "signal": 9}),
                    ("bb", {"period": 20}),
                )
            }
            assert all(t["date"].date() == last for t in tech.values())
            assert row["sma_20"] == round(tech["sma"]["sma"], 2)
            assert row["rsi_14"] == round(tech["rsi"]["rsi"], 2)
            assert row["kdj_k_9_3_3"] == round(tech["kdj"]["k"], 2)
            assert row["macd_12_26_9"] == round(tech["macd"]["macd_line"], 2)
            assert row["bb_upper_20_2"] == round(tech["bb"]["upper"], 2)
