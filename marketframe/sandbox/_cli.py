"""`marketframe sandbox`: serve the emulator until interrupted."""

from __future__ import annotations

import argparse
import signal
import threading

from . import iso_time
from ._auth import DEMO_CREDENTIALS, DEMO_KEYS
from ._server import SandboxOptionError, check_option, check_stream_option
from ._stream_replay import MAX_SUBSCRIPTIONS


def _stream_option(name: str):  # type: ignore[no-untyped-def]
    """argparse type of an integer streaming setting (0: no cap)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
            if value != 0:
                check_stream_option(name, value)
        except ValueError as exc:
            said = exc.allowed if isinstance(exc, SandboxOptionError) else "an integer"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range; allowed: {said}") from None
        return value

    parse.__name__ = name
    return parse


def _option(name: str, kind: type, scale: float = 1.0, allowed: str | None = None):  # type: ignore[no-untyped-def]
    """argparse type of the server option ``name``: its range is checked when the command
    line is read (exit 2 naming the range), never by a server that then fails every request.
    ``scale`` converts the flag's unit to the option's (milliseconds to seconds)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
            check_option(name, value * scale if scale != 1.0 else value)
        except ValueError as exc:  # not a number, or SandboxOptionError
            said = exc.allowed if isinstance(exc, SandboxOptionError) else None
            raise argparse.ArgumentTypeError(
                f"{text!r} is out of range; allowed: {allowed or said or kind.__name__}"
            ) from None
        return value

    parse.__name__ = name  # argparse names the type in its own messages
    return parse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sandbox",
        help="run the local emulator of the market data service",
        description=(
            "Serve a faithful local emulator of the market data service (REST, and WebSocket "
            "streaming on the same port) over a deterministic synthetic market. Point any "
            "client at the printed base URL with one of the printed demo keys."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument(
        "--port", type=_option("port", int), default=8000, help="port (0 picks a free one)"
    )
    p.add_argument(
        "--seed", type=_option("seed", int), default=0, help="seed of the synthetic market"
    )
    p.add_argument(
        "--now",
        default=None,
        type=iso_time,
        help="freeze the clock at this ISO time (e.g. 2026-11-20T10:30:00+08:00); "
        "default: follow the wall clock",
    )
    p.add_argument(
        "--rate-limit",
        type=_option("rate_limit", int),
        default=600,
        help="requests per key per minute (0: unlimited)",
    )
    p.add_argument(
        "--rate-window",
        type=_option("rate_window", float),
        default=60.0,
        help="seconds of one rate-limit window",
    )
    p.add_argument(
        "--latency-ms",
        type=_option("latency", float, 1e-3, "milliseconds from 0 to 60000"),
        default=0.0,
        help="delay added to each response",
    )
    p.add_argument(
        "--fault-rate",
        type=_option("fault_rate", float),
        default=0.0,
        help="share of requests answered with a random 5xx",
    )
    p.add_argument(
        "--reset-rate",
        type=_option("reset_rate", float),
        default=0.0,
        help="share of requests whose connection is dropped unanswered",
    )
    p.add_argument(
        "--extra-equities",
        type=_option("extra_equities", int),
        default=0,
        help="add N generic synthetic equities (9001, 9002, ...) for bulk jobs",
    )
    p.add_argument(
        "--http-connections",
        type=_option("http_connections", int),
        default=512,
        help="connections open at once; more are closed on accept (0: no cap)",
    )
    p.add_argument(
        "--idle-timeout",
        type=_option("idle_timeout", float),
        default=60.0,
        help="seconds a connection may go without a complete request",
    )
    p.add_argument(
        "--max-subscriptions",
        type=_stream_option("max_subscriptions"),
        default=MAX_SUBSCRIPTIONS,
        help="subscriptions one WebSocket connection may hold (0: no cap)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from . import Sandbox

    # "Serving until interrupted" must hold even when started with SIGINT ignored (a
    # background job of a non-interactive shell), so `kill -INT` stops it like Ctrl-C.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sb = Sandbox(
        seed=args.seed,
        now=args.now,
        rate_limit=args.rate_limit or None,
        rate_window=args.rate_window,
        latency=args.latency_ms / 1000,
        fault_rate=args.fault_rate,
        reset_rate=args.reset_rate,
        host=args.host,
        port=args.port,
        extra_equities=args.extra_equities,
        http_connections=args.http_connections or None,
        idle_timeout=args.idle_timeout,
        max_subscriptions=args.max_subscriptions or None,
    )
    try:
        with sb:
            _banner(sb, args.seed)
            print("Serving until interrupted (Ctrl-C).", flush=True)
            threading.Event().wait()
    except KeyboardInterrupt:  # at any point: while starting, printing or serving
        print("stopped")
    return 0


def _banner(sb, seed: int) -> None:  # type: ignore[no-untyped-def]
    print(f"marketframe sandbox (seed {seed}, now {sb.now().isoformat()})")
    print(f"  base URL   {sb.base_url}")
    print(f"  streaming  {sb.ws_url}")
    print(f"  futopt     {sb.futopt_ws_url('v1.1')} (or v1.0)")
    for plan, key in DEMO_KEYS.items():
        print(
            f"  {plan:<10} X-API-KEY: {key}   Authorization: Bearer "
            f"{DEMO_CREDENTIALS['bearer_token'][plan]}   X-SDK-TOKEN: "
            f"{DEMO_CREDENTIALS['sdk_token'][plan]}"
        )
    print(
        f"  try: curl -H 'X-API-KEY: {DEMO_KEYS['advanced']}' "
        f"{sb.base_url}/stock/intraday/quote/2330"
    )
