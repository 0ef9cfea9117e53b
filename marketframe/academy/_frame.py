"""Turn an API list response into a pandas or polars DataFrame."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

from marketframe.exceptions import AcademyError

__all__ = ["Backend", "records_of", "to_frame"]

Backend = Literal["pandas", "polars"]

# common envelopes: {"data": [...]}, {"items": [...]}, {"results": [...]}
_ENVELOPES = ("data", "items", "results")


def records_of(body: Any) -> list[dict[str, Any]]:
    """The list of records in a list response (bare list or a one-list envelope)."""
    if isinstance(body, dict):
        for key in _ENVELOPES:
            if isinstance(body.get(key), list):
                body = body[key]
                break
    if not isinstance(body, list):
        raise AcademyError(
            "the response is not a list of records",
            hint="use get() for single objects; frame() is for list endpoints",
        )
    if not all(isinstance(r, dict) for r in body):
        raise AcademyError(
            "the list holds values that are not JSON objects",
            hint="use get() and build the frame yourself",
        )
    return body


def to_frame(body: Any, backend: Backend = "pandas") -> Any:
    records = records_of(body)
    if backend == "pandas":
        return pd.DataFrame.from_records(records)
    if backend == "polars":
        try:
            import polars as pl  # an optional extra: loaded when asked for
        except ImportError:  # pragma: no cover - depends on the environment
            raise AcademyError(
                "polars is not installed",
                hint="pip install 'marketframe[polars]' or use backend='pandas'",
            ) from None
        return pl.DataFrame(records) if records else pl.DataFrame()
    raise AcademyError(f"unknown backend {backend!r}", hint="use 'pandas' or 'polars'")
