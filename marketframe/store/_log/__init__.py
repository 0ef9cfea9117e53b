"""The store's manifest: which date intervals it holds per dataset and symbol, and each
file's record (:mod:`._manifest`); the document's types (:mod:`._document`)."""

from marketframe.store._dataset import NO_SYMBOL, DatasetId
from marketframe.store._log._manifest import Manifest

__all__ = ["NO_SYMBOL", "DatasetId", "Manifest"]
