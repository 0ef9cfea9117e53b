"""Render the generated reference pages of ``docs/``.

* ``docs/endpoints.md`` from ENDPOINTS and the schemas;
* ``docs/errors.md`` from the exception classes (their tree, status codes, docstrings, hints);
* ``marketframe/client/_tree.pyi``, the types of the endpoint tree (:mod:`marketframe._gen.stubs`).

``python3 -m marketframe._gen`` rewrites them; a test checks the committed copies are current.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

from marketframe._gen import sessions, stubs
from marketframe.endpoints import EARLIEST, ENDPOINTS, FRESHNESS, Endpoint, Param
from marketframe.exceptions import STATUS_ERRORS, MarketframeError

# kind -> (Arrow, pandas, polars) dtype names shown in the table
DTYPES = {
    "float": ("float64", "float64", "Float64"),
    "int": ("int64", "Int64", "Int64"),
    "int_str": ("int64", "Int64", "Int64"),
    "time_us": (
        "timestamp[us, Asia/Taipei]",
        "datetime64[us, Asia/Taipei]",
        "Datetime(us, Asia/Taipei)",
    ),
    "iso_time": (
        "timestamp[us, Asia/Taipei]",
        "datetime64[us, Asia/Taipei]",
        "Datetime(us, Asia/Taipei)",
    ),
    "hhmmss": (
        "timestamp[us, Asia/Taipei]",
        "datetime64[us, Asia/Taipei]",
        "Datetime(us, Asia/Taipei)",
    ),
    "date": ("date32", "datetime64[us]", "Date"),
    "month": ("date32 (first of the month)", "datetime64[us]", "Date"),
    "date_or_time": (
        "date32 (minute: timestamp)",
        "datetime64[us] (minute: with tz)",
        "Date (minute: Datetime)",
    ),
    "str": ("string", "str", "String"),
    "cat": ("dictionary<string>", "category", "Categorical"),
    "flag": ("bool (absent = False)", "bool", "Boolean"),
    "bool": ("bool (absent = null)", "boolean", "Boolean"),
}

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "endpoints.md"
ERRORS_PATH = DOC_PATH.with_name("errors.md")

#: Modules whose exceptions the error reference lists (all subclass MarketframeError).
ERROR_MODULES = (
    "marketframe.exceptions",
    "marketframe.academy",
    "marketframe.store",
    "marketframe.crosscheck",
    "marketframe.frames",
    "marketframe.stream",
)


def _param(p: Param) -> str:
    text = f"`{p.name}`" + ("*" if p.required else "")
    if p.wire:
        text += f" (wire `{p.wire}`)"
    if p.allowed:
        text += ": " + "/".join(p.allowed)
    elif p.type != "str":
        text += f": {p.type}"
    return text


_MINUTE_RANGE = {
    "forbidden": "minute timeframes take no date range (the latest 30 days)",
    "ignored": "minute timeframes: the range is required but ignored (the latest 30 days)",
}


def _rules(ep: Endpoint) -> list[str]:
    """The row's own rules, one line each."""
    lines = []
    if ep.minute_range in _MINUTE_RANGE:
        lines.append(f"- {_MINUTE_RANGE[ep.minute_range]}")
    if ep.minute_fields is not None:
        lines.append(f"- fields with minute timeframes: {', '.join(ep.minute_fields)}")
    if ep.technical is not None:
        t = ep.technical
        lines.append(
            f"- indicator: outputs {', '.join(ep.outputs)}; defaults "
            + ", ".join(f"{k}={v}" for k, v in t.defaults.items())
            + f"; warm-up {t.warmup(t.defaults)} bars at the defaults; local kernel "
            f"`marketframe.indicators.{t.local}`"
        )
    if ep.refresh_days is not None:
        lines.append(
            f"- rows keep changing for {ep.refresh_days} days after their date "
            "(the store refetches them until then)"
        )
    return lines


def _endpoint(ep: Endpoint) -> list[str]:
    call = (
        "client."
        + ep.name
        + "("
        + ", ".join(f"{p.name}=..." for p in ep.params if p.required)
        + ")"
    )
    example = (
        "client." + ep.name + "(" + ", ".join(f"{k}={v!r}" for k, v in ep.example.items()) + ")"
    )
    lines = [
        f"### `{ep.name}`",
        "",
        f"{ep.doc}. `GET {{base_url}}{ep.path}`",
        "",
        f"- call: `{call}`",
        f"- example: `{example}`",
        f"- parameters: {', '.join(_param(p) for p in ep.params) or 'none'}",
        f"- plan: {ep.plan}; cache freshness: {ep.freshness}; response kind: {ep.kind}",
    ]
    if ep.multi_param:
        lines.append(f"- `{ep.multi_param}` may be a list (concurrent requests, one frame)")
    if ep.date_range:
        lines.append(f"- date range: `{ep.date_range[0]}`..`{ep.date_range[1]}`, under one year")
    lines += _rules(ep)
    if ep.keys:
        lines.append(f"- key columns: {', '.join(ep.keys)}")
    lines += ["", "| column | Arrow | pandas | polars | unit | from |", "|---|---|---|---|---|---|"]
    for c in ep.schema.columns:
        t = " | ".join(DTYPES[c.kind])
        unit = c.unit or ""
        if unit == "lots":
            unit = "lots (shares: odd-lot, emerging board; TWD: indices)"
        where = ("envelope " if c.envelope and ep.schema.rows else "") + f"`{c.wire_name}`"
        lines.append(f"| `{c.name}` | {t} | {unit} | {where} |")
    return [*lines, ""]


