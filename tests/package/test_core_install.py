"""`pip install marketframe` without extras: every command runs, or exits 2 naming the extra.

Each command runs in a subprocess where the optional packages cannot be imported (a finder
in front of ``sys.meta_path`` refuses them, as a missing install would)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # subprocesses end to end: `pytest -m 'not slow'` skips them

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ("polars", "authlib", "matplotlib", "ipywidgets", "s3fs", "fsspec", "duckdb")

_BLOCK = f"""
import importlib.abc, sys
BLOCKED = {OPTIONAL!r}
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, NotInstalled())
"""
_RUN = (
    _BLOCK
    + """
from marketframe.cli import main
sys.exit(main(sys.argv[1:]))
"""
)


def _core(
    *args: str, cwd: Path | None = None, code: str = _RUN
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETFRAME_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def _commands() -> list[str]:
    from marketframe.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[union-attr]


def test_the_blocker_really_hides_the_optional_packages() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN.replace("from marketframe.cli import main", "import polars")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "No module named 'polars'" in proc.stderr


@pytest.mark.parametrize("args", [["--help"], *([c, "--help"] for c in _commands())])
def test_help_always_works(args: list[str]) -> None:
    proc = _core(*args)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["academy", "whoami", "--url", "http://127.0.0.1:9"], "academy"),
        (["crosscheck", "2330", "--chart", "CHART.png"], "plot"),
        (
            ["sync", "stock.historical.candles", "--store", "s3://bucket/x", "--symbols", "2330"],
            "s3",
        ),
    ],
)
def test_a_command_that_needs_an_extra_exits_2_naming_it(
    args: list[str], extra: str, tmp_path: Path
) -> None:
    proc = _core(*[a.replace("CHART.png", str(tmp_path / "c.png")) for a in args])
    assert proc.returncode == 2, proc.stderr
    assert f"pip install 'marketframe[{extra}]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_core_commands_run(tmp_path: Path) -> None:
    """load, download and a local store sync and read with the core install alone."""
    quote = _core("load", "stock.intraday.quote", "--symbol", "2330")
    assert quote.returncode == 0, quote.stderr
    out = tmp_path / "p.parquet"
    got = _core("download", "2330", "--start", "2024-01-01", "--end", "2024-03-31", "-o", str(out))
    assert got.returncode == 0, got.stderr
    assert out.stat().st_size > 0
    store = tmp_path / "store"
    synced = _core(
        "sync", "stock.historical.candles", "--store", str(store), "--symbols", "2330",
        "--start", "2024-01-01", "--end", "2024-02-29",
    )  # fmt: skip
    assert synced.returncode == 0, synced.stderr
    assert (store / "_log").is_dir()


# Each call of the Python API that needs an optional package, made with the core install alone
# against a sandbox: what it raised, and how many requests the sandbox had served by then.
_API = (
    _BLOCK
    + """
import json
import pandas as pd
import marketframe
from marketframe import Client, calendar, download
from marketframe.sandbox import Sandbox
from marketframe.store import Store

def polars_download(c):
    download("2330", "2024-01-01", "2024-01-31", backend="polars", client=c)

def polars_load(c):
    c.stock.historical.candles(symbol="2330", from_="2024-01-01", to="2024-01-31", backend="polars")

CALLS = {
    "download": polars_download,
    "load": polars_load,
    "Client": lambda c: Client(sb.api_key, base_url=sb.base_url, backend="polars"),
    "Ticker": lambda c: marketframe.Ticker("2330", client=c, backend="polars").history(),
    "calendar": lambda c: calendar.sessions_in_range("2024-01-01", "2024-01-31", backend="polars"),
    "stream": lambda c: c.stream(backend="polars"),
    "Store": lambda c: Store("s3://bucket/prefix", c),
    "academy": lambda c: __import__("marketframe.academy"),
    "plot": lambda c: pd.DataFrame(
        {"date": ["2024-01-02"], "open": [1.0], "high": [1.0], "low": [1.0], "close": [1.0]}
    ).md.plot(),
}
out = {}
with Sandbox(rate_limit=None) as sb, Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
    for name, call in CALLS.items():
        try:
            call(c)
            out[name] = ["no error"]
        except BaseException as exc:
            out[name] = [
                type(exc).__name__,
                isinstance(exc, marketframe.MarketframeError),
                isinstance(exc, ModuleNotFoundError) and exc.name,
                str(exc),
                c.stats().requests,
            ]
print(json.dumps(out))
"""
)


def test_the_api_names_the_extra_before_any_request() -> None:
    """Without the extra, a call that needs polars, fsspec, authlib or matplotlib raises a
    marketframe error naming the extra (still a ModuleNotFoundError), before any request is
    sent, not a bare ModuleNotFoundError once the data came."""
    import json

    proc = _core(code=_API)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    extra = {
        "Store": ("fsspec", "s3"),
        "academy": ("authlib", "academy"),
        "plot": ("matplotlib", "plot"),
    }
    for name, (kind, ours, module, message, sent) in got.items():
        package, wanted = extra.get(name, ("polars", "polars"))
        assert (kind, ours, module) == ("ExtraNotInstalled", True, package), (name, message)
        assert f"pip install 'marketframe[{wanted}]'" in message, (name, message)
        assert sent == 0, f"{name}: {sent} requests before the error"
