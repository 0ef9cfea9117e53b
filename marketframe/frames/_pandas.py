"""The ``df.md`` accessor on pandas DataFrames: a thin adapter over ``_core``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import _core
from ._methods import IndicatorMethods

DEFAULTS = ("symbol", "date")


def apply(
    df: pd.DataFrame, request: _core.Request, symbol: str | None, date: str | None
) -> pd.DataFrame:
    """``df`` with the request's output columns appended (rows untouched, in their order)."""
    sym, dt = _core.check_columns(request, list(df.columns), symbol, date, DEFAULTS)
    arrays = [df[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in request.inputs]
    order = new_group = None
    if sym is not None or dt is not None:
        keys = []
        if dt is not None:
            keys.append(df[dt].rank(method="first").to_numpy())
        codes = None
        if sym is not None:
            codes, _ = pd.factorize(df[sym], use_na_sentinel=False)
            keys.append(codes)
        order = np.lexsort(keys)  # last key is primary: symbol, then date, then row
        if codes is not None:
            c = codes[order]
            new_group = np.empty(len(c), dtype=bool)
            new_group[:1] = True
            np.not_equal(c[1:], c[:-1], out=new_group[1:])
    outs = _core.compute(request, arrays, order, new_group)
    return df.assign(**dict(zip(request.outputs, outs, strict=True)))


@pd.api.extensions.register_dataframe_accessor("md")
class PandasIndicators(IndicatorMethods[pd.DataFrame]):
    """``df.md.sma(20)``, ``.rsi(14)``, ``.kdj()``, ``.macd()``, ``.bbands()`` on pandas."""

    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> Any:
        return apply(self._df, request, symbol, date)
