"""The qlib writer: its files are qlib's format (checked here byte by byte), and qlib itself
reads a sandbox store written by it, the delisted stock leaving the universe at its last
session. qlib runs in an environment of its own (its pins conflict with the test extra's):
``MARKETFRAME_QLIB_PYTHON`` names its interpreter, which .ci/run makes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from marketframe.engines import write_qlib
from marketframe.exceptions import InvalidParams

from .conftest import DELISTED, LAST_SESSION


@pytest.fixture(scope="module")
def written(tmp_path_factory, raw, adjusted) -> Path:
    return write_qlib(raw, tmp_path_factory.mktemp("qlib"), adjusted=adjusted)


def test_the_files_are_qlibs_format(written, raw, adjusted) -> None:
    days = (written / "calendars" / "day.txt").read_text().split()
    assert days == sorted({f"{d:%Y-%m-%d}" for d in raw["date"]})
    spans = [
        line.split("\t") for line in (written / "instruments" / "all.txt").read_text().splitlines()
    ]
    assert {s: last for s, _, last in spans}[DELISTED] == f"{LAST_SESSION:%Y-%m-%d}"
    for symbol, first, last in spans:
        bars = raw[raw["symbol"] == symbol]
        adj = adjusted[adjusted["symbol"] == symbol]
        assert (first, last) == (f"{bars['date'].min():%Y-%m-%d}", f"{bars['date'].max():%Y-%m-%d}")
        close = np.fromfile(written / "features" / symbol.lower() / "close.day.bin", dtype="<f4")
        factor = np.fromfile(written / "features" / symbol.lower() / "factor.day.bin", dtype="<f4")
        assert (
            close[0] == days.index(first) and len(close) == days.index(last) - days.index(first) + 2
        )
        span = pd.DatetimeIndex(days[days.index(first) : days.index(last) + 1])
        want = adj.set_index("date")["close"].reindex(span).to_numpy(dtype="float32")
        assert np.array_equal(close[1:], want, equal_nan=True)
        ratio = (adj.set_index("date")["close"] / bars.set_index("date")["close"]).reindex(span)
        assert np.allclose(factor[1:], ratio.to_numpy(dtype="float32"), equal_nan=True)
    # the suspension inside 2908's span is NaN, not a price carried over
    suspended = pd.date_range("2025-03-03", "2025-04-14")
    rows = [days.index(f"{d:%Y-%m-%d}") for d in suspended if f"{d:%Y-%m-%d}" in days]
    close = np.fromfile(written / "features" / "2908" / "close.day.bin", dtype="<f4")
    start = int(close[0])
    assert rows and np.isnan(close[1:][[r - start for r in rows]]).all()


def test_bad_bars_are_refused(raw, tmp_path) -> None:
    with pytest.raises(InvalidParams, match="twice"):
        write_qlib(pd.concat([raw, raw.iloc[:1]]), tmp_path)
    with pytest.raises(InvalidParams, match="'close'"):
        write_qlib(raw.drop(columns="close"), tmp_path)
    with pytest.raises(InvalidParams, match="same symbols and dates"):
        write_qlib(raw, tmp_path, adjusted=raw.iloc[1:])


READ = """
import json, sys
import qlib
from qlib.data import D
qlib.init(provider_uri=sys.argv[1], region="cn", kernels=1)
everyone = D.list_instruments(D.instruments("all"), as_list=True)
after = D.list_instruments(
    D.instruments("all"), start_time="2025-09-01", end_time="2025-12-31", as_list=True
)
f = D.features(everyone, ["$close", "$factor"], start_time="2024-01-01", end_time="2025-12-31")
out = {}
for symbol, rows in f.groupby(level="instrument"):
    rows = rows.droplevel("instrument").dropna()
    out[symbol] = {
        "first": str(rows.index[0].date()),
        "last": str(rows.index[-1].date()),
        "held": float(rows["$close"].iloc[-1] / rows["$close"].iloc[0]),
        "closes": [float(x) for x in rows["$close"]],
    }
print(json.dumps({"all": everyone, "after": after, "features": out}))
"""


@pytest.mark.slow  # a process that imports qlib
def test_qlib_reads_the_store_and_the_delisting(written, adjusted) -> None:
    python = os.environ.get("MARKETFRAME_QLIB_PYTHON")
    if not python:
        pytest.skip("qlib's environment: MARKETFRAME_QLIB_PYTHON (.ci/run makes one)")
    done = subprocess.run(
        [python, "-c", READ, str(written)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(got["all"]) == sorted(set(adjusted["symbol"]))
    assert DELISTED not in got["after"] and "2330" in got["after"]  # gone after its delisting
    feats = got["features"]
    assert feats[DELISTED]["last"] == f"{LAST_SESSION:%Y-%m-%d}"
    for symbol, bars in adjusted.groupby("symbol"):
        want = bars["close"].to_numpy(dtype="float32")
        assert np.array_equal(np.array(feats[symbol]["closes"], dtype="float32"), want)
        # a buy-and-hold from the first bar to the last, the delisted stock's at its last
        assert feats[symbol]["held"] == pytest.approx(float(want[-1] / want[0]), rel=1e-6)
    assert sys.executable != python  # the round trip went through the other environment


def test_polars_bars_write_the_same_files(written, raw, adjusted, tmp_path) -> None:
    pl = pytest.importorskip("polars")
    again = write_qlib(pl.from_pandas(raw), tmp_path, adjusted=pl.from_pandas(adjusted))
    for path in sorted(p for p in written.rglob("*") if p.is_file()):
        assert (again / path.relative_to(written)).read_bytes() == path.read_bytes(), path
