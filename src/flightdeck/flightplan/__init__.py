"""Flight Plans (seed 003): lint, graph, freeze, sign, store and verify.

A Flight Plan is a SKILL.md whose frontmatter carries an `aileron:` block.
`lint_document` checks what the schema cannot; `freeze` seals a plan into the
signed, content-addressed store; `verify_plan` checks a frozen plan (hash,
signature, publisher trust) and returns the typed `FlightPlan` launch runs.
"""

from flightdeck.flightplan._bindings import Binding, parse_binding
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._graph import StepGraph, format_cycle
from flightdeck.flightplan._lint import lint_document, lint_plan
from flightdeck.flightplan._load import PlanLoad, load_plan, parse_plan
from flightdeck.flightplan._models import (
    ActionRequirement,
    Environment,
    FlightPlan,
    Input,
    Lock,
    Output,
    Resolution,
    ResolvedCapability,
    ResolvedImage,
    Step,
    TrustContract,
)
from flightdeck.flightplan._read import read_plan

__all__ = [
    "ActionRequirement",
    "Binding",
    "Environment",
    "FlightPlan",
    "FlightPlanError",
    "Input",
    "Lock",
    "Output",
    "PlanLoad",
    "Resolution",
    "ResolvedCapability",
    "ResolvedImage",
    "Step",
    "StepGraph",
    "TrustContract",
    "format_cycle",
    "lint_document",
    "lint_plan",
    "load_plan",
    "parse_binding",
    "parse_plan",
    "read_plan",
]
