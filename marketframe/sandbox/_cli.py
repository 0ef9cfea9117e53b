"""`marketframe sandbox`: serve the emulator until interrupted."""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Callable

from . import Sandbox, iso_time
from ._auth import DEMO_CREDENTIALS, DEMO_KEYS
from ._server import SandboxOptionError, check_option, check_stream_option
from ._stream_replay import MAX_SUBSCRIPTIONS, SEND_BUFFER


def _stream_option(name: str, kind: type[float] = int) -> Callable[[str], float]:
    """argparse type of a streaming setting (an integer's 0: no cap)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
            if value != 0 or kind is not int:
                check_stream_option(name, value)
        except ValueError as exc:
            said = exc.allowed if isinstance(exc, SandboxOptionError) else f"a {kind.__name__}"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range; allowed: {said}") from None
        return value

    parse.__name__ = name
    return parse


def _option(
    name: str, kind: type[float], scale: float = 1.0, allowed: str | None = None
) -> Callable[[str], float]:
    """argparse type of the server option ``name``: its range is checked when the command
    line is read (exit 2 naming the range), never by a server that then fails every request.
    ``scale`` converts the flag's unit to the option's (milliseconds to seconds)."""

    def parse(text: str) -> float:
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


_NOW_HELP = (
    "freeze the clock at this ISO time (e.g. 2026-11-20T10:30:00+08:00); "
    "default: follow the wall clock"
)
_LATENCY = _option("latency", float, 1e-3, "milliseconds from 0 to 60000")
_SUBSCRIPTIONS = _stream_option("max_subscriptions")
_SUBSCRIPTIONS_HELP = "subscriptions one WebSocket connection may hold (0: no cap)"
_SPEED_HELP = "the streams' market clock: N x real time from 08:30 (0: each as fast as it reads)"
_SEND_BUFFER_HELP = (
    "bytes that may wait for a WebSocket client on a market clock before it is dropped "
    "(0: no bound)"
)

#: The flags, in the order ``--help`` lists them: flag -> (type, default, help). ``int`` and
#: ``float`` name a server option (the flag's name): its range is checked as the command line
#: is read (``_option``); any other type is argparse's as it is.
_FLAGS: dict[str, tuple[Callable[[str], object], object, str]] = {
    "--host": (str, "127.0.0.1", "address to listen on"),
    "--port": (int, 8000, "port (0 picks a free one)"),
    "--seed": (int, 0, "seed of the synthetic market"),
    "--now": (iso_time, None, _NOW_HELP),
    "--rate-limit": (int, 600, "requests per key per minute (0: unlimited)"),
    "--rate-window": (float, 60.0, "seconds of one rate-limit window"),
    "--latency-ms": (_LATENCY, 0.0, "delay added to each response"),
    "--fault-rate": (float, 0.0, "share of requests answered with a random 5xx"),
    "--reset-rate": (float, 0.0, "share of requests whose connection is dropped unanswered"),
    "--extra-equities": (
        int,
        0,
        "add N generic synthetic equities (9001, 9002, ...) for bulk jobs",
    ),
    "--http-connections": (
        int,
        512,
        "connections open at once; more are closed on accept (0: no cap)",
    ),
    "--idle-timeout": (float, 60.0, "seconds a connection may go without a complete request"),
    "--max-subscriptions": (_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS, _SUBSCRIPTIONS_HELP),
    "--stream-speed": (_stream_option("stream_speed", float), 0.0, _SPEED_HELP),
    "--send-buffer": (_stream_option("send_buffer"), SEND_BUFFER, _SEND_BUFFER_HELP),
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    for flag, (kind, default, text) in _FLAGS.items():
        if kind is int or kind is float:
            kind = _option(flag.removeprefix("--").replace("-", "_"), kind)
        p.add_argument(flag, type=kind, default=default, help=text)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
        stream_speed=args.stream_speed,
        send_buffer=args.send_buffer or None,
    )
    try:
        with sb:
            _banner(sb, args.seed)
            print("Serving until interrupted (Ctrl-C).", flush=True)
            threading.Event().wait()
    except KeyboardInterrupt:  # at any point: while starting, printing or serving
        print("stopped")
    return 0


def _banner(sb: Sandbox, seed: int) -> None:
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
