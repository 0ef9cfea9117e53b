"""The log's files: one entry per commit, a checkpoint now and then, and their encoding.

``_log/<generation>.json`` is the entry of one commit (20 digits, so names sort by
generation); ``_log/<generation>.checkpoint.json`` the whole state after that generation;
``_log/_last_checkpoint.json`` a hint naming the newest checkpoint (readers that find it stale
or missing look further). Each file is written once, created only if absent, and never
changed; it ends with the SHA-256 of its body, so a damaged file is told from a whole one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

FORMAT = "marketframe.store.log"
FOLDER = "_log"
HINT = f"{FOLDER}/_last_checkpoint.json"
_NAME = re.compile(r"^(\d{20})(\.checkpoint)?\.json$")


class _Damaged(ValueError):
    """A log file that cannot be read as one (its reason is the message)."""


def entry_name(generation: int) -> str:
    return f"{FOLDER}/{generation:020d}.json"


def checkpoint_name(generation: int) -> str:
    return f"{FOLDER}/{generation:020d}.checkpoint.json"


def parse_name(name: str) -> tuple[int, bool] | None:
    """The generation a log file's name holds and whether it is a checkpoint, or None."""
    m = _NAME.match(name.rsplit("/", 1)[-1])
    return None if m is None else (int(m[1]), m[2] is not None)


def encode(body: dict[str, Any]) -> bytes:
    """A log file: the body's JSON on one line, then its SHA-256 on the next."""
    raw = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    return raw + b"\n" + orjson.dumps({"sha256": hashlib.sha256(raw).hexdigest()}) + b"\n"


def decode(data: bytes, kind: str) -> dict[str, Any]:
    """The body of a log file of ``kind`` (``entry`` or ``checkpoint``); :class:`_Damaged`
    when the bytes are not one whole such file."""
    raw, sep, tail = data.rstrip(b"\n").rpartition(b"\n")
    try:
        want = orjson.loads(tail).get("sha256") if sep else None
    except (orjson.JSONDecodeError, AttributeError):
        want = None
    if want is None:
        raise _Damaged("is damaged (its checksum line is missing)")
    if hashlib.sha256(raw).hexdigest() != want:
        raise _Damaged("is damaged (its content does not match its checksum)")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _Damaged(f"is damaged ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT or body.get("kind") != kind:
        raise _Damaged(f"is not a marketframe store log {kind}")
    return body
