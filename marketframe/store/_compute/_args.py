"""What :meth:`Store.compute` and :meth:`Store.read_derived` are given, checked before any
work: the indicator specs, the source dataset, the executor; and how a derived dataset is
named to a user. Imports nothing of the driver (:mod:`._compute`), which imports this."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from marketframe.indicators import stateful as sf
from marketframe.store._dataset import DatasetId


def specs_of(spec: Any) -> list[sf.IndicatorSpec]:
    """The specs of ``spec`` (one, a name, or a sequence of them), each named once."""
    from marketframe.exceptions import InvalidParams

    if isinstance(spec, sf.IndicatorSpec | str):
        items = [spec]
    elif isinstance(spec, Iterable) and not isinstance(spec, bytes | Mapping):
        items = list(spec)
    else:  # a number, None: the indicator's name says which (a sequence: several)
        items = [spec]
    if not items:
        raise InvalidParams("Store.compute", "spec", "is empty", "one or more indicator specs")
    out = [s if isinstance(s, sf.IndicatorSpec) else sf.spec(s) for s in items]
    if len({(s.indicator, s.params, s.convention) for s in out}) != len(out):
        raise InvalidParams("Store.compute", "spec", "names one spec twice")
    return out


def source_of(dataset: str, timeframe: str | None, params: dict[str, Any]) -> Any:
    """The stored dataset indicators are computed over: per-symbol bars with a close."""
    from marketframe.exceptions import InvalidParams
    from marketframe.store._dataset import resolve

    src = resolve(dataset, timeframe, params)
    if not src.has_symbol or "close" not in src.ep.schema.arrow().names:
        raise InvalidParams(
            "Store.compute",
            "dataset",
            f"{dataset!r} has no per-symbol bars (date, open, high, low, close)",
            "a candles dataset, e.g. stock.historical.candles",
        )
    return src


def check_workers(executor: Any, max_workers: Any) -> None:
    """``executor`` and ``max_workers`` of :meth:`Store.compute`, before the store is locked
    and read (an executor given by name failed only then, on its first task)."""
    from marketframe._checks import check_int
    from marketframe.exceptions import InvalidParams

    if max_workers is not None:
        where, allowed = "Store.compute", "1 (in this process), 2, ..., or None (one per core)"
        check_int("max_workers", max_workers, 1, where, allowed)
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise InvalidParams(
            "Store.compute",
            "executor",
            f"must be a concurrent.futures.Executor, got {executor!r}",
            "None (a process pool of max_workers), a ProcessPoolExecutor, dask.distributed's "
            "client.get_executor(), Ray's RayExecutor()",
        )


def label(sp: sf.IndicatorSpec, adjust: str | None) -> str:
    """``rsi(14)``; the convention when it is not the one a spec gets by default, and the
    adjustment if any: a derived dataset as a user names it."""
    text = f"{sp.indicator}({', '.join(str(p) for p in sp.params)})"
    if sp.convention != sf.spec(sp.indicator, *sp.params).convention:
        text += f" [{sp.convention!r}]"
    return text + (f" adjust={adjust!r}" if adjust else "")


def computed(entries: list[tuple[DatasetId, dict[str, Any]]], source: DatasetId) -> list[str]:
    """The derived datasets computed over ``source``, of the log's ``entries``
    (:meth:`View.datasets`), by :func:`label`."""
    names = []
    for ds, entry in entries:
        values = entry.get("values", {})
        if ds.endpoint.startswith("derived.") and values.get("source") == source.key:
            names.append(label(sf.IndicatorSpec.from_json(values["spec"]), values.get("adjust")))
    return sorted(names)
