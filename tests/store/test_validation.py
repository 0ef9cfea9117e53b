"""Bad arguments are typed errors naming the fix, raised before any request (17.15, 11.4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from marketframe.cli import main
from marketframe.exceptions import InvalidParams, NotSynced
from marketframe.sandbox import Sandbox
from marketframe.store import LOCK, Store, StoreLocked

CANDLES = "stock.historical.candles"


def test_a_tilde_path_is_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    st = Store("~/marketdata")
    assert st.root == tmp_path / "home" / "marketdata"
    assert not (tmp_path / "~").exists()


def test_opening_a_new_store_creates_nothing_until_it_writes(
    tmp_path: Path, make_store: Callable[..., Store]
) -> None:
    """A store only opened, read or refused leaves no directory behind (a typo in a path
    made an empty store there); its first write creates it, parents included."""
    st = make_store("a/b/store")
    assert st.coverage().empty
    with pytest.raises(NotSynced):
        st.read(CANDLES, "2330")
    with pytest.raises(InvalidParams):
        st.sync(CANDLES, 2330, "2024-01-01")
    assert not (tmp_path / "a").exists()
    st.sync(CANDLES, "2330", "2024-01-02", "2024-01-05")
    assert len(Store(tmp_path / "a" / "b" / "store").read(CANDLES, "2330")) > 0


def test_a_store_path_inside_a_file_is_refused_before_anything(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InvalidParams, match="inside the file"):
        Store(tmp_path / "f" / "store")


@pytest.mark.parametrize(
    "call",
    [
        lambda st: st.sync(CANDLES, 2330, "2024-01-01"),
        lambda st: st.sync(CANDLES, [2330], "2024-01-01"),
        lambda st: st.read(CANDLES, "A" * 300),
        lambda st: st.sync(CANDLES, "A" * 300, "2024-01-01"),
    ],
    ids=["int symbol", "int in list", "long symbol read", "long symbol sync"],
)
def test_bad_symbols_are_invalid_params_before_any_request(
    make_store: Callable[..., Store], sb: Sandbox, call: Callable[[Store], object]
) -> None:
    st = make_store()
    served = sb.requests_served
    with pytest.raises(InvalidParams, match="symbols") as err:
        call(st)
    assert "'2330'" in str(err.value)  # names what a symbol looks like
    assert sb.requests_served == served


@pytest.mark.parametrize("timeout", [-2, "5", None, True])
def test_a_bad_lock_timeout_is_invalid_params(tmp_path: Path, timeout: object) -> None:
    with pytest.raises(InvalidParams, match="lock_timeout"):
        Store(tmp_path, lock_timeout=timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize("workers", [0, -2, 1.5, "4", True])
def test_a_bad_worker_count_is_invalid_params(tmp_path: Path, workers: object) -> None:
    """Refused when the store is made: the default client is made at the first sync, which
    took 0 as the default and refused the others only then."""
    with pytest.raises(InvalidParams, match="max_workers"):
        Store(tmp_path, max_workers=workers)  # type: ignore[arg-type]


def test_a_locked_store_is_a_typed_error(make_store: Callable[..., Store], sb: Sandbox) -> None:
    st = make_store(lock_timeout=0)
    served = sb.requests_served
    with FileLock(str(st.root / LOCK)), pytest.raises(StoreLocked, match="lock_timeout"):
        # held by "another process": a separate lock object on the same file
        st.sync(CANDLES, "2330", "2024-01-01", "2024-02-01", progress=False)
    assert sb.requests_served == served


def test_a_file_as_store_path_is_invalid_params(tmp_path: Path) -> None:
    f = tmp_path / "passwd"
    f.write_text("root:x:0:0\n")
    with pytest.raises(InvalidParams, match="not a directory"):
        Store(f)


@pytest.fixture
def env(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("MARKETFRAME_API_KEY", sb.api_key)
    return ["--base-url", sb.base_url, "--no-progress"]


def test_cli_refuses_a_file_as_store_and_a_non_parquet_out(
    env: list[str], tmp_path: Path, sb: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "passwd"
    f.write_text("root:x:0:0\n")
    served = sb.requests_served
    assert (
        main(
            ["sync", CANDLES, "--store", str(f), "--symbols", "2330", "--start", "2024-01-01", *env]
        )
        == 2
    )
    assert "not a directory" in capsys.readouterr().err
    out = tmp_path / "x.xlsx"
    assert (
        main(
            [
                "export",
                CANDLES,
                "--out",
                str(out),
                "--symbols",
                "2330",
                "--start",
                "2024-01-01",
                "--end",
                "2024-02-01",
                *env,
            ]
        )
        == 2
    )
    assert ".parquet" in capsys.readouterr().err and not out.exists()
    assert sb.requests_served == served


def test_cli_verify_reports_and_repairs(
    env: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "s"
    assert (
        main(
            [
                "sync",
                CANDLES,
                "--store",
                str(root),
                "--symbols",
                "2330",
                "--start",
                "2024-01-01",
                "--end",
                "2024-03-31",
                *env,
            ]
        )
        == 0
    )
    assert main(["verify", "--store", str(root)]) == 0
    capsys.readouterr()
    next(root.rglob("part-0.parquet")).unlink()
    assert main(["verify", "--store", str(root), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert len(found["problems"]) == 1 and "missing" in found["problems"][0]
    assert main(["verify", "--store", str(root), "--repair", "--base-url", env[1]]) == 0
    assert main(["verify", "--store", str(root)]) == 0
    assert len(Store(root).read(CANDLES, "2330")) > 50


def test_verify_of_a_missing_store_is_refused_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-store"
    assert main(["verify", "--store", str(missing)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not missing.exists()
    with pytest.raises(InvalidParams, match="holds no store"):
        Store(missing).verify()


def test_a_read_whose_start_is_after_its_end_is_refused(sb: Sandbox, tmp_path: Path) -> None:
    """An empty answer would look like missing data: refused, as ``download`` refuses it."""
    ds = "stock.historical.candles"
    with Store(tmp_path / "s", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(ds, ["2330"], "2025-01-01", "2025-06-30", progress=False)
        st.compute(ds, "sma", max_workers=1)
        for read in (st.read, st.read_derived):
            args = (ds, "2330") if read is st.read else (ds, "sma")
            with pytest.raises(InvalidParams, match=r"start.*is after end.*start <= end"):
                read(*args, start="2025-06-01", end="2025-01-01")


@pytest.mark.parametrize("spec", [5, None, 2.5])
def test_compute_names_the_indicators_for_a_spec_of_no_name(tmp_path: Path, spec: Any) -> None:
    with pytest.raises(InvalidParams, match="allowed: bbands, ema, kdj, macd, rsi, sma"):
        Store(tmp_path / "s").compute("stock.historical.candles", spec)


def test_a_sync_whose_start_is_after_today_is_refused_before_any_request(
    tmp_path: Path,
) -> None:
    """The same rule as download's, in the range check both share: a future range would be
    recorded as held with no rows."""
    st = Store(tmp_path / "s", api_key="unused", base_url="http://127.0.0.1:9")
    with pytest.raises(InvalidParams, match=r"start.*is after today.*no data yet"):
        st.sync("stock.historical.candles", ["2330"], "2099-01-02", "2099-03-31", progress=False)
    assert not (tmp_path / "s").exists()
