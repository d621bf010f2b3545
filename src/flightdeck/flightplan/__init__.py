"""Flight Plans (seed 003): lint, graph, freeze, sign, store and verify.

A Flight Plan is a SKILL.md whose frontmatter carries an `aileron:` block.
`lint_document` checks what the schema cannot; `freeze` seals a plan into the
signed, content-addressed store; `verify_plan` checks a frozen plan (hash,
signature, publisher trust) and returns the typed `FlightPlan` launch runs.

The parts: `model` (the typed plan, its reader, bindings, tokens, the step
graph, the tool catalog), `lint`, `signing` (keys, signatures, keyring,
trust state), `store` (the content-addressed store and its pin files) and
`registry` (OCI image references and registry HTTP). The modules here share
the error, the read limits and canonical bytes, load a plan (with the
in-process parse cache), and run the pipelines that tie the parts together:
freeze, the whole freeze into the store, verify, co-sign, render.
"""

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
    from flightdeck.flightplan._canonical import PartDigests, canonical_bytes, content_hash
    from flightdeck.flightplan._environment import ComposedImage, ImageComposer, with_catalog
    from flightdeck.flightplan._errors import FlightPlanError
    from flightdeck.flightplan._freeze import FrozenPlan, Signature, freeze_file, freeze_loaded
    from flightdeck.flightplan._load import PlanLoad, load_plan, parse_plan
    from flightdeck.flightplan._pins import CodeResolver, action_refs
    from flightdeck.flightplan._pipeline import FreezeOutcome, freeze_plan
    from flightdeck.flightplan._render import render_dot, render_graph, render_mermaid, render_svg
    from flightdeck.flightplan._sign import CoSignOutcome, cosign_version
    from flightdeck.flightplan._verify import VerifiedPlan, locate_plan, verify_plan
    from flightdeck.flightplan.lint._lint import lint_document, lint_plan
    from flightdeck.flightplan.model._bindings import Binding, parse_binding
    from flightdeck.flightplan.model._catalog import (
        CatalogTool,
        builtin_transforms,
        catalog,
        resolve_version,
    )
    from flightdeck.flightplan.model._features import (
        FeatureCatalog,
        FeaturePin,
        load_feature_catalog,
    )
    from flightdeck.flightplan.model._graph import StepGraph, format_cycle
    from flightdeck.flightplan.model._lock import (
        CodePin,
        ComposedFeature,
        Lock,
        ResolvedCapability,
        ResolvedImage,
    )
    from flightdeck.flightplan.model._models import (
        ActionRequirement,
        Environment,
        FlightPlan,
        Input,
        Output,
        Resolution,
        Step,
        TrustContract,
    )
    from flightdeck.flightplan.model._read import read_plan
    from flightdeck.flightplan.model._tokens import Token, substitute_inputs
    from flightdeck.flightplan.model._tokens import scan as scan_tokens
    from flightdeck.flightplan.registry._images import (
        ImageResolver,
        OciResolver,
        PinnedOnlyResolver,
        parse_image_ref,
    )
    from flightdeck.flightplan.registry._registry_http import RegistryRefused
    from flightdeck.flightplan.signing._keyring import Keyring, Revocation, TrustedKey
    from flightdeck.flightplan.signing._passphrase import read_passphrase_fd, resolve_passphrase
    from flightdeck.flightplan.signing._signing import (
        KeyPair,
        generate_keys,
        key_id,
        load_private_key,
        load_public_key,
    )
    from flightdeck.flightplan.signing._trust import TrustState
    from flightdeck.flightplan.store._store import SkillStore, StoredVersion

