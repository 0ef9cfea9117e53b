"""One error tree: every error is a MarketframeError, drawn in one place, in one hint style."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import marketframe
from marketframe import exceptions
from marketframe.exceptions import (
    APIError,
    ConfigurationError,
    InvalidParams,
    InvalidParamType,
    MarketframeError,
    MarketframeWarning,
    ServiceError,
    TransportError,
)

PACKAGE = Path(marketframe.__file__).parent
#: The sandbox is an independent oracle: it imports nothing from the package, errors included.
ORACLE = "marketframe.sandbox"
#: Builtin errors a module may raise because the same module catches them at once and raises a
#: typed error instead: (file, function) -> where that happens.
CAUGHT_AT_ONCE = {
    ("convert/_columns.py", "_hhmmss"): "the column reader turns it into SchemaError",
    ("academy/_tokens.py", "from_dict"): "TokenStore.load turns it into TokenStoreError",
    ("academy/_tokens.py", "_number"): "TokenStore.load turns it into TokenStoreError",
    (
        "store/_compute/_statefile.py",
        "read_state",
    ): "a compute task reads a bad state file as none: the symbol is computed again",
}
BUILTINS = {
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "RuntimeError",
    "Exception",
    "LookupError",
    "ArithmeticError",
    "OSError",
}


def package_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages([str(PACKAGE)], "marketframe.")]
    return [n for n in names if not n.startswith(ORACLE) and not n.endswith(".__main__")]


def error_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in package_modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            # private control-flow signals (``_Dropped``) are caught inside and never surface
            if (
                issubclass(obj, BaseException)
                and obj.__module__.startswith("marketframe.")
                and not obj.__module__.startswith(ORACLE)
                and not obj.__name__.startswith("_")
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(found.values())


def test_every_exception_class_of_the_package_is_a_marketframe_error() -> None:
    classes = error_classes()
    assert len(classes) > 40  # the walk found the academy, store, stream and frames errors
    strays = [
        f"{c.__module__}.{c.__name__}"
        for c in classes
        if not issubclass(c, MarketframeWarning if issubclass(c, Warning) else MarketframeError)
    ]
    assert strays == []


def test_the_docstring_drawing_names_every_error_class() -> None:
    """The tree in exceptions.py's docstring cannot silently fall behind the classes."""
    drawing = exceptions.__doc__ or ""
    missing = sorted({c.__name__ for c in error_classes()} - set(re.findall(r"\w+", drawing)))
    assert missing == []


def raises_of_builtins() -> set[tuple[str, str, str]]:
    """``(file, function, error)`` of every ``raise <builtin error>(...)`` in the package."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("sandbox/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                    if isinstance(target, ast.Name) and target.id in BUILTINS:
                        found.add((rel, func.name, target.id))
    return found


def test_no_bare_builtin_error_is_raised_outside_the_places_that_catch_it() -> None:
    bare = {(f, fn) for f, fn, _ in raises_of_builtins()}
    assert bare - set(CAUGHT_AT_ONCE) == set()
    assert set(CAUGHT_AT_ONCE) - bare == set(), "an allowed place no longer raises: drop it"


def test_bad_input_stays_catchable_as_the_builtin_it_was() -> None:
    """Existing ``except ValueError`` / ``except TypeError`` user code keeps working."""
    from marketframe import frames
    from marketframe.convert import to_frame, units

    with pytest.raises(ValueError, match="pandas, polars, arrow"):
        to_frame(None, "spark")  # type: ignore[arg-type]
    with pytest.raises(TypeError) as info:
        units(42)
    assert isinstance(info.value, InvalidParamType) and "pyarrow.Table" in str(info.value)
    with pytest.raises(InvalidParamType, match="expected a pandas DataFrame"):
        frames.sma([1.0, 2.0])  # type: ignore[type-var]
    assert issubclass(InvalidParams, ValueError) and issubclass(InvalidParamType, TypeError)


def test_no_answer_and_an_error_status_are_siblings() -> None:
    assert issubclass(APIError, ServiceError) and issubclass(TransportError, ServiceError)
    assert not issubclass(TransportError, APIError)
    assert not issubclass(ConfigurationError, ServiceError)


def test_one_hint_style_academy_ends_its_message_with_the_next_step() -> None:
    from marketframe.academy import NotLoggedIn, TokenStoreError

    err = NotLoggedIn("no tokens are stored for https://x.example")
    assert str(err) == (
        "no tokens are stored for https://x.example. Log in first: "
        "`marketframe academy login` or `marketframe.academy.login(url)`."
    )
    assert str(err).endswith(err.next_step())
    custom = TokenStoreError("cannot write the file.", hint="free some disk space")
    assert str(custom) == "cannot write the file. Free some disk space."
    assert " -- " not in str(custom)


def test_a_missing_key_is_a_configuration_error_saying_both_ways_forward() -> None:
    err = ConfigurationError("no API key given")
    assert "MARKETFRAME_API_KEY" in str(err) and "Client.sandbox()" in str(err)
    assert err.next_step() and str(err).endswith(err.next_step())
