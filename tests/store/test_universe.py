"""``Store.universe``: the archive a sync records day by day, the reconstruction before it,
``download(..., universe=...)`` and ``marketframe universe``, against the sandbox's moving
universe (a listing, a delisting, a suspension, an ETF, a board change)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import marketframe as mf
from marketframe.cli import main
from marketframe.exceptions import InvalidParams, NotSynced
from marketframe.store import Store

#: the days the archive test records: either side of each change of the sandbox's universe
ARCHIVED = (
    "2024-03-15",  # 6901 not listed yet
    "2024-03-18",  # 6901 lists
    "2024-09-20",  # 6905 on TPEx
    "2024-09-23",  # 6905 on TWSE
    "2025-02-07",  # 00991 not listed yet
    "2025-03-05",  # 2908 suspended; 00991 listed
    "2025-04-15",  # 2908 resumed
    "2025-08-29",  # 1907's last session
    "2025-09-01",  # 1907 delisted
)


def at(day: str) -> str:
    return f"{day}T14:00:00+08:00"


@pytest.fixture(scope="module")
def archived(
    make_sandbox: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, Store]]:
    """A store whose archive holds the list of each of :data:`ARCHIVED`, synced on that day."""
    with make_sandbox(now=at(ARCHIVED[0])) as (sb, client):
        st = Store(tmp_path_factory.mktemp("archive") / "s", client)
        for day in ARCHIVED:
            sb.set_now(at(day))
            report = st.sync("universe")
            assert report.ok and report.rows_written > 20
        yield sb, st
        st.close()


def members(st: Store, day: str, **kw: Any) -> pd.DataFrame:
    return st.universe(day, **kw).set_index("symbol")


def test_the_archive_answers_before_and_after_a_listing(archived: tuple[Any, Store]) -> None:
    _, st = archived
    assert "6901" not in members(st, "2024-03-15").index
    after = members(st, "2024-03-18")
    assert after.loc["6901", "status"] == "NORMAL"
    assert set(after.source) == {"archive"}


def test_the_archive_answers_before_and_after_a_delisting(archived: tuple[Any, Store]) -> None:
    _, st = archived
    assert members(st, "2025-08-29").loc["1907", "status"] == "NORMAL"
    for day in ("2025-09-01", "2025-12-31"):  # after: the newest archived day on or before
        gone = members(st, day)
        assert "1907" not in gone.index
        assert set(gone.date) == {pd.Timestamp("2025-09-01")}


def test_the_archive_answers_inside_and_after_a_suspension(archived: tuple[Any, Store]) -> None:
    _, st = archived
    assert members(st, "2025-03-05").loc["2908", "status"] == "SUSPENDED"
    assert members(st, "2025-03-31").loc["2908", "status"] == "SUSPENDED"  # as known then
    assert members(st, "2025-04-15").loc["2908", "status"] == "NORMAL"


def test_the_archive_follows_a_board_change_and_an_etf_listing(
    archived: tuple[Any, Store],
) -> None:
    _, st = archived
    assert "6905" in members(st, "2024-09-20", board="TPEx").index
    assert "6905" not in members(st, "2024-09-20", board="TWSE").index
    moved = members(st, "2024-09-23", board="TSE")
    assert (moved.loc["6905", "exchange"], moved.loc["6905", "market"]) == ("TWSE", "TSE")
    assert "6905" not in members(st, "2024-09-23", board="OTC").index
    assert "00991" not in members(st, "2025-02-07", type="ETF").index
    etfs = members(st, "2025-03-05", type="ETF")
    assert {"0050", "0056", "00991"} <= set(etfs.index) and etfs.etf.all()
    assert set(members(st, "2025-03-05", type="INDEX").index) == {"IX0001", "IX0043"}


def test_a_board_and_a_type_are_taken_in_any_case(archived: tuple[Any, Store]) -> None:
    _, st = archived
    for board in ("TPEx", "OTC"):
        want = members(st, "2024-09-20", board=board)
        assert len(want)
        for spelt in (board.lower(), board.upper()):
            pd.testing.assert_frame_equal(members(st, "2024-09-20", board=spelt), want)
    etfs = members(st, "2025-03-05", type="ETF")
    pd.testing.assert_frame_equal(members(st, "2025-03-05", type="etf"), etfs)


@pytest.fixture(scope="module")
def reconstructed(
    make_sandbox: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, Store]]:
    """A store of daily bars synced from 2024 to 2025-10-01, whose archive begins that day."""
    with make_sandbox(now=at("2025-10-01")) as (sb, client):
        st = Store(tmp_path_factory.mktemp("rebuilt") / "s", client)
        st.sync(
            "stock.historical.candles",
            ["1907", "2908", "6901", "2330"],
            "2024-01-01",
            "2025-10-01",
            progress=False,
        )
        st.sync("universe")
        yield sb, st
        st.close()


def test_days_before_the_archive_are_reconstructed_from_the_stored_bars(
    reconstructed: tuple[Any, Store],
) -> None:
    _, st = reconstructed
    before = members(st, "2024-03-15")
    assert set(before.source) == {"reconstructed"}
    assert {"1907", "2908", "2330"} <= set(before.index) and "6901" not in before.index
    assert "6901" in members(st, "2024-03-18").index
    assert members(st, "2025-03-10").loc["2908", "status"] == "SUSPENDED"
    assert members(st, "2025-04-15").loc["2908", "status"] == "NORMAL"
    last = members(st, "2025-08-29")
    assert last.loc["1907", "status"] == "NORMAL" and pd.isna(last.loc["1907", "name"])
    assert "1907" not in members(st, "2025-09-02").index  # bars end, the synced range goes on
    weekend = members(st, "2025-08-31")  # a Sunday: the list of the session before
    assert set(weekend.date) == {pd.Timestamp("2025-08-29")} and "1907" in weekend.index
    today = members(st, "2025-10-01")
    assert set(today.source) == {"archive"} and "1907" not in today.index
    assert today.loc["2908", "name"] == "模擬停牌"
    # a reconstructed row takes the name the archive gives the symbol
    assert members(st, "2025-03-10").loc["2908", "name"] == "模擬停牌"


def test_a_reconstruction_follows_the_bars_a_later_sync_adds(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """The bars a reconstruction reads are kept while the store's log stays where it was
    (a backtest asks day after day), and read again once a sync moves it on."""
    with make_sandbox(now=at("2025-10-01")) as (_, client):
        with Store(tmp_path / "s", client) as st:
            st.sync(
                "stock.historical.candles", ["2330"], "2024-01-01", "2025-09-30", progress=False
            )
            first = members(st, "2024-06-03")
            assert list(first.index) == ["2330"]
            assert members(st, "2024-06-04").index.tolist() == ["2330"]  # kept: same generation
            st.sync(
                "stock.historical.candles", ["6901"], "2024-01-01", "2025-09-30", progress=False
            )
            assert members(st, "2024-06-03").index.tolist() == ["2330", "6901"]
            assert "6901" not in members(st, "2024-03-15").index  # listed 2024-03-18


def test_a_store_without_bars_or_archive_is_not_synced(tmp_path: Path) -> None:
    with Store(tmp_path / "empty", client=None) as st, pytest.raises(NotSynced):
        st.universe("2025-01-02")


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda st: st.universe("2025-13-01"), "as_of"),
        (lambda st: st.universe("2025-01-02", board="NYSE"), "board"),
        (lambda st: st.universe("2025-01-02", type="STOCK"), "type"),
        (lambda st: st.universe("2025-01-02", backend="numpy"), "backend"),
        (lambda st: st.sync("universe", "2330"), "symbols"),
        (lambda st: st.sync("universe", start="2025-01-02"), "start"),
        (lambda st: mf.download(universe=42, store=st), "universe"),
        (lambda st: mf.download(universe="2025-01-02"), "store"),
        (lambda st: mf.download("2330", universe=pd.DataFrame({"symbol": ["2330"]})), "symbols"),
        (lambda st: mf.download("2330", universe="2025-01-02", store=st), "symbols"),
    ],
)
def test_bad_arguments_raise_before_any_request(
    reconstructed: tuple[Any, Store], call: Callable[[Store], Any], word: str
) -> None:
    sb, st = reconstructed
    served = sb.requests_served
    with pytest.raises(InvalidParams, match=word):
        call(st)
    assert sb.requests_served == served


def test_download_takes_the_members_of_a_universe(reconstructed: tuple[Any, Store]) -> None:
    _, st = reconstructed
    frame = st.universe("2025-08-29", type="EQUITY")
    got = mf.download(universe=frame, start="2025-08-01", end="2025-09-30", store=st)
    assert list(dict.fromkeys(got.symbol)) == sorted(frame.symbol)
    delisted = got[got.symbol == "1907"]
    assert delisted.date.max() == pd.Timestamp("2025-08-29")  # its rows end at its delisting
    by_day = mf.download(universe="2025-08-29", start="2025-08-01", end="2025-09-30", store=st)
    pd.testing.assert_frame_equal(by_day, got)
    later = mf.download(universe="2025-09-02", start="2025-09-01", end="2025-09-30", store=st)
    assert "1907" not in set(later.symbol)
    tse = mf.download("TSE", universe="2025-08-29", start="2025-08-01", end="2025-08-29", store=st)
    assert set(tse.symbol) == set(frame.symbol)  # every member is on TSE
    both = mf.download(
        "TSE OTC", universe="2025-08-29", start="2025-08-01", end="2025-08-29", store=st
    )
    pd.testing.assert_frame_equal(both, tse)  # boards written as download reads symbols
    with pytest.raises(InvalidParams, match="lists no equity on OTC"):
        mf.download("OTC", universe="2025-08-29", store=st)


def test_the_command_records_and_prints_the_universe(
    make_sandbox: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, out = str(tmp_path / "s"), tmp_path / "listed.csv"
    with make_sandbox(now=at("2025-08-29")) as (sb, _):
        monkeypatch.setenv("MARKETFRAME_API_KEY", sb.api_key)
        env = ["--base-url", sb.base_url]
        assert main(["universe", "--store", store, "--record", *env]) == 0
        sb.set_now(at("2025-09-01"))
        assert main(["universe", "--store", store, "--record", *env]) == 0
        served = sb.requests_served
        capsys.readouterr()
        assert main(["universe", "--store", store, "--as-of", "2025-08-29", "-o", str(out)]) == 0
        assert "1907" in set(pd.read_csv(out, dtype=str).symbol)
        assert main(["universe", "--store", store, "--as-of", "2025-09-01", "--board", "TSE"]) == 0
        printed = capsys.readouterr().out
        assert "2330" in printed and "1907" not in printed
        for bad in (["--as-of", "2025-02-30"], ["--type", "FUND"], ["--record", "--board", "TSE"]):
            assert main(["universe", "--store", store, *bad]) == 2
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and "universe" in err
        assert sb.requests_served == served


def test_the_archive_is_recorded_in_the_log_on_either_storage(
    make_sandbox: Any, place: Any
) -> None:
    """A day of the archive is a file of the store's log, on a directory or an object
    store: verified with the rest, read back through its record."""
    with make_sandbox(now=at("2025-08-29")) as (_, client):
        with place.store("s", client) as st:
            assert st.sync("universe").ok
            report = st.verify()
            assert report.ok and report.checked == 1
            assert "1907" in set(st.universe("2025-08-29").symbol)
        assert place.files("s", "dataset=universe/params=archive/2025-08-29.parquet")
        with place.store("s") as again:  # another process: from the log
            assert set(again.universe("2025-08-29").source) == {"archive"}


def test_a_damaged_archived_day_is_reported_and_never_refetched(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """The service lists today's tickers only: a damaged past day cannot be fetched again,
    so repair says so and leaves it for a backup; reading it is an error, not a guess."""
    from marketframe.exceptions import StoreCorrupted

    with make_sandbox(now=at("2025-08-29")) as (sb, client):
        with Store(tmp_path / "s", client) as st:
            st.sync("universe")
        [day] = (tmp_path / "s").rglob("2025-08-29.parquet")
        day.write_bytes(day.read_bytes()[:-20] + b"\0" * 20)
        sb.set_now(at("2025-09-01"))
        with Store(tmp_path / "s", client) as st:
            served = sb.requests_served
            report = st.verify(repair=True)
            assert any("2025-08-29.parquet" in p for p in report.problems)
            assert any("cannot be fetched again" in f for f in report.failures)
            assert sb.requests_served == served
            with pytest.raises(StoreCorrupted):
                st.universe("2025-08-29")


def test_an_empty_store_names_the_day_it_cannot_answer(tmp_path: Path) -> None:
    with pytest.raises(NotSynced) as err:
        Store(tmp_path / "s").universe("2025-01-01")
    assert "universe for 2025-01-01;" in str(err.value)