_LAZY: dict[str, tuple[str, str]] = {
    "ComposedFeature": ("flightdeck.flightplan.model._lock", "ComposedFeature"),
    "ComposedImage": ("flightdeck.flightplan._environment", "ComposedImage"),
    "ImageComposer": ("flightdeck.flightplan._environment", "ImageComposer"),
    "with_catalog": ("flightdeck.flightplan._environment", "with_catalog"),
    "FeatureCatalog": ("flightdeck.flightplan.model._features", "FeatureCatalog"),
    "FeaturePin": ("flightdeck.flightplan.model._features", "FeaturePin"),
    "load_feature_catalog": ("flightdeck.flightplan.model._features", "load_feature_catalog"),
    "Binding": ("flightdeck.flightplan.model._bindings", "Binding"),
    "parse_binding": ("flightdeck.flightplan.model._bindings", "parse_binding"),
    "PartDigests": ("flightdeck.flightplan._canonical", "PartDigests"),
    "canonical_bytes": ("flightdeck.flightplan._canonical", "canonical_bytes"),
    "content_hash": ("flightdeck.flightplan._canonical", "content_hash"),
    "CatalogTool": ("flightdeck.flightplan.model._catalog", "CatalogTool"),
    "builtin_transforms": ("flightdeck.flightplan.model._catalog", "builtin_transforms"),
    "catalog": ("flightdeck.flightplan.model._catalog", "catalog"),
    "resolve_version": ("flightdeck.flightplan.model._catalog", "resolve_version"),
    "FlightPlanError": ("flightdeck.flightplan._errors", "FlightPlanError"),
    "FrozenPlan": ("flightdeck.flightplan._freeze", "FrozenPlan"),
    "Signature": ("flightdeck.flightplan._freeze", "Signature"),
    "freeze_file": ("flightdeck.flightplan._freeze", "freeze_file"),
    "freeze_loaded": ("flightdeck.flightplan._freeze", "freeze_loaded"),
    "StepGraph": ("flightdeck.flightplan.model._graph", "StepGraph"),
    "format_cycle": ("flightdeck.flightplan.model._graph", "format_cycle"),
    "ImageResolver": ("flightdeck.flightplan.registry._images", "ImageResolver"),
    "OciResolver": ("flightdeck.flightplan.registry._images", "OciResolver"),
    "PinnedOnlyResolver": ("flightdeck.flightplan.registry._images", "PinnedOnlyResolver"),
    "parse_image_ref": ("flightdeck.flightplan.registry._images", "parse_image_ref"),
    "RegistryRefused": ("flightdeck.flightplan.registry._registry_http", "RegistryRefused"),
    "Keyring": ("flightdeck.flightplan.signing._keyring", "Keyring"),
    "TrustedKey": ("flightdeck.flightplan.signing._keyring", "TrustedKey"),
    "TrustState": ("flightdeck.flightplan.signing._trust", "TrustState"),
    "lint_document": ("flightdeck.flightplan.lint._lint", "lint_document"),
    "lint_plan": ("flightdeck.flightplan.lint._lint", "lint_plan"),
    "PlanLoad": ("flightdeck.flightplan._load", "PlanLoad"),
    "load_plan": ("flightdeck.flightplan._load", "load_plan"),
    "parse_plan": ("flightdeck.flightplan._load", "parse_plan"),
    "ActionRequirement": ("flightdeck.flightplan.model._models", "ActionRequirement"),
    "CodePin": ("flightdeck.flightplan.model._lock", "CodePin"),
    "CodeResolver": ("flightdeck.flightplan._pins", "CodeResolver"),
    "action_refs": ("flightdeck.flightplan._pins", "action_refs"),
    "Environment": ("flightdeck.flightplan.model._models", "Environment"),
    "FlightPlan": ("flightdeck.flightplan.model._models", "FlightPlan"),
    "Input": ("flightdeck.flightplan.model._models", "Input"),
    "Lock": ("flightdeck.flightplan.model._lock", "Lock"),
    "Output": ("flightdeck.flightplan.model._models", "Output"),
    "Resolution": ("flightdeck.flightplan.model._models", "Resolution"),
    "ResolvedCapability": ("flightdeck.flightplan.model._lock", "ResolvedCapability"),
    "ResolvedImage": ("flightdeck.flightplan.model._lock", "ResolvedImage"),
    "Step": ("flightdeck.flightplan.model._models", "Step"),
    "TrustContract": ("flightdeck.flightplan.model._models", "TrustContract"),
    "FreezeOutcome": ("flightdeck.flightplan._pipeline", "FreezeOutcome"),
    "freeze_plan": ("flightdeck.flightplan._pipeline", "freeze_plan"),
    "read_plan": ("flightdeck.flightplan.model._read", "read_plan"),
    "render_dot": ("flightdeck.flightplan._render", "render_dot"),
    "render_graph": ("flightdeck.flightplan._render", "render_graph"),
    "render_mermaid": ("flightdeck.flightplan._render", "render_mermaid"),
    "render_svg": ("flightdeck.flightplan._render", "render_svg"),
    "KeyPair": ("flightdeck.flightplan.signing._signing", "KeyPair"),
    "generate_keys": ("flightdeck.flightplan.signing._signing", "generate_keys"),
    "key_id": ("flightdeck.flightplan.signing._signing", "key_id"),
    "load_private_key": ("flightdeck.flightplan.signing._signing", "load_private_key"),
    "load_public_key": ("flightdeck.flightplan.signing._signing", "load_public_key"),
    "SkillStore": ("flightdeck.flightplan.store._store", "SkillStore"),
    "Token": ("flightdeck.flightplan.model._tokens", "Token"),
    "scan_tokens": ("flightdeck.flightplan.model._tokens", "scan"),
    "substitute_inputs": ("flightdeck.flightplan.model._tokens", "substitute_inputs"),
    "StoredVersion": ("flightdeck.flightplan.store._store", "StoredVersion"),
    "read_passphrase_fd": ("flightdeck.flightplan.signing._passphrase", "read_passphrase_fd"),
    "resolve_passphrase": ("flightdeck.flightplan.signing._passphrase", "resolve_passphrase"),
    "CoSignOutcome": ("flightdeck.flightplan._sign", "CoSignOutcome"),
    "cosign_version": ("flightdeck.flightplan._sign", "cosign_version"),
    "Revocation": ("flightdeck.flightplan.signing._keyring", "Revocation"),
    "VerifiedPlan": ("flightdeck.flightplan._verify", "VerifiedPlan"),
    "locate_plan": ("flightdeck.flightplan._verify", "locate_plan"),
    "verify_plan": ("flightdeck.flightplan._verify", "verify_plan"),
}


