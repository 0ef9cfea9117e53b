"""The store's state as a log of commits: :class:`Log` (what a writer changes, committed as
one entry; see :mod:`._log`), read by :class:`Reader`; :class:`View`, the state at one
generation as everything asks it; the state document and its change sets
(:mod:`._document`), the log's files (:mod:`._entries`) and stores written by earlier
versions (:mod:`._legacy`)."""

from marketframe.store._log._log import Log
from marketframe.store._log._reader import CHECKPOINT_EVERY, Reader
from marketframe.store._log._view import View

__all__ = ["CHECKPOINT_EVERY", "Log", "Reader", "View"]
