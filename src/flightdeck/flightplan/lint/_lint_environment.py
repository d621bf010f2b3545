"""Lint of the environment: catalog tools, tool steps' programs and
contracts, and transform names (seed 003, "The execution environment")."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

from flightdeck.documents import Diagnostic, Severity, pointer_join
from flightdeck.flightplan.model._catalog import (
    CatalogTool,
    builtin_transforms,
    catalog,
    parse_tool_ref,
    resolve_version,
    valid_version_spec,
)
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.model._values import _list, _map

_A = "/aileron"
_STEPS = f"{_A}/steps"


def _error(code: str, message: str, pointer: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, pointer=pointer, hint=hint)


def _choices(label: str, names: Collection[str]) -> str:
    shown = sorted(names)
    return f"{label}: {', '.join(shown)}" if shown else f"there are no {label}"


# The codes `tools` gives that depend on which catalog the plan is read
# against: a plan composed from a catalog file is checked again against it.
CATALOG_CODES = frozenset(
    {
        "flightplan.unknown_tool",
        "flightplan.invalid_tool_version",
        "flightplan.unknown_tool_version",
        "flightplan.undeclared_program",
    }
)


def tools(
    plan: FlightPlan, known: Mapping[str, CatalogTool] | None = None, *, composed: bool = False
) -> Iterator[Diagnostic]:
    """`known`: a catalog file's tools instead of the shipped catalog. With
    `composed` (freeze will compose Features), a well-formed version the
    catalog lacks is an error here, before freeze, not a warning."""
    env = _map(_map(plan.data.get("aileron")).get("environment"))
    known = catalog() if known is None else known
    programs: set[str] = set()
    for index, text in enumerate(_list(env.get("tools"))):
        pointer = pointer_join(f"{_A}/environment/tools", index)
        ref = parse_tool_ref(text)
        if ref is None:
            if isinstance(text, str):
                yield _error(
                    "flightplan.invalid_tool_ref",
                    f"'{text}' is not '<name>@<version>'",
                    pointer,
                    "for example aws-cli@2.x",
                )
            continue
        tool = known.get(ref.name)
        if tool is None:
            yield _error(
                "flightplan.unknown_tool",
                f"'{ref.name}' is not in the curated tool catalog",
                pointer,
                _choices("catalog tools", known) + "; use environment.image for anything else",
            )
            continue
        programs.update(tool.programs)
        if not valid_version_spec(ref.version):
            yield _error(
                "flightplan.invalid_tool_version",
                f"'{ref.version}' is not a version of the grammar 2, 2.x or 2.19.1",
                pointer,
                f"catalog versions of '{ref.name}': {', '.join(tool.versions)}",
            )
        elif resolve_version(tool, ref.version) is None:
            # The seed: "2, 2.x, and 2.19.1 all validate and freeze resolves
            # it against the catalog", so a well-formed version the catalog
            # lacks is valid here and refused only by freeze.
            yield Diagnostic(
                code="flightplan.unknown_tool_version",
                message=f"no catalog version of '{ref.name}' matches '{ref.version}'"
                + ("" if composed else "; freeze will refuse the plan"),
                severity=Severity.ERROR if composed else Severity.WARNING,
                pointer=pointer,
                hint=f"catalog versions: {', '.join(tool.versions)}",
            )
    if env and "image" not in env and not _list(env.get("tools")):
        yield _error(
            "flightplan.empty_environment",
            "the environment declares no tool and no image",
            pointer_join(_A, "environment"),
            "declare at least one of environment.tools or environment.image,"
            " or leave the environment out",
        )
    for step in plan.steps:
        if step.kind != "tool":
            continue
        if plan.environment is None:
            yield _error(
                "flightplan.tool_step_without_environment",
                f"tool step '{step.id}' runs a command but the plan declares no environment",
                pointer_join(_STEPS, step.index, "command"),
                "declare environment.tools (or environment.image)",
            )
        elif step.command and plan.environment.image is None and step.command[0] not in programs:
            yield _error(
                "flightplan.undeclared_program",
                f"tool step '{step.id}' runs '{step.command[0]}', which no declared tool provides",
                pointer_join(_STEPS, step.index, "command", 0),
                _choices("programs of the declared tools", programs),
            )
        if "trustContract" in step.raw and not step.raw["trustContract"]:
            yield _error(
                "flightplan.empty_trust_contract",
                f"tool step '{step.id}' declares an empty trust contract",
                pointer_join(_STEPS, step.index, "trustContract"),
                "declare its hosts, or leave trustContract out",
            )


def transforms(plan: FlightPlan) -> Iterator[Diagnostic]:
    for step in plan.steps:
        name = step.raw.get("transform")
        if step.kind == "transform" and isinstance(name, str) and name not in builtin_transforms():
            yield Diagnostic(
                code="flightplan.unknown_transform",
                message=f"transform step '{step.id}' names '{name}', not a built-in transform",
                severity=Severity.WARNING,
                pointer=pointer_join(_STEPS, step.index, "transform"),
                hint=_choices("built-in transforms", builtin_transforms())
                + "; launch refuses it unless the host registers it",
            )
