"""How ``layout2/`` was made: a store written by marketframe before the log (commit 84f8ee7,
layout 2: one ``_manifest.json`` and its previous generation), for the upgrade tests.

Run with that version of marketframe importable::

    git worktree add /tmp/old 84f8ee7
    PYTHONPATH=/tmp/old python3 tests/data/stores/make_layout2.py tests/data/stores/layout2
"""

import shutil
import sys
from pathlib import Path

from marketframe.sandbox import Sandbox
from marketframe.store import Store

CANDLES = "stock.historical.candles"

out = Path(sys.argv[1])
shutil.rmtree(out, ignore_errors=True)
with Sandbox(seed=11, now="2026-11-20T14:00:00+08:00", rate_limit=None) as sb:
    with Store(out, api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(CANDLES, ["2330", "0050"], "2025-06-01", "2025-12-31", progress=False)
        st.sync(CANDLES, ["2330", "0050"], "2025-06-01", "2026-03-31", progress=False)
        st.compute(CANDLES, ["sma", "rsi"], max_workers=1)
(out / ".lock").unlink(missing_ok=True)
