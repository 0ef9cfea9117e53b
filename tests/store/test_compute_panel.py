"""Short feeds computed together as one panel give each feed's values as it gives alone.

A feed is a member's new bars with its context in front; many members' short feeds go
through the kernels at once as the columns of a zero-padded panel. Random feeds (lengths,
context lengths, missing and infinite values, years, one long enough to run alone) through
the panel against each feed through the 1-D kernel: the same values (NaN where NaN), the
same rows in the order the feeds came, a table a year.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe.indicators import stateful as sf
from marketframe.sandbox import Sandbox
from marketframe.store import Store
from marketframe.store._compute import _panel
from marketframe.store._compute._derive import needs, outputs
from marketframe.store._compute._panel import Feed, Panel

SPECS = {name: sf.spec(name) for name in ("sma", "rsi", "kdj", "macd", "bbands")}


@st.composite
def feeds(draw: Any, name: str) -> list[Feed]:
    sp = SPECS[name]
    use = needs(sp)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    out = []
    for i in range(draw(st.integers(1, 12))):
        bars = draw(st.sampled_from([1, 2, 7, 40, 300, 2_000]))
        cut = draw(st.integers(0, bars - 1))
        close = 100 + np.cumsum(rng.normal(size=bars))
        block = np.stack([close + 1, close - 1, close])  # high, low, close
        for _ in range(draw(st.integers(0, 3))):  # missing and infinite inputs
            block[rng.integers(0, 3), rng.integers(0, bars)] = draw(
                st.sampled_from([np.nan, np.inf, -np.inf])
            )
        both = np.ascontiguousarray(block[3 - (use.stop - use.start) :])
        date = pa.chunked_array([pa.array(np.arange(cut, bars) + 1000 * i, pa.int64())])
        year = draw(st.sampled_from([2024, 2025, None]))
        out.append(Feed(year, f"S{i % 5}", both, cut, date.cast(pa.timestamp("us"))))
    return out


@pytest.mark.parametrize("name", list(SPECS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_panel_of_feeds_equals_each_feed_alone(name: str, data: Any) -> None:
    sp = SPECS[name]
    fs = data.draw(feeds(name))
    small = data.draw(st.sampled_from([None, 64, 1_000]))  # a feed this long runs alone
    got: list[tuple[int | None, list[tuple[str, int]], pa.Table]] = []
    with pytest.MonkeyPatch.context() as mp:
        if small is not None:
            mp.setattr(_panel, "SOLO", small)
            mp.setattr(_panel, "CELLS", 4 * small)
        panel = Panel(sp)

        def emit(year: int | None, runs: list[tuple[str, int]], table: pa.Table) -> None:
            got.append((year, runs, table))

        for f in fs:
            panel.add(f, emit)
        panel.run(emit)
    # each year's rows: its feeds' rows in the order they came, whatever the tables
    for year in {f.year for f in fs}:
        mine = [f for f in fs if f.year == year]
        tables = [(runs, t) for y, runs, t in got if y == year]
        assert [run for runs, _ in tables for run in runs] == [
            (f.symbol, f.both.shape[1] - f.cut) for f in mine
        ]
        for runs, t in tables:
            assert t.num_rows == sum(n for _, n in runs)
        flat = pa.concat_tables([t for _, t in tables], promote_options="default")
        at = 0
        for f in mine:
            alone = outputs(sp, f.both)
            n = f.both.shape[1] - f.cut
            rows = flat.slice(at, n)
            assert rows.column("date").to_pylist() == f.date.to_pylist()
            for col, want in zip(sp.names, alone, strict=True):
                a = rows.column(col).to_numpy(zero_copy_only=False).astype(float)
                b = want[f.cut :]
                np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=col)
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-9, err_msg=col)
            at += n


def test_a_panel_holds_at_most_its_cells() -> None:
    """Feeds wait while the panel holds fewer than ``CELLS`` values an input; a feed that
    would pass it computes those before it is queued."""
    sp = SPECS["sma"]
    emitted: list[int] = []

    def emit(year: int | None, runs: list[tuple[str, int]], table: pa.Table) -> None:
        emitted.append(len(runs))

    panel = Panel(sp)
    bars = _panel.SOLO // 2
    close = np.arange(bars, dtype=float)[None, :]
    date = pa.chunked_array([pa.array(np.arange(bars), pa.int64())])
    fit = _panel.CELLS // bars
    for _ in range(fit + 1):
        panel.add(Feed(None, "A", close, 0, date), emit)
        assert len(panel.feeds) * panel.longest <= _panel.CELLS
    assert emitted == [fit]  # the first fit computed together once one more came
    panel.run(emit)
    assert emitted == [fit, 1]


def test_a_task_leaves_nothing_for_the_cyclic_collector(sb: Sandbox, tmp_path: Path) -> None:
    """A task's runs, targets and panels are freed when it ends (their contexts with
    them), not left in reference cycles for the garbage collector's passes: with the
    collector off, no run is left after a compute."""
    import gc

    from marketframe.store._compute._member import MemberRun

    st = Store(tmp_path / "s", api_key=sb.api_key, base_url=sb.base_url)
    with st:
        st.sync(
            "stock.historical.candles", ["2330", "0050"], "2024-01-01", "2024-06-30", progress=False
        )
        gc.collect()
        gc.disable()
        try:
            rep = st.compute("stock.historical.candles", ["sma", "kdj"], max_workers=1)
            left = [o for o in gc.get_objects() if isinstance(o, MemberRun)]
        finally:
            gc.enable()
    assert rep.modes and not left
