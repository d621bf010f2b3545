"""Freeze resolves the environment to one image (seed 003, issue 32).

Without a catalog file a plan keeps what it always had: `environment.image`
resolved to a digest, `environment.tools` pinned to shipped catalog versions
and checked on the host at launch. With a catalog file (`FeatureCatalog`),
the tools are resolved against it, each to one exact version and its
Feature, and an `ImageComposer` composes them onto the base
(`environment.image`, else the catalog's runner base) into one image whose
digest the lock pins. flightplan cannot compose (its layer may not import
launch), so the caller passes the composer the way it passes the image
resolver and the code resolver.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from flightdeck.documents import Diagnostic, locate
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._load import PlanLoad
from flightdeck.flightplan.lint._lint_environment import CATALOG_CODES, tools
from flightdeck.flightplan.model._catalog import CatalogTool, parse_tool_ref
from flightdeck.flightplan.model._features import FeatureCatalog, FeaturePin
from flightdeck.flightplan.model._lock import (
    COMPOSED_TAG,
    ComposedFeature,
    ResolvedCapability,
    ResolvedImage,
)
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.registry._images import ImageResolver


@dataclass(frozen=True)
class ComposedImage:
    """What a composer made: the image's manifest digest and each Feature
    as fetched (its manifest digest)."""

    digest: str
    features: tuple[ComposedFeature, ...]


class ImageComposer(Protocol):
    """Composes `features`, in the order given, onto the pinned `base`.
    Raises the composer's own error (launch's `LaunchError`, `compose.*`)."""

    def compose(self, base: str, features: Sequence[FeaturePin]) -> ComposedImage: ...


def with_catalog(load: PlanLoad, catalog: FeatureCatalog) -> PlanLoad:
    """The load with its tool diagnostics taken against `catalog` instead of
    the shipped one (names, versions and programs), located like lint's."""
    if load.plan is None or load.document is None:
        return load
    kept = [d for d in load.diagnostics if d.code not in CATALOG_CODES]
    fresh = tools(load.plan, catalog.as_tools(), composed=True)
    file = str(load.document.path) if load.document.path is not None else None
    located = locate(list(fresh), file, load.document.source_map)
    return replace(load, diagnostics=tuple(kept) + tuple(located))


def composed_problems(plan: FlightPlan, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """For a plan whose signed lock pins a composed image, its tool
    diagnostics judged against the Features the lock recorded (the catalog
    file need not be on the machine that verifies); otherwise unchanged."""
    features = (
        [f for image in plan.lock.resolved_images for f in image.features] if plan.lock else []
    )
    if not features:
        return list(diagnostics)
    known = {f.tool: CatalogTool(f.tool, f.programs, (f.version,)) for f in features}
    kept = [d for d in diagnostics if d.code not in CATALOG_CODES]
    return [*kept, *tools(plan, known, composed=True)]


def feature_pins(plan: FlightPlan, catalog: FeatureCatalog) -> list[FeaturePin]:
    """Each declared tool's Feature, in the order composition applies them:
    by tool name, so the order of `environment.tools` changes no digest."""
    pins: list[FeaturePin] = []
    for text in plan.environment.tools if plan.environment else ():
        ref = parse_tool_ref(text)
        pin = catalog.resolve(ref.name, ref.version) if ref else None
        if pin is None:  # lint refused it before; a caller that skipped lint
            raise FlightPlanError(
                "freeze.tool_unresolved",
                f"no version of tool '{text}' in the catalog {catalog.path}",
            )
        pins.append(pin)
    return sorted(pins, key=lambda pin: pin.tool)


def compose_environment(
    plan: FlightPlan,
    catalog: FeatureCatalog,
    resolver: ImageResolver,
    composer: ImageComposer | None,
) -> tuple[tuple[ResolvedImage, ...], tuple[ResolvedCapability, ...]]:
    """The lock's one composed image and the tools' pinned versions."""
    pins = feature_pins(plan, catalog)
    image = plan.environment.image if plan.environment else None
    base = image or catalog.runner_base
    if base is None:
        raise FlightPlanError(
            "freeze.no_runner_base",
            f"the plan declares tools only and the catalog {catalog.path} names no runnerBase",
            hint="add runnerBase to the catalog, or declare environment.image",
        )
    pinned = resolver.resolve(base)
    if not pinned or "@sha256:" not in pinned:
        raise FlightPlanError(
            "freeze.image_unresolved",
            f"base image '{base}' did not resolve to a digest",
            hint="check the tag exists in the registry, or pin it as name@sha256:<hex>",
        )
    if composer is None:
        raise FlightPlanError(
            "freeze.no_composer",
            "the plan's tools come from a catalog file, and this freeze has no image composer",
            hint="freeze through `flightdeck freeze`, or pass composer= to freeze_plan",
        )
    composed = composer.compose(pinned, pins)
    names = ",".join(f"{pin.tool}@{pin.version}" for pin in pins)
    # The tag names the inputs (Aileron's localTag), the digest the result.
    inputs = hashlib.sha256(pinned.encode())
    for pin in pins:
        inputs.update(b"\0" + pin.feature.encode())
        if pin.network:  # what install.sh could fetch is an input too
            inputs.update(b"\0network=" + ",".join(pin.network).encode())
    resolved = ResolvedImage(
        f"{pinned}+tools({names})",
        composed.digest,
        f"{COMPOSED_TAG}:{inputs.hexdigest()[:16]}",
        composed.features,
    )
    caps = tuple(ResolvedCapability(pin.tool, pin.requested, pin.version) for pin in pins)
    return (resolved,), caps


__all__ = [
    "ComposedImage",
    "ImageComposer",
    "compose_environment",
    "composed_problems",
    "feature_pins",
    "with_catalog",
]