def render() -> str:
    out = [
        "# Endpoint reference",
        "",
        "Generated by `python3 -m marketframe._gen` from `marketframe/endpoints/` and",
        "`marketframe/schemas/`; do not edit by hand. `*` marks required parameters.",
        "",
        f"{len(ENDPOINTS)} endpoints. Earliest data: stocks {EARLIEST['stock']}, indices "
        f"{EARLIEST['index']}. Cache freshness classes: "
        + ", ".join(
            f"{k} ({v} s)" if v else f"{k} (see docs/loaders.md)" for k, v in FRESHNESS.items()
        )
        + ".",
        "",
        "| endpoint | path | plan |",
        "|---|---|---|",
        *[f"| `{e.name}` | `{e.path}` | {e.plan} |" for e in ENDPOINTS.values()],
        "",
    ]
    for ep in ENDPOINTS.values():
        out += _endpoint(ep)
    return "\n".join(out)


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "").split("\n\n")[0]
    return " ".join(text.split())


def render_errors() -> str:
    for name in ERROR_MODULES:
        importlib.import_module(name)
    status_of = {cls: code for code, cls in STATUS_ERRORS.items()}
    out = [
        "# Error reference",
        "",
        "Generated by `python3 -m marketframe._gen` from the exception classes; do not edit",
        "by hand. Every error subclasses `marketframe.MarketframeError`, so one `except` clause",
        "catches them all; builtin mixins (`ValueError` for bad input, `TypeError`,",
        "`TimeoutError`) keep `except ValueError` code working. Messages end with what to do next",
        "(the class's `hint`, as `next_step()`) and never contain the API key or tokens.",
        "`ServiceError` has two children: `APIError`, the service answered with an error status,",
        "chosen from the HTTP status by table (`STATUS_ERRORS`; other 4xx -> `BadRequest`, 5xx ->",
        "`ServerError`, after retries), and `TransportError`, it did not answer at all. Invalid",
        "parameters raise `InvalidParams` before any request is sent; a missing API key raises",
        "`ConfigurationError` (nothing is sent).",
    ]
    table = ["| exception | base | HTTP | meaning | what to do |", "|---|---|---|---|---|"]

    tree = ["MarketframeError"]

    def walk(cls: type, depth: int) -> None:
        subs: list[type] = sorted(cls.__subclasses__(), key=lambda c: c.__name__)
        for sub in subs:
            if not sub.__module__.startswith("marketframe"):
                continue
            mixins = [b.__name__ for b in sub.__bases__[1:] if b.__module__ == "builtins"]
            tree.append(
                "    " * depth + sub.__name__ + (f" (also {', '.join(mixins)})" if mixins else "")
            )
            status = status_of.get(sub)
            code = str(status) if status else ("5xx" if sub.__name__ == "ServerError" else "")
            hint = sub.__dict__.get("hint", "") or ""
            meaning = _first_paragraph(sub.__dict__.get("__doc__"))
            where = sub.__module__  # every class is defined in and imported from the tree
            table.append(
                f"| {'&nbsp;' * 4 * depth}`{where}.{sub.__name__}` | "
                f"`{cls.__name__}` | {code} | {meaning} | "
                f"{hint} |"
            )
            walk(sub, depth + 1)

    table.append(
        f"| `marketframe.exceptions.MarketframeError` | `Exception` | | "
        f"{_first_paragraph(MarketframeError.__doc__)} | |"
    )
    walk(MarketframeError, 1)
    drawing = [
        "The tree (a class with two marketframe parents is drawn under each):",
        "",
        "```text",
        *tree,
        "```",
    ]
    return "\n".join([*out, "", *drawing, "", *table, ""])


def main() -> int:
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(render(), encoding="utf-8")
    ERRORS_PATH.write_text(render_errors(), encoding="utf-8")
    print(f"wrote {DOC_PATH}, {ERRORS_PATH}, {stubs.write()} and {sessions.write()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
