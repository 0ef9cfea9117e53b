"""Classes hold their parts: no method reads an attribute of ``self`` that its class does not
define, and no class leaves a method for a subclass to fill.

A class defines a name by a statement in its body (a method, a property, a value), by an
assignment to ``self.<name>`` in one of its methods, or through a base that defines it so. A
bare annotation (``rest: Any``) defines nothing: it is the promise of a mixin that the class
mixing it in sets the name (except in the classes whose annotations are their fields:
dataclasses, named tuples, typed dicts, protocols). A base outside the package defines what
its class holds and what its own methods assign to ``self``. A class split across files by
inheritance, whose pieces read what only the class that mixes them sets, fails here; what
reads an attribute holds it, or holds an object that does (docs/contributing.md).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import textwrap
import typing
from collections.abc import Iterator, Mapping
from functools import cache

from .test_imports import MODULES

Nodes = Mapping[type, tuple[str, ast.ClassDef]]

#: classes whose reads are not checked, with the reason
UNCHECKED = {
    # frames/ is outside this change: the pandas and polars accessors it is a base of set the
    # frame (``_df`` or ``_lf``), which its ``plot`` picks with hasattr
    "marketframe.frames._methods.IndicatorMethods": "a mixin of the df.md accessors",
}

#: classes whose methods that raise NotImplementedError are an interface, with the reason
INTERFACES = {
    "marketframe.indicators.stateful._machines.Machine": "one step, a machine per indicator",
    "marketframe.frames._methods.IndicatorMethods": "its _apply, the pandas or polars one",
}


def _classes(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.ClassDef]]:
    """The classes of a module by qualified name, nested ones too (not those in functions)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _classes(node, name + ".")


def nodes_of(namespace: object, source: str, module: str) -> dict[type, tuple[str, ast.ClassDef]]:
    """The classes of ``source`` found in ``namespace`` (a module, or what it ran in): each
    with the name it is checked under (``module.Qualname``) and its node."""
    found = {}
    for qualname, node in _classes(ast.parse(source)):
        obj: object = namespace
        for part in qualname.split("."):
            obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if isinstance(obj, type) and obj.__qualname__ == qualname:
            found[obj] = (f"{module}.{qualname}", node)
    return found


@cache
def package_classes() -> dict[type, tuple[str, ast.ClassDef]]:
    """Every class of the package that can be reached by its qualified name in its module."""
    found: dict[type, tuple[str, ast.ClassDef]] = {}
    for module, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        for cls, named in nodes_of(importlib.import_module(module), source, module).items():
            found.setdefault(cls, named)  # re-exported: its own module's
    return found


def _methods(cls: ast.ClassDef) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _self_attributes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Attribute]:
    """``self.<name>`` in a method (its nested functions and lambdas too: the same ``self``;
    not a nested class, whose ``self`` is another), for a method that takes ``self``."""
    args = fn.args.posonlyargs + fn.args.args
    if not args or args[0].arg != "self":
        return
    todo: list[ast.AST] = [*fn.body]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ClassDef):
            continue
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _assigned(node: ast.ClassDef) -> set[str]:
    return {
        a.attr
        for fn in _methods(node)
        for a in _self_attributes(fn)
        if isinstance(a.ctx, ast.Store)
    }


def _fields_are_annotations(cls: type) -> bool:
    return (
        dataclasses.is_dataclass(cls)
        or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
        or typing.is_typeddict(cls)
        or bool(getattr(cls, "_is_protocol", False))
    )


def _outside(cls: type) -> ast.ClassDef | None:
    """The node of a class from outside the package, when its source can be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # built in, or no source
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.ClassDef) else None


def _defined_here(cls: type, nodes: Nodes) -> set[str]:
    """The names ``cls`` itself defines (see the module docstring)."""
    names = set(vars(cls))
    if cls not in nodes:
        node = _outside(cls)
        return names | (_assigned(node) if node is not None else set())
    node = nodes[cls][1]
    annotated = [n for n in node.body if isinstance(n, ast.AnnAssign)]
    fields = {n.target.id for n in annotated if isinstance(n.target, ast.Name)}
    bare = {n.target.id for n in annotated if isinstance(n.target, ast.Name) and n.value is None}
    names = names | fields if _fields_are_annotations(cls) else names - bare
    return names | _assigned(node)


def undefined_reads(cls: type, nodes: Nodes) -> list[str]:
    """``module.Class.method reads self.name`` for each name that a method of ``cls`` (its
    own, not its bases') reads and neither ``cls`` nor a base defines."""
    name, node = nodes[cls]
    have = set().union(*(_defined_here(c, nodes) for c in cls.__mro__))
    return sorted(
        {
            f"{name}.{fn.name} reads self.{attr.attr}"
            for fn in _methods(node)
            for attr in _self_attributes(fn)
            if isinstance(attr.ctx, ast.Load) and attr.attr not in have
        }
    )


def hooks(cls: type, nodes: Nodes) -> list[str]:
    """``module.Class.method`` for each method of ``cls`` whose body only raises
    ``NotImplementedError``: a piece left for a subclass to fill."""
    name, node = nodes[cls]
    out = []
    for fn in _methods(node):
        body = [
            s
            for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        raised = body[0].exc if len(body) == 1 and isinstance(body[0], ast.Raise) else None
        if isinstance(raised, ast.Call):
            raised = raised.func
        if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
            out.append(f"{name}.{fn.name}")
    return out


def test_no_class_reads_an_attribute_it_does_not_define() -> None:
    nodes = package_classes()
    assert len(nodes) > 200  # the walk reached the package's classes
    found = [
        line
        for cls, (name, _) in nodes.items()
        if name not in UNCHECKED
        for line in undefined_reads(cls, nodes)
    ]
    assert found == []


def test_no_class_leaves_a_method_for_a_subclass_to_fill() -> None:
    nodes = package_classes()
    found = [
        line
        for cls, (name, _) in nodes.items()
        if name not in INTERFACES
        for line in hooks(cls, nodes)
    ]
    assert found == []


EXAMPLE = """
import argparse
from dataclasses import dataclass, field


class Reading:  # a mixin: reads what only the class mixing it in sets
    url: str

    def read(self):
        return self.url + self._hook()

    def _hook(self):
        raise NotImplementedError


class Stream(Reading):
    def __init__(self, url):
        self.url = url

    def _hook(self):
        return "!"


class Part:  # a part: holds what it reads
    def __init__(self, url):
        self.url = url

    def read(self):
        return self.url


class Whole:
    def __init__(self, url):
        self.part = Part(url)

    def read(self):
        return self.part.read() + self.missing


@dataclass
class Report:
    failures: list = field(default_factory=list)

    def ok(self):
        return not self.failures


class Parser(argparse.ArgumentParser):  # argparse's __init__ sets prog
    def name(self):
        return self.prog
"""


def test_the_checks_see_a_mixin_and_pass_parts() -> None:
    namespace: dict[str, object] = {}
    exec(compile(EXAMPLE, "example", "exec"), namespace)
    nodes = nodes_of(namespace, EXAMPLE, "example")
    reads = {c.__name__: undefined_reads(c, nodes) for c in nodes}
    assert reads == {
        "Reading": ["example.Reading.read reads self.url"],
        "Stream": [],
        "Part": [],
        "Whole": ["example.Whole.read reads self.missing"],
        "Report": [],
        "Parser": [],
    }
    assert [h for c in nodes for h in hooks(c, nodes)] == ["example.Reading._hook"]
