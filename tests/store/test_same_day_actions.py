"""Two corporate actions of one symbol on one day are two stored rows (the store's key used
to be symbol and day: the last one won), and a refetched window replaces what the store
held for it (a corrected value never stays beside the old one)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa

from marketframe.store import Store
from marketframe.store._dataset import resolve
from marketframe.store._report import SyncReport
from marketframe.store._sync._commit import write_rows

CAPITAL = "stock.corporate_actions.capital_changes"
DAY = dt.date(2025, 6, 18)


def _rows(*factors: float) -> pa.Table:
    spec = resolve(CAPITAL, None, {})
    schema = spec.ep.schema.arrow()
    rows = [
        {"symbol": "2330", "effective_date": DAY, "adjustment_factor": f, "action_type": None}
        for f in factors
    ]
    cols = {n: [r.get(n) for r in rows] for n in schema.names}
    return pa.table(cols, schema=schema)


def test_two_capital_changes_on_one_day_are_both_kept(tmp_path: Path) -> None:
    spec = resolve(CAPITAL, None, {})
    with Store(tmp_path / "s") as st:
        write_rows(st._parts.storage, st._parts.log, spec, "*", _rows(1.25, 0.25), SyncReport("x"))
        st._parts.log.record(spec.ds, "*", (DAY, DAY), DAY, empty=False)
        st._parts.log.commit()
        got = st.read(CAPITAL, start=DAY, end=DAY)
        assert sorted(got.adjustment_factor) == [0.25, 1.25]
        # the window fetched again, with one factor corrected: replaced, not added to
        window = [(DAY - dt.timedelta(days=10), DAY + dt.timedelta(days=10))]
        write_rows(
            st._parts.storage,
            st._parts.log,
            spec,
            "*",
            _rows(1.2, 0.25),
            SyncReport("x"),
            replace=window,
        )
        st._parts.log.commit()
        assert sorted(st.read(CAPITAL, start=DAY, end=DAY).adjustment_factor) == [0.25, 1.2]
