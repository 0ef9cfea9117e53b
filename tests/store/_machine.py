"""Helpers of the store's state machine (test_store_machine.py): the files of a store as a
user sees them (listed, hashed, damaged: on disk, or through the S3 server's own client),
tables compared value for value, and a child process killed mid-operation."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ._helpers import plain, subprocess_env
from .conftest import Place

CANDLES = "stock.historical.candles"


# -- a store's files, as the user's tools see them ------------------------------------------


class Files:
    """The files of store ``name`` of ``place``: listed, read, damaged. A local store is a
    directory; an S3 store is read and written with the server's own client, never the
    store's code."""

    def __init__(self, place: Place, name: str):
        self.place, self.name = place, name
        self.local = place.server is None
        self.root = place.tmp / name
        self._client: Any = None

    def _s3(self) -> Any:
        if self._client is None:
            assert self.place.server is not None
            self._client = self.place.server.client()
        return self._client

    def _key(self, rel: str) -> str:
        return f"{self.name}/{rel}"

    def listing(self) -> list[str]:
        """Every file of the store, relative to its root."""
        if self.local:
            if not self.root.exists():
                return []
            return sorted(
                os.path.relpath(os.path.join(d, n), self.root).replace(os.sep, "/")
                for d, _, names in os.walk(self.root)
                for n in names
            )
        pages = self._s3().get_paginator("list_objects_v2")
        found = pages.paginate(Bucket=self.place.bucket, Prefix=f"{self.name}/")
        return sorted(o["Key"][len(self.name) + 1 :] for p in found for o in p.get("Contents", []))

    def parts(self) -> list[str]:
        """The Parquet files of the dataset directories (what the store records, and any a
        killed writer left), hidden temporary files left out."""
        return [
            r
            for r in self.listing()
            if r.startswith("dataset=")
            and r.endswith(".parquet")
            and not r.rsplit("/", 1)[-1].startswith(".")
        ]

    def states(self) -> list[str]:
        """The state slots of the derived datasets' symbols."""
        return [r for r in self.listing() if r.startswith("dataset=") and "/_state-" in r]

    def read(self, rel: str) -> bytes:
        if self.local:
            return (self.root / rel).read_bytes()
        got = self._s3().get_object(Bucket=self.place.bucket, Key=self._key(rel))
        return bytes(got["Body"].read())

    def digest(self, rel: str) -> str:
        return hashlib.sha256(self.read(rel)).hexdigest()

    def digests(self) -> dict[str, str]:
        """The content hash of every part on disk."""
        return {rel: self.digest(rel) for rel in self.parts()}

    def damage(self, rel: str, how: str, where: int) -> None:
        """Damage ``rel``: ``flip`` a byte (``flip-quiet``: its modification time kept, as
        bit rot leaves it), ``truncate`` it, ``delete`` it, ``zero`` every byte. A local
        file is damaged in place: every hard link to it (a backup's, a kept version's) is
        damaged with it, as on a real disk."""
        if how == "delete":
            if self.local:
                (self.root / rel).unlink()
            else:
                self._s3().delete_object(Bucket=self.place.bucket, Key=self._key(rel))
            return
        data = bytearray(self.read(rel))
        if not data:  # truncated to nothing by an earlier step: as damaged as it gets
            return
        if how.startswith("flip"):
            i = where % len(data)
            data[i] ^= 0xFF
        elif how == "truncate":
            data = data[: where % len(data)]
        else:
            assert how == "zero", how
            data = bytearray(len(data))
        if not self.local:
            self._s3().put_object(Bucket=self.place.bucket, Key=self._key(rel), Body=bytes(data))
            return
        path = self.root / rel
        before = path.stat()
        with open(path, "r+b") as f:  # in place: the same inode
            f.write(data)
            f.truncate(len(data))
        if how == "flip-quiet":
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def rel_of(path: str, root: str) -> str:
    """A path an error names, relative to the store's root (``root`` a directory or URL)."""
    root = root.rstrip("/")
    return path[len(root) + 1 :] if path.startswith(root + "/") else path


def dataset_of(rel: str) -> str:
    """A part's dataset directory: ``dataset=.../params=.../tf=...``."""
    return "/".join(rel.split("/")[:3])


