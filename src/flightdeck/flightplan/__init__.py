"""Flight Plans (seed 003): lint, graph, freeze, sign, store and verify.

A Flight Plan is a SKILL.md whose frontmatter carries an `aileron:` block.
`lint_document` checks what the schema cannot; `freeze` seals a plan into the
signed, content-addressed store; `verify_plan` checks a frozen plan (hash,
signature, publisher trust) and returns the typed `FlightPlan` launch runs.
"""

from flightdeck.flightplan._bindings import Binding, parse_binding
from flightdeck.flightplan._canonical import PartDigests, canonical_bytes, content_hash
from flightdeck.flightplan._catalog import CatalogTool, catalog, resolve_version
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import FrozenPlan, Signature, freeze_file, freeze_loaded
from flightdeck.flightplan._graph import StepGraph, format_cycle
from flightdeck.flightplan._images import (
    ImageResolver,
    OciResolver,
    PinnedOnlyResolver,
    parse_image_ref,
)
from flightdeck.flightplan._keyring import Keyring, TrustedKey
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
from flightdeck.flightplan._pipeline import FreezeOutcome, freeze_plan
from flightdeck.flightplan._read import read_plan
from flightdeck.flightplan._render import render_dot, render_graph, render_mermaid, render_svg
from flightdeck.flightplan._signing import (
    KeyPair,
    generate_keys,
    key_id,
    load_private_key,
    load_public_key,
)
from flightdeck.flightplan._store import SkillStore, StoredVersion
from flightdeck.flightplan._verify import VerifiedPlan, locate_plan, verify_plan

__all__ = [
    "ActionRequirement",
    "Binding",
    "CatalogTool",
    "Environment",
    "FlightPlan",
    "FlightPlanError",
    "FreezeOutcome",
    "FrozenPlan",
    "ImageResolver",
    "Input",
    "KeyPair",
    "Keyring",
    "Lock",
    "OciResolver",
    "Output",
    "PartDigests",
    "PinnedOnlyResolver",
    "PlanLoad",
    "Resolution",
    "ResolvedCapability",
    "ResolvedImage",
    "Signature",
    "SkillStore",
    "Step",
    "StepGraph",
    "StoredVersion",
    "TrustContract",
    "TrustedKey",
    "VerifiedPlan",
    "canonical_bytes",
    "catalog",
    "content_hash",
    "format_cycle",
    "freeze_file",
    "freeze_loaded",
    "freeze_plan",
    "generate_keys",
    "key_id",
    "lint_document",
    "lint_plan",
    "load_plan",
    "load_private_key",
    "load_public_key",
    "locate_plan",
    "parse_binding",
    "parse_image_ref",
    "parse_plan",
    "read_plan",
    "render_dot",
    "render_graph",
    "render_mermaid",
    "render_svg",
    "resolve_version",
    "verify_plan",
]
