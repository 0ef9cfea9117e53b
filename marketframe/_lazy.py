"""Run a callback when a module is imported, without importing it ourselves.

``when_imported("polars", register)`` calls ``register()`` at once if polars is already
imported, else right after the user's own ``import polars`` has executed polars. This is what
keeps ``import marketframe`` free of polars while ``df.md`` still works on polars frames.

(``wrapt.register_post_import_hook`` does the same, but importing ``wrapt`` pulls in
``asyncio``, ``ssl`` and ``email``: about a third of the import-time budget of
``import marketframe``. The hook below is the same mechanism in a few lines: a one-shot
meta-path finder that wraps the module's real loader.)
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType

_lock = threading.Lock()


class _Loader(importlib.abc.Loader):
    """The module's own loader, then the callback; the module keeps its own loader."""

    def __init__(self, loader: importlib.abc.Loader, finder: _Finder) -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # the module sees its real loader (resources, reload), as if we had never been here
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._finder.done()


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: asks the other finders, and wraps the loader they return. It
    stays until the module is executed: a lookup alone (``importlib.util.find_spec``, as a
    check that an optional package is installed makes) loads nothing, and the import that
    follows must still be seen."""

    def __init__(self, name: str, callback: Callable[[], object]) -> None:
        self.name = name
        self.callback = callback
        self._asking = threading.local()  # this thread is asking the other finders

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name or getattr(self._asking, "now", False):
            return None
        self._asking.now = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._asking.now = False
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader, self)
        return spec

    def done(self) -> None:
        """The module ran: the callback, once (another thread's import may have run it)."""
        with _lock:
            if self not in sys.meta_path:
                return
            sys.meta_path.remove(self)
        self.callback()


def when_imported(name: str, callback: Callable[[], object]) -> None:
    """Call ``callback()`` once ``name`` (a top-level module) is imported: now if it is."""
    if name in sys.modules:
        callback()
        return
    with _lock:
        sys.meta_path.insert(0, _Finder(name, callback))
