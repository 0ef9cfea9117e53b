"""Fixtures of the store tests: each module gets its own sandbox (tests move its clock)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from . import _s3
from ._helpers import NOW


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(seed=11, now=NOW, rate_limit=None) as s:
        yield s


@pytest.fixture
def make_store(sb: Sandbox, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    made: list[Store] = []

    def make(name: str = "store", **kw: object) -> Store:
        st = Store(tmp_path / name, api_key=sb.api_key, base_url=sb.base_url, **kw)  # type: ignore[arg-type]
        made.append(st)
        return st

    yield make
    for st in made:
        st.close()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_s3.S3Server]:
    """A SeaweedFS S3 server of this test process (each xdist worker starts its own)."""
    server = _s3.start(tmp_path_factory.mktemp("seaweedfs"))
    yield server
    server.stop()


class Place:
    """Where a test's stores live: a temporary directory, or a fresh bucket of the S3 server
    (credentials only in the standard AWS environment variables, as users give them)."""

    def __init__(self, kind: str, tmp: Path, server: _s3.S3Server | None = None):
        self.kind, self.tmp, self.server = kind, tmp, server
        self.bucket = server.bucket() if server is not None else None

    def __repr__(self) -> str:
        return self.kind

    def url(self, name: str) -> str:
        return f"s3://{self.bucket}/{name}" if self.server else str(self.tmp / name)

    def options(self) -> dict[str, object]:
        return {"storage_options": self.server.options()} if self.server else {}

    def store(self, name: str, *args: object, **kw: object) -> Store:
        return Store(self.url(name), *args, **self.options(), **kw)  # type: ignore[arg-type]

    def files(self, name: str, part: str) -> list[str]:
        """Relative paths of the files under store ``name`` whose path contains ``part``."""
        if self.server is None:
            root = self.tmp / name
            found = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
            return [f for f in found if part in f]
        out = []
        for page in (
            self.server.client()
            .get_paginator("list_objects_v2")
            .paginate(Bucket=self.bucket, Prefix=f"{name}/")
        ):
            out += [
                o["Key"][len(name) + 1 :]
                for o in page.get("Contents", [])
                if part in o["Key"][len(name) + 1 :]
            ]
        return out

    def lease(self, name: str, rel: str) -> dict[str, object]:
        """The body of the lease object ``rel`` of store ``name`` (S3 stores)."""
        assert self.server is not None, "only object stores hold leases"
        got = self.server.client().get_object(Bucket=self.bucket, Key=f"{name}/{rel}")
        body: dict[str, object] = json.loads(got["Body"].read())
        return body


@pytest.fixture(params=["local", "s3"])
def place(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    """Each test using it runs against a local store and against an S3 store."""
    if request.param == "local":
        return Place("local", tmp_path)
    server: _s3.S3Server = request.getfixturevalue("s3_server")
    for k, v in server.env().items():
        monkeypatch.setenv(k, v)
    return Place("s3", tmp_path, server)
