"""The closed registry of deterministic transforms.

A transform step names one of these (`transform:`, default `identity`) and
gets its bindings (plain JSON) plus a `TransformContext` whose `now` is the
run's frozen launch time, never the wall clock. The runtime calls every
transform under a deny-all egress policy (no network, no subprocess, no
secrets file), so "no network, no credentials, no clock" is enforced, not
only documented. Hosts add transforms with `register_transform`.

Built-ins:
- `identity`: the value of the single binding.
- `template`: renders the binding `template` (a Jinja2 string) with the
  other bindings, in Jinja2's sandbox with `StrictUndefined`.
- `csv`: the binding `rows` (or the single binding), a list of objects,
  as CSV text with a header row (columns: the `columns` binding, else the
  keys in first-seen order); nested values are written as canonical JSON.
- `json`: the single binding (or all bindings as one object) as canonical
  JSON text (RFC 8785).
- `select`: the binding `path` (RFC 9535 JSONPath) applied to the binding
  `value` (or the other single binding); a list of matches.
- `html-render`: the binding `markdown` (or the single binding), CommonMark
  plus tables rendered by markdown-it-py, then sanitized by nh3 (ammonia):
  no script, style, event handler or `javascript:` URL survives, and links
  get `rel="noopener noreferrer"`. Raw HTML in the markdown is escaped
  before sanitizing, so the output only holds what markdown itself makes.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._values import canonical_json


@dataclass(frozen=True)
class TransformContext:
    step_id: str
    now: str  # the run's launch time (RFC 3339 UTC), frozen for the whole run


Transform = Callable[[Mapping[str, Any], TransformContext], Any]

_REGISTRY: dict[str, Transform] = {}


def register_transform(name: str, function: Transform, *, replace: bool = False) -> None:
    """Add a deterministic transform a plan can name. Refuses to shadow one
    silently (`replace=True` to do it on purpose)."""
    if name in _REGISTRY and not replace:
        raise ValueError(f"transform {name!r} is already registered")
    _REGISTRY[name] = function


def transform_names() -> list[str]:
    _ensure_builtins()
    return sorted(_REGISTRY)


def get_transform(name: str) -> Transform:
    # Once per step: a registered name is returned without re-adding the builtins
    # (`setdefault` would never change an existing entry anyway).
    found = _REGISTRY.get(name)
    if found is not None:
        return found
    _ensure_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise LaunchError(
            "transform.unknown",
            f"unknown transform {name!r}",
            hint="one of: " + ", ".join(sorted(_REGISTRY)),
        ) from None


def _single(bindings: Mapping[str, Any], step: str, skip: tuple[str, ...] = ()) -> Any:
    rest = [key for key in bindings if key not in skip]
    if len(rest) != 1:
        raise LaunchError(
            "transform.bindings",
            f"this transform needs exactly one data binding, got {len(rest)}: {', '.join(rest)}",
            step=step,
        )
    return bindings[rest[0]]


def _identity(bindings: Mapping[str, Any], ctx: TransformContext) -> Any:
    return _single(bindings, ctx.step_id)


def _template(bindings: Mapping[str, Any], ctx: TransformContext) -> str:
    from jinja2 import StrictUndefined, TemplateError
    from jinja2.sandbox import SandboxedEnvironment

    source = bindings.get("template")
    if not isinstance(source, str):
        raise LaunchError(
            "transform.bindings", "template needs a string binding `template`", step=ctx.step_id
        )
    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    env.filters["tojson"] = lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False)
    try:
        data = {k: v for k, v in bindings.items() if k != "template"}
        return env.from_string(source).render(**data)
    except TemplateError as exc:
        raise LaunchError("transform.template", f"template: {exc}", step=ctx.step_id) from None


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return canonical_json(value).decode("utf-8")
    return str(value)


def _csv(bindings: Mapping[str, Any], ctx: TransformContext) -> str:
    rows = bindings["rows"] if "rows" in bindings else _single(bindings, ctx.step_id, ("columns",))
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise LaunchError("transform.csv", "csv needs a list of objects", step=ctx.step_id)
    columns = bindings.get("columns")
    if not isinstance(columns, list):
        columns = list(dict.fromkeys(key for row in rows for key in row))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    return out.getvalue()


def _json(bindings: Mapping[str, Any], ctx: TransformContext) -> str:
    value = next(iter(bindings.values())) if len(bindings) == 1 else dict(bindings)
    return canonical_json(value).decode("utf-8")


def _select(bindings: Mapping[str, Any], ctx: TransformContext) -> list[Any]:
    from jsonpath_rfc9535 import JSONPathError, find

    path = bindings.get("path")
    if not isinstance(path, str):
        raise LaunchError(
            "transform.bindings", "select needs a string binding `path`", step=ctx.step_id
        )
    value = bindings["value"] if "value" in bindings else _single(bindings, ctx.step_id, ("path",))
    try:
        return list(find(path, value).values())
    except JSONPathError as exc:
        raise LaunchError(
            "transform.select", f"JSONPath {path!r}: {exc}", step=ctx.step_id
        ) from None


def _html_render(bindings: Mapping[str, Any], ctx: TransformContext) -> str:
    import nh3
    from markdown_it import MarkdownIt

    text = bindings["markdown"] if "markdown" in bindings else _single(bindings, ctx.step_id)
    if not isinstance(text, str):
        raise LaunchError(
            "transform.bindings", "html-render needs markdown text (a string)", step=ctx.step_id
        )
    # html=False: raw HTML in the markdown is escaped text, never markup; nh3
    # then removes anything unsafe markdown itself could produce (a link to
    # `javascript:` or `data:`), so the result is safe to embed in a page.
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return nh3.clean(html, link_rel="noopener noreferrer")


_BUILTINS: dict[str, Transform] = {
    "identity": _identity,
    "template": _template,
    "csv": _csv,
    "json": _json,
    "select": _select,
    "html-render": _html_render,
}


def _ensure_builtins() -> None:
    for name, function in _BUILTINS.items():
        _REGISTRY.setdefault(name, function)
