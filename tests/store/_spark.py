"""A local Spark session for the tests, bound to 127.0.0.1, that leaves the process as it
found it: a SparkContext installs its own SIGINT handler (to cancel jobs on Ctrl-C) and keeps
it after ``stop()``; left there, it fired when the test worker was torn down and printed an
unraisable ``KeyboardInterrupt``."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def local_spark(name: str, cores: int, **conf: str) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    before = signal.getsignal(signal.SIGINT)
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(name)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "1")
        # directory keys stay strings ("sym=0050" is not the integer 50)
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        yield spark
    finally:
        spark.stop()
        signal.signal(signal.SIGINT, before)
