"""Every academy exception is a MarketframeError, and the docs say so."""

from __future__ import annotations

from pathlib import Path

import pytest

import marketframe.academy as academy
from marketframe.exceptions import MarketframeError

DOC = Path(__file__).resolve().parents[2] / "docs" / "academy.md"
CLASSES = [
    obj
    for n in academy.__all__
    if isinstance(obj := getattr(academy, n), type) and issubclass(obj, BaseException)
]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_academy_exception_is_a_marketframe_error(cls) -> None:
    assert issubclass(cls, MarketframeError)


def test_the_docs_name_the_real_base_class() -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "`AcademyError` derives from `marketframe.exceptions.MarketframeError`" in text
    assert "derives from `Exception`" not in text
