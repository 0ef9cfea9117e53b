"""`marketframe demo`: the main job behind the README's first command.

With no ``MARKETFRAME_API_KEY`` it starts the embedded sandbox and runs against it; with the
key set it uses the real service. For now it fetches a few real responses of the service and
prints them; later issues grow it into a tour of the whole package.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack

REAL_BASE_URL = "https://api.fugle.tw/marketdata/v1.0"

SHOWN = (
    ("stock/intraday/quote/2330", "the quote of 台積電 (2330)"),
    ("stock/intraday/trades/2330?limit=3", "its three latest trades (newest first)"),
    ("stock/historical/candles/0050?timeframe=D&sort=asc", "0050's daily candles this year"),
    ("stock/technical/kdj/2330?timeframe=D&rPeriod=9&kPeriod=3&dPeriod=3", "KDJ(9,3,3)"),
    ("futopt/intraday/products?type=FUTURE", "futures products"),
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "demo",
        help="show what marketframe does (no API key needed: runs on the sandbox)",
        description=(
            "Run the main job. With MARKETFRAME_API_KEY unset, an embedded sandbox serves a "
            "synthetic market on 127.0.0.1; with it set, the real service is used."
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="sandbox seed")
    p.add_argument("--now", default=None, help="sandbox clock (ISO time); default: wall clock")
    p.set_defaults(func=run)


def _show(session, base_url: str, path: str, title: str) -> None:
    from datetime import date

    today = date.today()
    if "historical" in path or "technical" in path:
        path += f"&from={today.year}-01-01&to={today.isoformat()}"
    r = session.get(f"{base_url}/{path}", timeout=30)
    body = r.json()
    rows = body.get("data") if isinstance(body, dict) else None
    print(f"\n== {title}: GET /{path.split('?')[0]} -> {r.status_code}")
    if isinstance(rows, list):
        print(f"   {len(rows)} rows; first: {json.dumps(rows[:1], ensure_ascii=False)}")
    else:
        print("   " + json.dumps(body, ensure_ascii=False)[:400])


def run(args: argparse.Namespace) -> int:
    import requests

    key = os.environ.get("MARKETFRAME_API_KEY")
    with ExitStack() as stack:
        if key:
            base_url = os.environ.get("MARKETFRAME_BASE_URL", REAL_BASE_URL)
            print(f"Using the real service at {base_url}")
        else:
            from marketframe.sandbox import Sandbox

            sb = stack.enter_context(Sandbox(seed=args.seed, now=args.now))
            base_url, key = sb.base_url, sb.api_key
            print(f"No MARKETFRAME_API_KEY set: started the sandbox at {base_url}")
        session = stack.enter_context(requests.Session())
        session.headers["X-API-KEY"] = key
        for path, title in SHOWN:
            _show(session, base_url, path, title)
    print("\nNext: `marketframe sandbox --port 8000` serves the emulator for your own client.")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(argparse.Namespace(seed=0, now=None)))
