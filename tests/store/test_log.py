"""The store's log: a commit writes one entry holding only what it changed, a sync commits in
groups, checkpoints bound what a reader replays, and writers racing for a generation neither
lose each other's records nor overwrite what another wrote."""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from pathlib import Path

import orjson
import pytest

from marketframe.exceptions import LeaseLost
from marketframe.sandbox import Sandbox
from marketframe.store import Store
from marketframe.store._dataset import resolve
from marketframe.store._log import CHECKPOINT_EVERY, Log
from marketframe.store._storage import LocalStorage

from ._helpers import NOW

C = "stock.historical.candles"
DAILY = resolve(C, "D", {}).ds
SYMS = [f"{9000 + i}" for i in range(1, 41)]  # the sandbox's extra equities


def _entries(root: Path) -> list[dict]:
    out = []
    for p in sorted((root / "_log").glob("0*.json")):
        if ".checkpoint" not in p.name:
            out.append(orjson.loads(p.read_bytes().split(b"\n")[0]))
    return out


@pytest.fixture(scope="module")
def big_sb() -> Sandbox:
    with Sandbox(seed=11, now=NOW, rate_limit=None, extra_equities=40) as s:
        yield s


def test_a_sync_of_many_symbols_commits_a_few_entries_of_what_changed(
    big_sb: Sandbox, tmp_path: Path
) -> None:
    with Store(tmp_path / "s", api_key=big_sb.api_key, base_url=big_sb.base_url) as st:
        t0 = time.monotonic()
        st.sync(C, SYMS, "2026-01-01", "2026-10-30", progress=False)
        took = time.monotonic() - t0
        log = st._parts.log
        first = log.commits
        # one entry per period (2 s) of the sync's measured time, plus the last two (pending,
        # then current): not two per symbol, however slow the machine
        assert first <= math.ceil(took / 2.0) + 2, (first, took)
        state = len(orjson.dumps(log._data))
        assert log.written < 3 * state  # the entries hold what changed: about the state once
        # a new day for every symbol: the entries hold that day's records, not the store
        before = log.written
        st.sync(C, SYMS, "2026-01-01", "2026-11-02", progress=False)
        written = log.written - before
        changed = 0
        for e in _entries(Path(st.root))[first:]:
            for kind in ("symbols", "files"):
                changed += sum(len(orjson.dumps(v)) for v in e["changes"].get(kind, {}).values())
        assert written <= 4 * changed + 4096 * (log.commits - first), (written, changed)
        # one symbol's new day costs that symbol's records, whatever the store holds
        before = log.written
        st.sync(C, SYMS[0], "2026-01-01", "2026-11-03", progress=False)
        assert log.written - before < state / 5


def test_a_long_sync_commits_at_most_once_per_period(tmp_path: Path) -> None:
    with Sandbox(seed=11, now=NOW, rate_limit=None, latency=0.02, extra_equities=40) as sb:
        with Store(
            tmp_path / "s",
            api_key=sb.api_key,
            base_url=sb.base_url,
            max_workers=2,
            commit_every=0.25,
        ) as st:
            t0 = time.monotonic()
            st.sync(C, SYMS, "2025-01-01", "2026-10-30", progress=False)
            took = time.monotonic() - t0
            commits = st._parts.log.commits
    # symbols finish one after another for the whole sync: the batch commits as they come,
    # never more often than the period (the bound follows the measured time, so a slow,
    # loaded machine only allows more)
    assert 3 <= commits <= took / 0.25 + 2, (commits, took)


def _record(log: Log, sym: str, day: dt.date) -> None:
    log.record(DAILY, sym, (day, day), day, empty=False)


