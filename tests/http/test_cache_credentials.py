"""The HTTP cache is partitioned by credential and private on disk (issue 11.2).

A response stored for one API key never reaches another key: a basic key still gets
``PlanError`` and a wrong key ``AuthenticationError`` after an advanced key has cached the same
URL. 401/403/429 are never stored. The cache file, its side files and the directory made for it
are readable by the user only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from marketframe import AuthenticationError, Client, PlanError

CANDLES = {"symbol": "0050", "from_": "2024-01-01", "to": "2024-06-30", "timeframe": "D"}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_cached_answer_never_reaches_another_key(tmp_path: Path, sandbox: Any) -> None:
    path = tmp_path / "http_cache.sqlite"
    base = sandbox.base_url
    with Client(sandbox.keys["advanced"], base_url=base, cache=path) as adv:
        adv.stock.historical.candles(**CANDLES)  # past days: kept for good
        before = sandbox.requests_served
        adv.stock.historical.candles(**CANDLES)
        assert sandbox.requests_served == before  # the same key is served from the cache
        adv.stock.snapshot.quotes(market="TSE")  # kept 5 s: the basic key asks within them
        assert adv.stats().cache_hits == 1
    with Client(sandbox.keys["basic"], base_url=base, cache=path) as basic:
        with pytest.raises(PlanError):
            basic.stock.snapshot.quotes(market="TSE")
        before = sandbox.requests_served
        with pytest.raises(PlanError):  # a 403 is not stored either: asked again
            basic.stock.snapshot.quotes(market="TSE")
        assert sandbox.requests_served == before + 1
        # the check independent of timing: the candles kept for good are not shared either;
        # a basic key may load them, but fetches its own copy
        basic.stock.historical.candles(**CANDLES)
        assert basic.stats().cache_hits == 0
    with Client("not-a-key", base_url=base, cache=path) as wrong:
        for _ in range(2):
            with pytest.raises(AuthenticationError):
                wrong.stock.historical.candles(**CANDLES)
            with pytest.raises(AuthenticationError):
                wrong.stock.snapshot.quotes(market="TSE")
        assert wrong.stats().cache_hits == 0
        assert wrong.stats().statuses == {401: 4}
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for key in (sandbox.keys["advanced"], sandbox.keys["basic"], "not-a-key"):
        assert key.encode() not in data  # only a keyed hash of each key is stored


def test_cache_files_and_directory_are_private(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    old = os.umask(0o022)  # the usual umask, which made the cache 0644 before
    try:
        with Client(sandbox.api_key, base_url=sandbox.base_url, cache=True) as c:
            c.stock.intraday.ticker(symbol="2330")
            path = c.cache_path
    finally:
        os.umask(old)
    assert path is not None and path == tmp_path / "xdg" / "marketframe" / "http_cache.sqlite"
    assert _mode(path.parent) == 0o700
    files = list(path.parent.iterdir())
    assert path in files and len(files) >= 2  # the database and its HMAC secret
    assert all(_mode(f) == 0o600 for f in files), {f.name: oct(_mode(f)) for f in files}


def test_an_existing_loose_cache_is_tightened(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "marketframe"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    with Client(sandbox.api_key, base_url=sandbox.base_url, cache=True) as c:
        c.stock.intraday.ticker(symbol="2330")
    (folder / "http_cache.sqlite").chmod(0o644)
    with Client(sandbox.api_key, base_url=sandbox.base_url, cache=True) as c:
        c.stock.intraday.ticker(symbol="2330")
        assert c.stats().cache_hits == 1  # the secret survives: the same partition
    assert _mode(folder) == 0o700
    assert all(_mode(f) == 0o600 for f in folder.iterdir())


def test_a_damaged_secret_starts_a_new_partition(tmp_path: Path, sandbox: Any) -> None:
    path = tmp_path / "c.sqlite"
    with Client(sandbox.api_key, base_url=sandbox.base_url, cache=path) as c:
        c.stock.intraday.ticker(symbol="2330")
    secret = tmp_path / "c.sqlite.secret"
    secret.write_bytes(b"cut")  # e.g. a full disk on the first run
    with Client(sandbox.api_key, base_url=sandbox.base_url, cache=path) as c:
        c.stock.intraday.ticker(symbol="2330")
        assert c.stats().cache_hits == 0 and c.stats().requests == 1
        c.stock.intraday.ticker(symbol="2330")
        assert c.stats().cache_hits == 1
    assert len(secret.read_bytes()) == 32 and _mode(secret) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite", "c.sqlite.secret"]
