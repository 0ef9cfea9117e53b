"""``marketframe academy login | whoami | token | logout | call PATH``.

``register(subparsers)`` adds the ``academy`` command; ``marketframe.cli`` assembles it.
Secrets are never printed, except the access token by ``token --show`` (asked for explicitly).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import webbrowser
from collections.abc import Callable
from typing import Any

from marketframe.exceptions import AcademyError

__all__ = ["URL_ENV", "register"]

URL_ENV = "MARKETFRAME_ACADEMY_URL"

# Looked up at call time so tests (and embedding programs) can replace them.
_open_browser: Callable[[str], object] = webbrowser.open
_read_line: Callable[[str], str] = input


def _client(args: argparse.Namespace, **kwargs: Any) -> Any:
    from marketframe.academy.client import AcademyClient  # authlib: by this command only

    # --url / --home may come before or after the subcommand (SUPPRESS keeps either)
    url = getattr(args, "url", None) or os.environ.get(URL_ENV)
    if not url:  # a usage error: exit status 2, as for any missing argument
        raise _no_url("no platform URL given", hint=f"pass --url URL or set {URL_ENV}")
    return AcademyClient(url, home=getattr(args, "home", None), **kwargs)


def _no_url(message: str, hint: str) -> Exception:
    """The AcademyError of a missing ``--url``, marked as a usage error (exit status 2)."""
    exc = AcademyError(message, hint=hint)
    exc.usage = True  # type: ignore[attr-defined]
    return exc


def _err(msg: str) -> None:
    print(f"marketframe academy: {msg}", file=sys.stderr)


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except AcademyError as exc:
            _err(f"{type(exc).__name__}: {exc}")
            return 2 if getattr(exc, "usage", False) else 1

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


@_guard
def _login(args: argparse.Namespace) -> int:
    scope: list[str] = []
    for s in args.scope or []:
        scope.extend(s.split())
    kwargs: dict[str, Any] = {"confidential": args.confidential}
    if scope:
        kwargs["scope"] = scope
    client = _client(args, **kwargs)
    tokens = client.login(
        open_browser=_open_browser,
        no_browser=args.no_browser,
        read_line=_read_line,
        show=lambda text: print(text, file=sys.stderr),
        timeout=args.timeout,
        reregister=args.reregister,
    )
    reg = client.registration()
    kind = "confidential" if reg is not None and reg.confidential else "public"
    print(f"Logged in to {client.platform_url} as a {kind} client.")
    print(f"Scope asked for: {tokens.requested_scope}")
    print(f"API token scope: {tokens.scope} (bound to {tokens.resource or 'no resource'})")
    print(f"Tokens stored in {client.store.path} (mode 0600).")
    return 0


@_guard
def _whoami(args: argparse.Namespace) -> int:
    claims = _client(args).userinfo()
    if args.json:
        print(json.dumps(claims, indent=2, sort_keys=True))
        return 0
    name = claims.get("name") or claims.get("preferred_username") or "(no name)"
    email = claims.get("email")
    print(f"{name}" + (f" <{email}>" if email else "") + f"  (sub: {claims.get('sub')})")
    return 0


@_guard
def _token(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.show:
        print(client.access_token())  # refreshed first if it is about to expire
        return 0
    tokens = client.tokens()
    left = tokens.expires_in()
    status = {
        "platform": client.platform_url,
        "access_token": "present (hidden; use --show to print it)",
        "expires_in_s": None if left is None else max(0, round(left)),
        "expired": left is not None and left <= 0,
        "refresh_token": "present (hidden)" if tokens.refresh_token else "absent",
        "scope": tokens.scope,
        "requested_scope": tokens.requested_scope,
        "resource": tokens.resource,
        "file": str(client.store.path),
        "obtained": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(tokens.obtained_at)),
    }
    for key, value in status.items():
        print(f"{key:16} {value}")
    return 0


@_guard
def _logout(args: argparse.Namespace) -> int:
    client = _client(args)
    had = client.logout(forget_client=args.forget_client)
    print("Logged out; tokens revoked and removed." if had else "Not logged in; nothing to do.")
    return 0


@_guard
def _call(args: argparse.Namespace) -> int:
    params: dict[str, str] = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise AcademyError(f"--param {item!r} is not KEY=VALUE", hint="e.g. --param page=2")
        params[key] = value
    client = _client(args)
    if args.frame:
        frame = client.load(args.path, params or None, anonymous=args.anonymous)
        print(frame.to_string(index=False) if len(frame) else "(no rows)")
        return 0
    body = client.get(args.path, params or None, anonymous=args.anonymous)
    print(json.dumps(body, indent=2, ensure_ascii=False))
    return 0


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def show(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    return show


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``academy`` command to an argparse subparsers object."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        help=f"the course platform's URL (default: ${URL_ENV})",
    )
    common.add_argument(
        "--home",
        default=argparse.SUPPRESS,
        help="directory of the private token file (default: $MARKETFRAME_ACADEMY_HOME, "
        "else ~/.config/marketframe/academy)",
    )
    p = subparsers.add_parser(
        "academy",
        help="log in to the course platform and call its API (OAuth 2.0 / OpenID Connect)",
        description=(
            "Log in once to the course platform (Authorization Code flow with PKCE), stay "
            "logged in (tokens are refreshed before they expire), call its API, log out. "
            "Tokens live in a file only you can read (0600)."
        ),
        parents=[common],
    )
    sub = p.add_subparsers(dest="academy_command", metavar="SUBCOMMAND")
    p.set_defaults(func=_help(p))

    lg = sub.add_parser(
        "login",
        parents=[common],
        help="log in (opens a browser, or --no-browser)",
        description=(
            "Register this client with the platform if needed, then log in: a browser opens "
            "the platform's login page and comes back to a listener on 127.0.0.1. With "
            "--no-browser the URL is printed; open it anywhere, then paste the address the "
            "browser ends on (a page that does not load)."
        ),
    )
    lg.add_argument(
        "--no-browser",
        action="store_true",
        help="print the login URL and read the pasted redirect address",
    )
    lg.add_argument(
        "--scope",
        action="append",
        metavar="SCOPE",
        help="scope(s) to ask for, repeatable or space separated "
        "(default: openid profile email courses:read)",
    )
    kind = lg.add_mutually_exclusive_group()
    kind.add_argument(
        "--confidential",
        dest="confidential",
        action="store_true",
        default=None,
        help="register as a confidential client (client_secret_post)",
    )
    kind.add_argument(
        "--public",
        dest="confidential",
        action="store_false",
        help="register as a public client (no secret; the default)",
    )
    lg.add_argument(
        "--reregister", action="store_true", help="register a new client even if one is stored"
    )
    lg.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds to wait for the browser to come back (default 300)",
    )
    lg.set_defaults(func=_login)

    # the commands of one switch each: name, what runs it, help, description, the switch
    for name, func, summary, description, switch in (
        (
            "whoami",
            _whoami,
            "show the logged-in user (UserInfo)",
            "Show who is logged in, from the platform's UserInfo.",
            ("--json", "print all claims as JSON"),
        ),
        (
            "token",
            _token,
            "show the token status (the token only with --show)",
            "Show whether tokens are stored, when the access token expires, its scope and "
            "resource. The token itself is printed only with --show (refreshed first if it "
            'is about to expire), e.g. for curl -H "Authorization: Bearer $(...)".',
            ("--show", "print the access token itself"),
        ),
        (
            "logout",
            _logout,
            "revoke the tokens and delete them",
            "Revoke the access and refresh tokens (RFC 7009) and "
            "delete them locally; the client registration is kept.",
            ("--forget-client", "also delete the stored client registration"),
        ),
    ):
        one = sub.add_parser(name, parents=[common], help=summary, description=description)
        one.add_argument(switch[0], action="store_true", help=switch[1])
        one.set_defaults(func=func)

    ca = sub.add_parser(
        "call",
        parents=[common],
        help="GET an API path with the bearer token",
        description="GET a path of the platform's API (e.g. /api/courses) and print the JSON.",
    )
    ca.add_argument("path", metavar="PATH", help="API path, e.g. /api/courses")
    ca.add_argument("--param", action="append", metavar="KEY=VALUE", help="query parameter")
    ca.add_argument("--frame", action="store_true", help="print a list response as a table")
    ca.add_argument("--anonymous", action="store_true", help="call without a token")
    ca.set_defaults(func=_call)
