"""The state file of a derived dataset's bucket of symbols, and the digest of the rows
its members consumed.

A bucket's state has two slots, ``_state-a.bin`` and ``_state-b.bin``: a run writes the one
the log does not name, in place, and the log's save then names it. A run killed
before the save leaves the named slot as it was, so no state needs a new file, a rename or a
deletion (five of each per bucket and day, for the five indicators).

Imports run one way: the task loop (:mod:`._task`) -> this module -> :mod:`._derive`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import orjson

from marketframe.store import _io
from marketframe.store._compute._derive import digested
from marketframe.store._dataset import DatasetId

_MAGIC = b"MFSTATE1"


def state_bytes(meta: dict[str, Any], context: np.ndarray) -> bytes:
    """The state file: a magic, the JSON header's length and the header, then the context
    (the rows of :func:`._derive.block` the spec's kernels read, named by ``meta["rows"]``)
    as raw little-endian float64, zeros to whole pages (a slot is rewritten at its size).
    Written per symbol and target on every run: no pickle or zip (``np.savez`` took 1-2
    ms), the header by orjson (a fifth of ``json``'s 37 us)."""
    header = orjson.dumps(meta, option=orjson.OPT_SORT_KEYS)
    ctx = np.ascontiguousarray(context, dtype="<f8")
    size = np.array([len(header), ctx.shape[1]], dtype="<u8").tobytes()
    data = _MAGIC + size + header + ctx.tobytes()
    return data + bytes(-len(data) % 4096)


SLOTS = ("_state-a.bin", "_state-b.bin")


def state_slot(ds: DatasetId, bucket: str, named: str | None) -> str:
    """The state slot a run writes: the one the log does not name (``named``)."""
    spare = SLOTS[1] if named is not None and named.endswith("/" + SLOTS[0]) else SLOTS[0]
    return f"{_io.bucket_rel(ds, bucket)}/{spare}"


def read_state(data: bytes, use: slice) -> tuple[dict[str, Any], np.ndarray]:
    """The header and the context of :func:`state_bytes`, its rows ``use`` of
    :func:`._derive.block` (ValueError if it is not a state file, or holds other rows).
    States written before ``rows`` was recorded hold all six."""
    if data[:8] != _MAGIC or len(data) < 24:
        raise ValueError("not a derived state file")
    hlen, k = (int(v) for v in np.frombuffer(data, dtype="<u8", count=2, offset=8))
    meta = orjson.loads(data[24 : 24 + hlen])
    first, stop = meta.get("rows", (0, 6))
    if not first <= use.start < use.stop <= stop:
        raise ValueError("a derived state file of other rows")
    if len(data) < 24 + hlen + 8 * (stop - first) * k:
        raise ValueError("truncated derived state file")
    ctx = np.frombuffer(data, dtype="<f8", count=(stop - first) * k, offset=24 + hlen)
    return meta, ctx.reshape(stop - first, k)[use.start - first : use.stop - first].copy()


class RowsDigest:
    """Digests of the first ``n`` rows of one :func:`._derive.block`, of the columns that
    shape a target's outputs (the time and the spec's inputs): whether consumed rows
    changed. An appended day asks for the rows the state consumed, then for all of them:
    one SHA-256 per column (as the store's file hashes: the fastest here, see
    :func:`._io.digest`) goes on from where the last ``n`` stopped, so a column's rows are
    hashed once, not twice, whichever targets ask. The digest of ``n`` rows is the SHA-256
    of the columns' digests, tagged ``r:``.

    Two earlier forms are still made and matched, so an older store's states are
    continued, not recomputed: ``c:`` (the same, over the time and every input any
    registered indicator reads, :func:`._derive.digested`) and, before the tags, one
    SHA-256 over those columns' first ``n`` rows."""

    TAG = "r:"
    WIDE = "c:"

    def __init__(self, cols: np.ndarray):
        self.cols = cols
        self.h: dict[int, tuple[int, Any]] = {}  # row of the block -> (rows hashed, hash)

    def _column(self, j: int, n: int) -> bytes:
        done, h = self.h.get(j, (0, None))
        if h is None or n < done:  # fewer rows than hashed: start over
            done, h = 0, hashlib.sha256()
        h.update(np.ascontiguousarray(self.cols[j, done:n]).data)
        self.h[j] = (n, h)
        return bytes(h.copy().digest())

    def upto(self, n: int, rows: tuple[int, ...], like: str | None = None) -> str:
        """The digest of the first ``n`` rows of the block's ``rows`` (the time first);
        ``like``: a recorded digest, whose form is the one made (the earlier forms cover
        :func:`._derive.digested`, whatever ``rows`` says)."""
        if like is None or like.startswith(self.TAG):
            tag, cover = self.TAG, rows
        elif like.startswith(self.WIDE):
            tag, cover = self.WIDE, digested()
        else:
            h = hashlib.sha256()  # before the tags: the columns' first n rows, one hash
            for j in digested():
                h.update(np.ascontiguousarray(self.cols[j, :n]).data)
            return h.hexdigest()
        return tag + hashlib.sha256(b"".join(self._column(j, n) for j in cover)).hexdigest()
