"""Fixtures for the academy tests: a real authorization server (oidc-provider, node) with a small
protected resource, on 127.0.0.1, and an HTTP client that plays the user's browser."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests

SERVER_DIR = Path(__file__).parent / "server"


def _ensure_node_modules() -> None:
    if (SERVER_DIR / "node_modules" / "oidc-provider").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail(
            "node and npm are needed to run the test authorization server "
            "(tests/academy/server); install Node.js >= 20",
            pytrace=False,
        )
    proc = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=SERVER_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        pytest.fail(f"npm ci failed in {SERVER_DIR}:\n{proc.stdout}\n{proc.stderr}", pytrace=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class AuthServer:
    url: str
    log_path: Path
    access_token_ttl: int
    process: subprocess.Popen[bytes] = field(repr=False)

    def stats(self) -> dict[str, Any]:
        return requests.get(f"{self.url}/__test__/stats", timeout=5).json()

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _start_server(tmp: Path, ttl: int, scopes: str = "hand") -> Iterator[AuthServer]:
    _ensure_node_modules()
    port = _free_port()
    log_path = tmp / f"server-{port}.log"
    env = dict(os.environ, PORT=str(port), ACCESS_TOKEN_TTL=str(ttl), SCOPES_CONFIG=scopes)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["node", "server.js", str(port)],
            cwd=SERVER_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while f"READY {url}" not in log_path.read_text(errors="replace"):
        if proc.poll() is not None:
            pytest.fail(f"the test server exited early:\n{log_path.read_text()}", pytrace=False)
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the test server did not start:\n{log_path.read_text()}", pytrace=False)
        time.sleep(0.05)
    try:
        yield AuthServer(url=url, log_path=log_path, access_token_ttl=ttl, process=proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """The platform with a comfortable access-token lifetime (300 s)."""
    yield from _start_server(tmp_path_factory.mktemp("authserver"), ttl=300)


@pytest.fixture(scope="session")
def short_ttl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """The same platform whose API access tokens live 2 s, for real expiry."""
    yield from _start_server(tmp_path_factory.mktemp("shortttl"), ttl=2)


@pytest.fixture(scope="session")
def standard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """The platform configured the standard way: the authorization server's RFC 8414
    ``scopes_supported`` lists only the OpenID scopes; the API scopes are listed by the API's
    RFC 9728 metadata (and known to the server through its resource-server configuration)."""
    yield from _start_server(tmp_path_factory.mktemp("standard"), ttl=300, scopes="standard")


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private MARKETFRAME_ACADEMY_HOME for one test."""
    h = tmp_path / "academy-home"
    monkeypatch.setenv("MARKETFRAME_ACADEMY_HOME", str(h))
    return h


class Browser:
    """Plays the user's browser with plain HTTP: follows the login redirects (the test server
    logs the user in and consents automatically) up to the client's redirect URI.

    ``decision="deny"`` makes the user refuse; ``tamper`` rewrites the final redirect URL
    (to forge ``state`` or ``iss``) before it is delivered.
    """

    def __init__(self) -> None:
        self.session = requests.Session()
        self.decision: str | None = None
        self.tamper: Callable[[str], str] | None = None
        self.visited: list[str] = []

    @staticmethod
    @contextlib.contextmanager
    def _quiet() -> Iterator[None]:
        """The browser is not the client: its own urllib3 request lines (which show the
        authorization URL and the redirect with its code) stay out of the logs under test."""
        logger = logging.getLogger("urllib3.connectionpool")
        old, logger.disabled = logger.disabled, True
        try:
            yield
        finally:
            logger.disabled = old

    def redirect_for(self, url: str) -> str:
        with self._quiet():
            return self._redirect_for(url)

    def _redirect_for(self, url: str) -> str:
        headers = {"X-Test-Decision": self.decision} if self.decision else {}
        for _ in range(20):
            resp = self.session.get(url, allow_redirects=False, headers=headers, timeout=10)
            self.visited.append(urlsplit(url).path)
            if resp.status_code not in (301, 302, 303, 307, 308):
                raise AssertionError(
                    f"login page stopped at HTTP {resp.status_code}: {resp.text[:500]}"
                )
            nxt = urljoin(url, resp.headers["Location"])
            if urlsplit(nxt).path == "/callback":
                return self.tamper(nxt) if self.tamper else nxt
            url = nxt
        raise AssertionError("too many redirects")

    def __call__(self, url: str) -> bool:
        """The ``open_browser`` hook: go through the login and land on the loopback listener."""
        final = self.redirect_for(url)
        with self._quiet():
            requests.get(final, timeout=10)
        return True


@pytest.fixture()
def browser() -> Browser:
    return Browser()