def test_checkpoints_bound_what_a_reader_replays(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    log = Log(storage)
    day = dt.date(2025, 1, 1)
    for i in range(CHECKPOINT_EVERY * 2 + 30):
        _record(log, f"S{i % 7}", day + dt.timedelta(days=i))
        log.commit("test")
    names = sorted(p.name for p in (tmp_path / "_log").iterdir())
    checkpoints = [n for n in names if ".checkpoint." in n]
    assert len(checkpoints) >= 2
    hint = json.loads((tmp_path / "_log" / "_last_checkpoint.json").read_text())
    newest = int(checkpoints[-1].split(".")[0])
    assert hint == {"generation": newest} and log.generation - newest <= CHECKPOINT_EVERY
    fresh = Log(storage)
    assert fresh.generation == log.generation and fresh.datasets() == log.datasets()
    # a damaged newest checkpoint: the one before it and the entries after it
    path = tmp_path / "_log" / checkpoints[-1]
    path.write_bytes(path.read_bytes()[:-40])
    again = Log(storage)
    assert again.damage is None and again.datasets() == log.datasets()
    # a lost hint: the newest checkpoint is found by listing
    (tmp_path / "_log" / "_last_checkpoint.json").unlink()
    assert Log(storage).datasets() == log.datasets()


def test_writers_of_one_generation_both_land_and_a_clash_is_refused(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    a, b = Log(storage), Log(storage)
    day = dt.date(2025, 3, 3)
    _record(a, "2330", day)
    _record(b, "0050", day)
    assert a.commit() == 0 and b.commit() == 1  # b read a's entry, then came after it
    assert Log(storage).final(DAILY, "2330") == Log(storage).final(DAILY, "0050") == [(day, day)]
    # b wrote 2330 while a held it (a lost lease): a's commit is refused, nothing lands
    _record(b, "2330", day + dt.timedelta(days=1))
    b.commit()
    _record(a, "2330", day + dt.timedelta(days=2))
    with pytest.raises(LeaseLost, match="another writer committed"):
        a.commit()
    assert Log(storage).final(DAILY, "2330") == [(day, day + dt.timedelta(days=1))]


def test_a_store_opens_in_the_time_of_its_state_not_of_its_history(tmp_path: Path) -> None:
    """Opening replays at most the entries since the newest checkpoint, whatever the number
    of generations: a store of 400 small commits opens with one checkpoint and the rest."""
    storage = LocalStorage(tmp_path)
    log = Log(storage)
    day = dt.date(2025, 1, 1)
    for i in range(400):
        _record(log, "2330", day + dt.timedelta(days=i))
        log.commit()
    reads: list[str] = []
    original = LocalStorage.read

    def counting(self: LocalStorage, rel: str) -> bytes:
        reads.append(rel)
        return original(self, rel)

    LocalStorage.read = counting  # type: ignore[method-assign]
    try:
        fresh = Log(LocalStorage(tmp_path))
    finally:
        LocalStorage.read = original  # type: ignore[method-assign]
    assert fresh.final(DAILY, "2330") == log.final(DAILY, "2330")
    assert sum(".checkpoint." in r for r in reads) == 1
    assert len(reads) <= CHECKPOINT_EVERY + 3


def test_a_view_older_than_gc_catches_up_from_a_checkpoint(tmp_path: Path) -> None:
    """A reader whose next entry gc removed (its view older than gc's keep) does not take
    the missing entry for the end of the log: it starts again from the newest checkpoint."""
    from marketframe.store._log import _history

    storage = LocalStorage(tmp_path)
    old, writer = Log(storage), Log(storage)
    day = dt.date(2025, 1, 1)
    _record(writer, "2330", day)
    writer.commit()
    old.reload()
    assert old.final(DAILY, "2330") == [(day, day)]
    for i in range(1, CHECKPOINT_EVERY * 2 + 10):
        _record(writer, "2330", day + dt.timedelta(days=i))
        writer.commit()
    _history.gc(storage, writer, dt.timedelta(0))
    assert not (tmp_path / "_log" / "00000000000000000001.json").exists()  # removed
    old.reload()
    assert old.generation == writer.generation
    assert old.final(DAILY, "2330") == writer.final(DAILY, "2330")


def test_a_writer_whose_lease_lapsed_commits_nothing() -> None:
    import os

    from marketframe.store._storage import ObjectStorage

    storage = ObjectStorage(f"memory://mf-log-{os.getpid()}/s")
    log = Log(storage)

    def lapsed() -> None:
        raise LeaseLost(storage.url, 60, "this writer's lease of 2330 was not renewed for 45 s")

    storage.guard = lapsed  # what a sync's leases install while it runs
    _record(log, "2330", dt.date(2025, 3, 3))
    with pytest.raises(LeaseLost, match="not renewed"):
        log.commit()
    assert storage.names("_log") == [] and Log(storage).final(DAILY, "2330") == []