def symbol_of(rel: str) -> str | None:
    for piece in rel.split("/"):
        if piece.startswith("sym="):
            return piece[len("sym=") :]
    return None


# -- tables compared value for value --------------------------------------------------------


def difference(a: pa.Table, b: pa.Table, loose: set[str] = frozenset()) -> str | None:  # type: ignore[assignment]
    """How ``a`` differs from ``b`` (None: equal, row for row and value for value, NaN equal
    to NaN). The float values of the symbols in ``loose`` may differ by rounding: the
    derived data of a symbol computed again from its first bar equals one continued from its
    state to rounding (docs/compute.md), not bit for bit."""
    a, b = plain(a), plain(b)
    if a.column_names != b.column_names:
        return f"columns {a.column_names} != {b.column_names}"
    if a.num_rows != b.num_rows:
        return f"{a.num_rows} rows != {b.num_rows}"
    near = np.zeros(a.num_rows, dtype=bool)
    if loose and "symbol" in a.column_names:
        near = np.isin(np.asarray(a.column("symbol").to_pylist(), dtype=object), list(loose))
    for name in a.column_names:
        x, y = a.column(name), b.column(name)
        if not pa.types.is_floating(x.type):
            if not x.equals(y):
                return f"column {name} differs"
            continue
        if not x.is_null().equals(y.is_null()):
            return f"column {name}: nulls differ"
        xs = x.fill_null(0).to_numpy(zero_copy_only=False)
        ys = y.fill_null(0).to_numpy(zero_copy_only=False)
        exact = (xs == ys) | (np.isnan(xs) & np.isnan(ys))
        close = np.isclose(xs, ys, rtol=1e-12, atol=1e-9, equal_nan=True)
        bad = ~np.where(near, close, exact)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return f"column {name} row {i}: {xs[i]!r} != {ys[i]!r} ({int(bad.sum())} values)"
    return None


# -- a child process killed mid-operation ---------------------------------------------------

CHILD = """
import json, sys, warnings
warnings.simplefilter("ignore")
from marketframe.store import Store
print("ready", flush=True)
url, base, key, options, op = json.loads(sys.stdin.readline())
with Store(url, api_key=key, base_url=base, max_workers=1, commit_every=0.01,
           **options) as st:
    if op["kind"] == "sync":
        st.sync("stock.historical.candles", op["symbols"], op["start"], timeframe=op["tf"],
                progress=False)
    else:
        st.compute("stock.historical.candles", op["specs"], max_workers=op["workers"],
                   adjust=op["adjust"])
print("done", flush=True)
"""


class Child:
    """A child Python that has imported the store and waits for one operation: started
    ahead, so that a kill lands in the operation, not in the interpreter's start-up (the
    child of an S3 store takes its credentials from the AWS variables it inherits)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            env=subprocess_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def killed_mid(
        self,
        args: tuple[str, str, str, dict[str, object], dict[str, Any]],
        listing: Callable[[], list[str]],
        delay: float,
    ) -> tuple[bool, str]:
        """Run the operation of ``args`` (url, base url, key, store options, operation) and
        ``kill -9`` the child ``delay`` seconds after it began to write (a file of the store
        appeared or went). Returns whether it was killed before it finished, and
        its stderr."""
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", line + proc.communicate(timeout=60)[1]
        before = {r for r in listing() if not r.startswith("_leases/") and r != ".lock"}
        proc.stdin.write(json.dumps(args) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            now = {r for r in listing() if not r.startswith("_leases/") and r != ".lock"}
            if now != before:
                break
            time.sleep(0.002)
        time.sleep(delay)
        proc.kill()  # SIGKILL, a no-op if it finished: no cleanup, no finally
        out, err = proc.communicate(timeout=60)
        return "done" not in out, err

    def stop(self) -> None:
        self.proc.kill()
        self.proc.communicate(timeout=60)


def copy_tree(src: Path, dst: Path) -> None:
    """``cp -al``: a copy made of hard links, as backups (rsync --link-dest) make them."""
    subprocess.run(["cp", "-al", str(src), str(dst)], check=True)
