"""Rolling, crash-safe Parquet files of streamed batches.

Each channel (and odd-lot flag) gets its own directory, ``<dir>/<channel>/`` (``<channel>_oddlot``
for odd-lot subscriptions; ``futopt_<channel>`` and ``futopt_<channel>_afterhours`` for
futures/options). Rows go to ``part-<UTC time>-<n>.parquet.tmp``; when the file has
``rows_per_file`` rows, is ``seconds_per_file`` old, or its schema would change (an unknown new
field), it is closed and renamed to ``.parquet`` (an atomic rename on one filesystem). A crash
therefore leaves only complete ``.parquet`` files plus at most one ``.tmp`` per channel, which
readers ignore (``read_recorded`` reads ``*.parquet`` only) and a later run may delete.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from marketframe.convert import by_time
from marketframe.exceptions import InvalidParams

from ._frames import Batch, to_table


@dataclass
class _Open:
    writer: pq.ParquetWriter
    tmp: Path
    schema: pa.Schema
    opened: float
    rows: int = 0


@dataclass
class Recorder:
    """Writes :class:`Batch` es to rolling Parquet files (see the module docstring)."""

    directory: str | Path
    rows_per_file: int = 100_000
    seconds_per_file: float | None = None
    files: list[Path] = field(default_factory=list)  # completed files, in order
    _open: dict[str, _Open] = field(default_factory=dict)
    _seq: int = 0

    def __post_init__(self) -> None:
        self.directory = Path(self.directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.rows_per_file < 1:
            raise InvalidParams(
                "Recorder", "rows_per_file", f"is {self.rows_per_file}", "an int of at least 1"
            )

    def write(self, batch: Batch) -> None:
        name = _folder(batch.channel, batch.odd_lot, batch.market, batch.after_hours)
        table = batch.table
        cur = self._open.get(name)
        if cur is not None and not _same(cur.schema, table.schema):
            self._finish(name)
            cur = None
        start = 0
        while start < table.num_rows:
            if cur is None:
                cur = self._start(name, table.schema)
            take = min(table.num_rows - start, self.rows_per_file - cur.rows)
            cur.writer.write_table(table.slice(start, take))
            cur.rows += take
            start += take
            if cur.rows >= self.rows_per_file or (
                self.seconds_per_file is not None
                and time.monotonic() - cur.opened >= self.seconds_per_file
            ):
                self._finish(name)
                cur = None

    def close(self) -> None:
        """Close and publish every open file."""
        for name in list(self._open):
            self._finish(name)

    def _start(self, name: str, schema: pa.Schema) -> _Open:
        folder = Path(self.directory) / name
        folder.mkdir(parents=True, exist_ok=True)
        self._seq += 1
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        tmp = folder / f"part-{stamp}-{self._seq:06d}.parquet.tmp"
        cur = _Open(pq.ParquetWriter(tmp, schema), tmp, schema, time.monotonic())
        self._open[name] = cur
        return cur

    def _finish(self, name: str) -> None:
        cur = self._open.pop(name)
        cur.writer.close()
        final = cur.tmp.with_suffix("")  # drop ".tmp"
        os.replace(cur.tmp, final)
        self.files.append(final)


def _same(a: pa.Schema, b: pa.Schema) -> bool:
    return a.equals(b, check_metadata=False)


def _folder(channel: str, odd_lot: bool, market: str, after_hours: bool) -> str:
    if market == "futopt":
        return f"futopt_{channel}" + ("_afterhours" if after_hours else "")
    return channel + ("_oddlot" if odd_lot else "")


def read_recorded(
    directory: str | Path,
    channel: str,
    odd_lot: bool = False,
    *,
    market: str = "stock",
    after_hours: bool = False,
) -> pa.Table:
    """Every complete file recorded for ``channel`` as one table (``.tmp`` files ignored);
    ``market="futopt"`` (and ``after_hours``) for a futures/options stream's files."""
    folder = Path(directory) / _folder(channel, odd_lot, market, after_hours)
    files = sorted(folder.glob("*.parquet"))
    if not files:
        return to_table(channel, [], market=market)
    tables = [pq.read_table(f) for f in files]
    table = pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
    return by_time(table)  # oldest first, like every other frame (docs/migration.md)
