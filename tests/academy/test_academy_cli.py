"""``marketframe academy ...`` through its own ``register`` on a fresh argparse parser, against
the real server, with a temporary home and an injected browser / pasted URL."""

from __future__ import annotations

import argparse
import json
import stat

import pytest

from marketframe.academy import TokenStore
from marketframe.cli import _academy as _cli


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="marketframe")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _cli.register(sub)
    args = parser.parse_args(list(argv))
    return int(args.func(args))


@pytest.fixture()
def cli_env(auth_server, browser, home, monkeypatch):
    monkeypatch.setenv(_cli.URL_ENV, auth_server.url)
    monkeypatch.setattr(_cli, "_open_browser", browser)

    def no_input(prompt: str) -> str:
        raise AssertionError("the browser mode must not read input")

    monkeypatch.setattr(_cli, "_read_line", no_input)
    return auth_server


def test_login_whoami_token_call_logout(cli_env, home, capsys) -> None:
    assert (
        _run("academy", "login", "--scope", "openid profile email", "--scope", "courses:read") == 0
    )
    out = capsys.readouterr().out
    assert "Logged in to" in out and "public client" in out
    store = TokenStore(cli_env.url, home)
    tokens = store.tokens()
    assert tokens is not None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600

    assert _run("academy", "whoami") == 0
    assert capsys.readouterr().out.strip() == (
        "Lin Mei-Hua <mei-hua.lin@example.test>  (sub: student-0001)"
    )
    assert _run("academy", "whoami", "--json") == 0
    assert json.loads(capsys.readouterr().out)["sub"] == "student-0001"

    assert _run("academy", "token") == 0
    out = capsys.readouterr().out
    assert "hidden" in out and f"resource         {cli_env.url}" in out
    current = store.tokens()
    assert current is not None
    for secret in (current.access_token, current.refresh_token):
        assert secret and secret not in out

    assert _run("academy", "token", "--show") == 0
    assert capsys.readouterr().out.strip() == store.tokens().access_token

    assert _run("academy", "call", "/api/courses", "--frame") == 0
    table = capsys.readouterr().out
    assert "Reading the TAIEX" in table and "lessons" in table.splitlines()[0]
    assert _run("academy", "call", "/api/courses/c-101") == 0
    assert json.loads(capsys.readouterr().out)["id"] == "c-101"

    assert _run("academy", "call", "/api/account") == 1
    err = capsys.readouterr().err
    assert "InsufficientScope" in err and "--scope account:read" in err

    assert _run("academy", "logout") == 0
    assert "revoked" in capsys.readouterr().out
    assert store.tokens() is None
    assert _run("academy", "token") == 1
    assert "NotLoggedIn" in capsys.readouterr().err
    assert _run("academy", "logout") == 0
    assert "Not logged in" in capsys.readouterr().out


def test_login_no_browser_with_pasted_url(cli_env, browser, home, capsys, monkeypatch) -> None:
    def paste(prompt: str) -> str:
        printed = capsys.readouterr().err  # the URL goes to stderr, stdout stays clean
        url = next(
            line.strip()
            for line in printed.splitlines()
            if line.strip().startswith(f"{cli_env.url}/oauth/authorize?")
        )
        return browser.redirect_for(url)

    monkeypatch.setattr(_cli, "_read_line", paste)
    assert _run("academy", "--home", str(home), "login", "--no-browser", "--confidential") == 0
    assert "confidential client" in capsys.readouterr().out
    assert _run("academy", "call", "/api/courses", "--url", cli_env.url) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4


def test_refused_login_exits_1_with_a_hint(cli_env, browser, capsys) -> None:
    browser.decision = "deny"
    assert _run("academy", "login", "--timeout", "10") == 1
    err = capsys.readouterr().err
    assert "AuthorizationError" in err and "access_denied" in err


def test_missing_url_says_what_to_do(home, monkeypatch, capsys) -> None:
    monkeypatch.delenv(_cli.URL_ENV, raising=False)
    assert _run("academy", "token") == 2  # a usage error, as for any missing argument
    assert "--url" in capsys.readouterr().err


@pytest.mark.parametrize("sub", ["login", "whoami", "token", "logout", "call"])
def test_every_subcommand_has_help(sub: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        _run("academy", sub, "--help")
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert f"marketframe academy {sub}" in out and "--url" in out and "--home" in out


def test_academy_without_subcommand_prints_help(capsys) -> None:
    assert _run("academy") == 2
    out = capsys.readouterr().out
    for sub in ("login", "whoami", "token", "logout", "call"):
        assert sub in out
