"""No secret in a compute task: credentials given in ``storage_options`` never appear in a
task's ``repr`` or in the pickled task an executor (Dask, Ray) or Spark is sent; compute's
own pool still reaches the store with them (an initializer of its workers, not the tasks).
Against SeaweedFS, with no AWS variable in the environment: the credentials are only in
``storage_options``."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import subprocess_env
from ._s3 import S3Server

DAILY = "stock.historical.candles"
SYMS = ["2330", "2454", "0050"]
AWS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
)


class Recording(Executor):
    """An executor that keeps what it is sent, as Dask would receive it (pickled), and its
    repr, then runs it here."""

    def __init__(self) -> None:
        self.pickled: list[bytes] = []
        self.shown: list[str] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.pickled.append(pickle.dumps((fn, args, kwargs)))
        self.shown += [repr(a) for a in args]
        done: Future[Any] = Future()
        done.set_result(fn(*args, **kwargs))
        return done


@pytest.fixture
def no_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """The environment without AWS credentials (nor a credentials file to find)."""
    for name in AWS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return {k: v for k, v in subprocess_env().items() if k not in AWS}


def _options(server: S3Server) -> dict[str, str]:
    return {"endpoint_url": server.endpoint, "key": server.key, "secret": server.secret}


def test_no_credential_in_a_task_repr_or_pickle(
    sb: Sandbox, s3_server: S3Server, no_aws_env: dict[str, str]
) -> None:
    url = f"s3://{s3_server.bucket()}/secrets"
    with Store(
        url, api_key=sb.api_key, base_url=sb.base_url, storage_options=_options(s3_server)
    ) as st:
        st.sync(DAILY, SYMS, "2024-01-01", "2024-12-31", progress=False)
        ex = Recording()
        rep = st.compute(DAILY, ["rsi", "macd"], executor=ex)
        assert all(m == {"full": sorted(SYMS)} for m in rep.modes.values())
        assert len(ex.pickled) == len(SYMS)
        for blob, shown in zip(ex.pickled, ex.shown, strict=True):
            for secret in (s3_server.secret, s3_server.key):  # never printed by a failure
                pickled, in_repr = secret.encode() in blob, secret in shown
                assert not pickled, "a credential is in the pickled task"
                assert not in_repr, "a credential is in the task's repr"
            assert "credentials=('key', 'secret')" in shown  # what was withheld, by name
        assert len(st.read_derived(DAILY, "rsi")) == len(st.read(DAILY))


RUN = """
import json, sys
from marketframe.store import Store
with Store(sys.argv[1], storage_options=json.loads(sys.argv[2])) as st:
    rep = st.compute("stock.historical.candles", ["rsi", "macd"], max_workers=2)
    print(json.dumps(rep.modes))
"""


def test_the_own_pool_reaches_the_store_with_credentials_given_in_storage_options(
    sb: Sandbox, s3_server: S3Server, no_aws_env: dict[str, str], tmp_path: Path
) -> None:
    """The default pool's workers get the credentials from the driver (their initializer),
    not from a task and not from the environment: a fresh process without AWS variables."""
    url = f"s3://{s3_server.bucket()}/pool"
    opts = _options(s3_server)
    with Store(url, api_key=sb.api_key, base_url=sb.base_url, storage_options=opts) as st:
        st.sync(DAILY, SYMS, "2024-01-01", "2024-12-31", progress=False)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RUN), url, json.dumps(opts)],
        env=no_aws_env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    modes = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(m == {"full": sorted(SYMS)} for m in modes.values())
    with Store(url, storage_options=opts) as st:
        assert len(st.read_derived(DAILY, "macd")) == len(st.read(DAILY))


WORKER = """
import pickle, sys
from marketframe.exceptions import ConfigurationError
fn, args, kwargs = pickle.loads(sys.stdin.buffer.read())
try:
    res = fn(*args, **kwargs)
except ConfigurationError as exc:
    print("ConfigurationError:", exc, exc.next_step())
    raise SystemExit(3)
print("ok", *res.outcomes[0].members)
"""


def test_another_executors_worker_takes_credentials_from_its_environment(
    sb: Sandbox, s3_server: S3Server, no_aws_env: dict[str, str], tmp_path: Path
) -> None:
    """A task run by a worker the driver never spoke to (a Dask or Spark executor's): without
    AWS variables it fails saying where credentials come from; with them it runs."""
    url = f"s3://{s3_server.bucket()}/worker"
    with Store(
        url, api_key=sb.api_key, base_url=sb.base_url, storage_options=_options(s3_server)
    ) as st:
        st.sync(DAILY, SYMS[:1], "2024-01-01", "2024-12-31", progress=False)
        ex = Recording()
        st.compute(DAILY, "rsi", executor=ex)
    (task,) = ex.pickled

    def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(WORKER)],
            input=task.decode("latin-1"),
            env=env,
            capture_output=True,
            text=True,
            encoding="latin-1",
            timeout=300,
            cwd=tmp_path,
        )

    bare = run(no_aws_env)
    assert bare.returncode == 3, bare.stderr[-3000:]
    assert "(key, secret) are never sent with a task" in bare.stdout
    assert "AWS_ACCESS_KEY_ID" in bare.stdout
    given = run({**no_aws_env, **s3_server.env()})
    assert given.returncode == 0 and given.stdout.split() == ["ok", SYMS[0]], given.stderr
