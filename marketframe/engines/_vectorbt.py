"""``to_vectorbt``: daily bars as a ``vectorbt.Data``."""

from __future__ import annotations

from typing import Any

from marketframe.engines._bars import by_symbol, calendar, daily
from marketframe.exceptions import require_extra

WHERE = "engines.to_vectorbt"


def to_vectorbt(bars: Any, *, tz: str = "Asia/Taipei") -> Any:
    """A ``vectorbt.Data`` of ``bars``: one symbol per key, columns ``Open``, ``High``,
    ``Low``, ``Close``, ``Volume`` on the union of the bars' sessions (midnight in ``tz``).
    A symbol's rows are NaN before its first bar, after its last (a delisting) and on
    sessions it did not trade (a suspension), so ``data.get("Close")`` is the wide close
    vectorbt's portfolios take; a position held through a delisting keeps its last value."""
    require_extra("vectorbt", WHERE)
    frame = daily(WHERE, bars)
    import vectorbt as vbt  # the engines extra, imported on first use

    index = calendar(frame)
    data = {
        symbol: bars_of.reindex(index).rename(columns=str.capitalize)
        for symbol, bars_of in by_symbol(frame).items()
    }
    # vectorbt 1.2's from_data does not pass the ``download_kwargs`` that Data's constructor
    # requires; giving it here is what its own download path does
    return vbt.Data.from_data(
        data,
        tz_localize=tz,
        tz_convert=tz,
        missing_index="nan",
        missing_columns="raise",
        download_kwargs={},
    )
