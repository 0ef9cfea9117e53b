"""Derived datasets computed by Spark: the symbol list mapped with ``mapInArrow``.

The driver plans one task per bucket of symbols exactly as :meth:`Store.compute` does (from the
log), ships the tasks as rows of a DataFrame split into ``partitions`` slices (no
shuffle: ``parallelize`` then ``mapInArrow``), each executor runs the same
:func:`marketframe.store._compute.run_task` against the store on S3 or a shared path, and
the driver records what the tasks wrote in the log. Executors need marketframe
installed (and the store's credentials in their environment for S3).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from marketframe.store._compute import ComputeReport, Result, Task, compute, run_task
from marketframe.store._parts import Parts


def _run_batches(batches: Iterable[Any]) -> Iterator[Any]:
    """The function ``mapInArrow`` runs on executors: task rows in, result rows out."""
    import pyarrow as pa

    for batch in batches:
        out_sym, out_res = [], []
        for sym, blob in zip(
            batch.column("symbol").to_pylist(), batch.column("task").to_pylist(), strict=True
        ):
            res = run_task(pickle.loads(blob))
            out_sym.append(sym)
            out_res.append(pickle.dumps(res))
        yield pa.RecordBatch.from_arrays(
            [pa.array(out_sym, pa.string()), pa.array(out_res, pa.binary())],
            names=["symbol", "result"],
        )


def runner(spark: Any, partitions: int | None = None) -> Any:
    def run(tasks: list[Task]) -> Iterator[Result]:
        if not tasks:
            return
        rows = [(t.bucket, pickle.dumps(t)) for t in tasks]
        n = partitions or spark.sparkContext.defaultParallelism
        df = spark.sparkContext.parallelize(rows, max(1, min(n, len(rows)))).toDF(
            "symbol string, task binary"
        )
        for row in df.mapInArrow(_run_batches, "symbol string, result binary").toLocalIterator():
            yield pickle.loads(row["result"])

    return run


def spark_compute(
    spark: Any,
    parts: Parts,
    dataset: str,
    spec: Any,
    symbols: str | Sequence[str] | None = None,
    timeframe: str | None = None,
    *,
    adjust: str | None = None,
    partitions: int | None = None,
    **params: Any,
) -> ComputeReport:
    """``Store.compute`` with Spark as the engine (``store``: a ``Store``): one task per
    symbol, run by ``mapInArrow`` over ``partitions`` slices of the symbol list (default:
    the session's parallelism). The derived datasets equal those of ``Store.compute``."""
    return compute(
        parts,
        dataset,
        spec,
        symbols,
        timeframe,
        None,
        None,
        adjust,
        params,
        runner(spark, partitions),
    )
