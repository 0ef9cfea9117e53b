"""Where a store's files live: a local directory (:mod:`._local`), or an object store reached
through fsspec (:mod:`._object`); :func:`storage_for` picks one from ``Store(path)``.

Every path the store uses is relative to its root (``dataset=.../sym=2330/part-0.parquet``).
Both storages answer the same calls (read, stage, publish, unchanged, delete...); an object
store adds the conditional writes and listings its leases and manifest need.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from marketframe.store._storage._local import LocalStorage
from marketframe.store._storage._object import ObjectStorage


def storage_for(
    path: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None,
    local_root: Callable[[Any], Path],
    timeout: float | None = None,
) -> LocalStorage | ObjectStorage:
    """The storage of ``Store(path)``: a URL with a scheme (other than ``file``) is an object
    store; anything else is a local directory."""
    if isinstance(path, str) and "://" in path and not path.startswith("file://"):
        return ObjectStorage(path, storage_options, timeout)
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://") :]
    return LocalStorage(local_root(path))
