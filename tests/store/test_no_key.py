"""A store with no key falls back to the embedded sandbox, as download() and the commands do,
and says so on stderr (not a ConfigurationError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from marketframe import Store, download
from marketframe._http.credential import ENV


def test_a_store_without_a_key_syncs_from_the_sandbox_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ENV.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MARKETFRAME_BASE_URL", raising=False)
    with Store(tmp_path / "s") as st:
        report = st.sync("stock.historical.candles", ["2330"], "2024-01-01", "2024-03-31")
        frame = st.read("stock.historical.candles", ["2330"], "2024-01-01", "2024-03-31")
    assert report.ok and len(frame) > 40
    err = capsys.readouterr().err
    assert err.count("MARKETFRAME_API_KEY is not set: using the built-in sandbox") == 1
    # the same notice, and the same numbers, as download()'s fallback
    again = download("2330", "2024-01-01", "2024-03-31")
    assert (
        capsys.readouterr().err.splitlines()[0].split(" at ")[0]
        == err.splitlines()[0].split(" at ")[0]
    )
    assert again["close"].tolist() == frame["close"].tolist()
