"""``import marketframe`` loads no heavy optional library; each loads on first use.

Deterministic (a ``sys.modules`` check in a fresh interpreter), not timed: the time itself is
measured by ``benchmarks/import_time.py``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

HEAVY = ("polars", "matplotlib", "authlib", "aiohttp", "requests", "requests_cache")


def run(code: str) -> str:
    """Run ``code`` in a fresh interpreter; its stdout (a failure shows its stderr)."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_marketframe_loads_no_heavy_optional_library() -> None:
    out = run(f"""
        import sys
        import marketframe
        print(','.join(m for m in {HEAVY!r} if m in sys.modules))
    """)
    assert out == ""


@pytest.mark.parametrize("order", ["polars first", "marketframe first"])
def test_polars_md_namespace_works_whichever_is_imported_first(order: str) -> None:
    first, second = (
        ("polars", "marketframe") if order == "polars first" else ("marketframe", "polars")
    )
    out = run(f"""
        import {first}, {second}
        import polars as pl
        df = pl.DataFrame({{"close": [1.0, 2.0, 4.0]}})
        print(df.md.sma(2)["sma_2"].to_list(), df.lazy().md.sma(2).collect()["sma_2"].to_list())
        print(type(pl.__loader__).__name__, type(pl.__spec__.loader).__name__)
    """)
    assert out.splitlines()[0] == "[None, 1.5, 3.0] [None, 1.5, 3.0]"
    # polars keeps its own loader: the hook leaves no trace on the module
    assert out.splitlines()[1] == "SourceFileLoader SourceFileLoader"


def test_polars_md_works_on_frames_marketframe_converts_after_checking_the_extra() -> None:
    """A frame asked for with ``backend="polars"``: marketframe looks polars up (is the extra
    installed?), then imports it itself; the lookup must not use up the hook."""
    out = run("""
        import pyarrow as pa
        import marketframe
        from marketframe.convert import check_backend, to_frame
        check_backend("download", "polars")  # a lookup, as before any request
        df = to_frame(pa.table({"close": [1.0, 2.0, 4.0]}), "polars")
        print(df.md.sma(2)["sma_2"].to_list())
    """)
    assert out == "[None, 1.5, 3.0]"


def test_heavy_parts_load_on_first_use() -> None:
    out = run("""
        import sys
        import marketframe
        with marketframe.Client.sandbox(backend="polars") as c:
            c.stock.intraday.quote("2330")
        print(','.join(m for m in ('polars', 'aiohttp', 'requests') if m in sys.modules))
    """)
    assert out == "polars,aiohttp,requests"


def test_the_calendar_is_an_attribute_loaded_on_first_use() -> None:
    out = run("""
        import sys
        import marketframe
        before = 'marketframe.calendar' in sys.modules or 'exchange_calendars' in sys.modules
        cal = marketframe.calendar
        ok = cal.is_session('2026-11-20') and not cal.is_session('2026-11-21')
        print(before, ok, marketframe.calendar is sys.modules['marketframe.calendar'])
    """)
    assert out == "False True True"
