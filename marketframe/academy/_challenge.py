"""Parse ``WWW-Authenticate`` headers (RFC 9110 section 11.6.1, RFC 6750 section 3).

A header may hold several challenges, each a scheme followed by either a token68 or a
comma-separated list of ``name=value`` auth-params, where a value is a token or a quoted
string with backslash escapes. requests and authlib do not parse this, so it is done here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "parse_www_authenticate"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_WS = re.compile(r"[ \t]*")


@dataclass(frozen=True)
class Challenge:
    """One challenge: its scheme (lower-cased), params (names lower-cased) or token68."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_ws(self) -> None:
        m = _WS.match(self.text, self.pos)
        assert m is not None
        self.pos = m.end()

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def eat(self, char: str) -> bool:
        self.skip_ws()
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def token(self) -> str | None:
        self.skip_ws()
        m = _TOKEN.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m.group(0)

    def quoted(self) -> str | None:
        self.skip_ws()
        if self.peek() != '"':
            return None
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            if ch == '"':
                self.pos += 1
                return "".join(out)
            out.append(ch)
            self.pos += 1
        return "".join(out)  # unterminated: be lenient, take the rest

    def at_param(self) -> bool:
        """Whether the input at the cursor is ``token =`` (an auth-param, not a new scheme)."""
        save = self.pos
        try:
            if self.token() is None:
                return False
            self.skip_ws()
            return self.peek() == "=" and self.text[self.pos : self.pos + 2] != "=="
        finally:
            self.pos = save


def parse_www_authenticate(header: str) -> list[Challenge]:
    """Every challenge in a ``WWW-Authenticate`` value, in order. Malformed parts are skipped."""
    sc = _Scanner(header)
    challenges: list[Challenge] = []
    while True:
        while sc.eat(","):
            pass
        scheme = sc.token()
        if scheme is None:
            break
        params: dict[str, str] = {}
        token68: str | None = None
        sc.skip_ws()
        if not sc.at_param():
            m = _TOKEN68.match(sc.text, sc.pos)
            # a token68 stands alone: it is followed by the end or a comma
            if m and sc.text[m.end() :].lstrip(" \t")[:1] in ("", ","):
                token68 = m.group(0)
                sc.pos = m.end()
        else:
            while sc.at_param():
                name = sc.token()
                assert name is not None
                sc.eat("=")
                value = sc.quoted()
                if value is None:
                    value = sc.token() or ""
                params.setdefault(name.lower(), value)
                save = sc.pos
                if not sc.eat(","):
                    break
                while sc.eat(","):
                    pass
                if not sc.at_param():
                    sc.pos = save  # a new challenge starts after this comma
                    break
        challenges.append(Challenge(scheme=scheme.lower(), params=params, token68=token68))
        if not sc.eat(","):
            # anything else is garbage: stop rather than guess
            sc.skip_ws()
            if sc.pos >= len(sc.text):
                break
            nxt = sc.token()
            if nxt is None:
                break
            sc.pos -= len(nxt)
    return challenges


def bearer_challenge(header: str | None) -> dict[str, str]:
    """The params of the first ``Bearer`` challenge in ``header`` (empty if there is none)."""
    if not header:
        return {}
    for ch in parse_www_authenticate(header):
        if ch.scheme == "bearer":
            return dict(ch.params)
    return {}