__all__ = [
    "ActionRequirement",
    "Binding",
    "CatalogTool",
    "CoSignOutcome",
    "CodePin",
    "CodeResolver",
    "ComposedFeature",
    "ComposedImage",
    "Environment",
    "FeatureCatalog",
    "FeaturePin",
    "FlightPlan",
    "FlightPlanError",
    "FreezeOutcome",
    "FrozenPlan",
    "ImageComposer",
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
    "RegistryRefused",
    "Resolution",
    "ResolvedCapability",
    "ResolvedImage",
    "Revocation",
    "Signature",
    "SkillStore",
    "Step",
    "StepGraph",
    "StoredVersion",
    "Token",
    "TrustContract",
    "TrustState",
    "TrustedKey",
    "VerifiedPlan",
    "action_refs",
    "builtin_transforms",
    "canonical_bytes",
    "catalog",
    "content_hash",
    "cosign_version",
    "format_cycle",
    "freeze_file",
    "freeze_loaded",
    "freeze_plan",
    "generate_keys",
    "key_id",
    "lint_document",
    "lint_plan",
    "load_feature_catalog",
    "load_plan",
    "load_private_key",
    "load_public_key",
    "locate_plan",
    "parse_binding",
    "parse_image_ref",
    "parse_plan",
    "read_passphrase_fd",
    "read_plan",
    "render_dot",
    "render_graph",
    "render_mermaid",
    "render_svg",
    "resolve_passphrase",
    "resolve_version",
    "scan_tokens",
    "substitute_inputs",
    "verify_plan",
    "with_catalog",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
