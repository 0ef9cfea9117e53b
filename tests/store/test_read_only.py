"""A store on a read-only file system can still be read and checked: ``read``,
``coverage``, ``verify()`` and a sync of what is already held write nothing (no lock file);
what must write says the store is read-only.

The directory is a real read-only mount (a tmpfs filled, then remounted ``ro``): as root,
``chmod`` does not stop writes, so a chmod'ed directory would prove nothing."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from marketframe.cli import main
from marketframe.sandbox import Sandbox
from marketframe.store import Store, StoreReadOnly

CANDLES = "stock.historical.candles"


@pytest.fixture
def ro_store(sb: Sandbox, tmp_path: Path) -> Iterator[Path]:
    """A store synced into a tmpfs that is then remounted read-only."""
    where = tmp_path / "ro"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        with Store(where / "s", api_key=sb.api_key, base_url=sb.base_url) as st:
            st.sync(CANDLES, ["2330", "0050"], "2024-01-01", "2024-12-31", progress=False)
        (where / "s" / ".lock").unlink(missing_ok=True)
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        with pytest.raises(OSError, match="Read-only file system"):
            (where / "s" / "probe").write_text("x")
        yield where / "s"
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_a_read_only_store_is_read_and_checked_without_writing(
    ro_store: Path, sb: Sandbox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _files(ro_store)
    with Store(ro_store, api_key=sb.api_key, base_url=sb.base_url) as st:
        assert len(st.read(CANDLES, "2330", "2024-01-01", "2024-12-31")) > 200
        assert set(st.coverage()["symbol"]) == {"2330", "0050"}
        report = st.verify()
        assert report.ok and report.problems == [] and report.checked == 2
        served = sb.requests_served
        again = st.sync(CANDLES, ["2330", "0050"], "2024-03-01", "2024-09-30", progress=False)
        assert again.ok and again.requests == 0 and sb.requests_served == served
        # what must write says why it cannot
        with pytest.raises(StoreReadOnly, match="read-only .*sync stock.historical.candles"):
            st.sync(CANDLES, "2330", "2023-01-01", "2023-12-31", progress=False)
        with pytest.raises(StoreReadOnly, match="verify\\(repair=True\\)"):
            st.verify(repair=True)
    monkeypatch.setenv("MARKETFRAME_API_KEY", sb.api_key)
    assert main(["verify", "--store", str(ro_store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == []
    args = ["sync", CANDLES, "--store", str(ro_store), "--symbols", "2330", "--base-url"]
    assert main([*args, sb.base_url, "--start", "2024-02-01", "--end", "2024-11-30"]) == 0
    capsys.readouterr()
    assert main([*args, sb.base_url, "--start", "2022-01-01", "--end", "2022-12-31"]) == 1
    err = capsys.readouterr().err
    assert "StoreReadOnly" in err and "is read-only" in err
    assert _files(ro_store) == before  # not even a lock file
