"""Freeze: parse → lint → resolve the environment → seal step trust → lock →
content hash → sign → (the caller stores). Pure apart from the resolver."""

from __future__ import annotations

import copy
import os
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck.flightplan._canonical import (
    CanonicalError,
    PartDigests,
    canonical_bytes,
    jcs,
    sha256_tag,
    unsafe_integer,
)
from flightdeck.flightplan._emit import check_round_trip, emit_skill
from flightdeck.flightplan._environment import ImageComposer, compose_environment, with_catalog
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._load import PlanLoad, load_plan
from flightdeck.flightplan._pins import CodeResolver, pin_code
from flightdeck.flightplan.model._catalog import catalog, parse_tool_ref, resolve_version
from flightdeck.flightplan.model._features import FeatureCatalog
from flightdeck.flightplan.model._lock import CodePin, Lock, ResolvedCapability, ResolvedImage
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.registry._images import ImageResolver, PinnedOnlyResolver
from flightdeck.flightplan.signing._signing import key_id, public_pem, sign
from flightdeck.flightplan.store._pinfile import bind_pins, pins_file_bytes

PUBLISHER = re.compile(r"^github://[A-Za-z0-9](?:[A-Za-z0-9_.-]*)(?:/[A-Za-z0-9_.-]+)?$")
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
IMAGE_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")  # Aileron's resolvedImages[].digest


@dataclass(frozen=True)
class Signature:
    """The detached signature file (`SKILL.md.sig`), a small JSON envelope."""

    content_hash: str
    key_id: str
    signature: str  # base64 Ed25519 signature over the canonical bytes
    parts: PartDigests
    # The signed statement: name, version, publisher, content hash, the
    # digest of lock.json and the signing time, signed on their own so that
    # nothing verify decides on comes from unsigned bytes.
    statement: dict[str, Any] | None = None
    statement_signature: str | None = None

    def to_bytes(self) -> bytes:
        return jcs(self.to_data()) + b"\n"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "algorithm": "ed25519",
            "contentHash": self.content_hash,
            "keyId": self.key_id,
            "parts": self.parts.to_data(),
            "signature": self.signature,
        }
        if self.statement is not None:
            data["statement"] = self.statement
            data["statementSignature"] = self.statement_signature
        return data


@dataclass(frozen=True)
class FrozenPlan:
    """Everything freeze produced; the store writes it as files."""

    name: str
    content_hash: str
    version: str | None
    publisher: str | None
    skill_text: str  # the frozen SKILL.md
    lock: dict[str, Any]
    signature: Signature
    public_key_pem: bytes
    # The driver code pinned (code-pins.json, bound by `metadata`); () with
    # `--no-code-pins` or a plan that calls no action.
    code_pins: tuple[CodePin, ...] = ()

    @property
    def short_hash(self) -> str:
        return self.content_hash.split(":", 1)[1][:16]

    def lock_bytes(self) -> bytes:
        return jcs(self.lock) + b"\n"

    def code_pins_bytes(self) -> bytes | None:
        return pins_file_bytes(self.code_pins) if self.code_pins else None


def freeze_file(
    path: str | Path,
    key: Ed25519PrivateKey,
    *,
    publisher: str | None = None,
    version: str | None = None,
    resolver: ImageResolver | None = None,
    installed_actions: Collection[str] | None = None,
    code: CodeResolver | None = None,
    tools: FeatureCatalog | None = None,
    composer: ImageComposer | None = None,
) -> FrozenPlan:
    """Load, lint and freeze a SKILL.md file (does not store it)."""
    load = load_plan(path, installed_actions=installed_actions)
    return freeze_loaded(
        load,
        key,
        publisher=publisher,
        version=version,
        resolver=resolver,
        code=code,
        tools=tools,
        composer=composer,
    )


def freeze_loaded(
    load: PlanLoad,
    key: Ed25519PrivateKey,
    *,
    publisher: str | None = None,
    version: str | None = None,
    resolver: ImageResolver | None = None,
    code: CodeResolver | None = None,
    tools: FeatureCatalog | None = None,
    composer: ImageComposer | None = None,
) -> FrozenPlan:
    """Freeze a loaded plan. With `code`, every action ref's driver code is
    pinned (`code_pins`, stored as code-pins.json and bound by its digest in
    the frontmatter's `metadata`); without it, nothing is pinned. With
    `tools` (a catalog file), the plan's tools are checked against it and
    `composer` composes them onto the base into the one image the lock pins."""
    if tools is not None:
        load = with_catalog(load, tools)
    if load.plan is None or load.document is None or load.errors:
        raise FlightPlanError(
            "freeze.invalid_plan",
            f"{load.path}: {len(load.errors)} error(s); freeze stops at the first failed check",
            hint="run 'flightdeck lint' and fix the errors",
            diagnostics=load.errors,
        )
    plan = load.plan
    _check_identity(plan, publisher, version)
    assert plan.name is not None
    images_resolver = resolver or PinnedOnlyResolver()
    if tools is not None and plan.environment is not None and plan.environment.tools:
        images, capabilities = compose_environment(plan, tools, images_resolver, composer)
    else:
        images, capabilities = _resolve_images(plan, images_resolver), _resolve_tools(plan)
    lock = Lock(
        resolved_images=images,
        resolved_capability_set=capabilities,
        step_trust=_seal_step_trust(plan),
        publisher=publisher,
        version=version,
    )
    pins = pin_code(plan, load.document, code) if code is not None else ()
    data = copy.deepcopy(dict(load.document.data))
    bind_pins(data, pins_file_bytes(pins) if pins else None)
    data["aileron"]["lock"] = lock.to_data()
    body = load.document.body
    try:
        message = canonical_bytes(data, body)
    except CanonicalError as exc:
        pointer = unsafe_integer(data)
        if pointer is None:
            raise FlightPlanError("freeze.not_canonicalizable", str(exc)) from None
        position = load.document.source_map.position(pointer)
        raise FlightPlanError(
            "freeze.not_canonicalizable",
            f"the integer at {pointer} is outside +-(2^53 - 1), which canonical JSON"
            " (RFC 8785, I-JSON numbers) cannot hold exactly",
            where=f"{load.path}:{position[0]}:{position[1]}" if position else str(load.path),
            hint="write it as a string, or as a smaller number",
        ) from None
    digest = sha256_tag(message)
    data["aileron"]["lock"]["contentHash"] = digest
    text = emit_skill(data, body)
    check_round_trip(text, data, body)
    public = key.public_key()
    lock_data = data["aileron"]["lock"]
    statement = make_statement(plan.name, version, publisher, digest, jcs(lock_data) + b"\n")
    return FrozenPlan(
        name=plan.name,
        content_hash=digest,
        version=version,
        publisher=publisher,
        skill_text=text,
        lock=data["aileron"]["lock"],
        signature=Signature(
            digest,
            key_id(public),
            sign(key, message),
            PartDigests.of(data, body),
            statement,
            sign(key, jcs(statement)),
        ),
        public_key_pem=public_pem(public),
        code_pins=pins,
    )


STATEMENT_TYPE = "flightdeck/statement/v1"


def make_statement(
    name: str, version: str | None, publisher: str | None, digest: str, lock_json: bytes
) -> dict[str, Any]:
    """The statement signed beside the content (see docs/canonical-bytes.md)."""
    return {
        "type": STATEMENT_TYPE,
        "name": name,
        "version": version,
        "publisher": publisher,
        "contentHash": digest,
        "lockDigest": sha256_tag(lock_json),
        "signedAt": signing_time(),
    }


def signing_time() -> str:
    # SOURCE_DATE_EPOCH makes the signed time reproducible.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch) if epoch else time.time(), UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_identity(plan: FlightPlan, publisher: str | None, version: str | None) -> None:
    if not plan.has_aileron:
        raise FlightPlanError(
            "freeze.not_a_flight_plan",
            "this skill has no aileron block; an instruction-only skill cannot be frozen",
        )
    if plan.name is None or not SKILL_NAME.match(plan.name):
        raise FlightPlanError(
            "freeze.invalid_name",
            f"skill name {plan.name!r} cannot name a store entry",
            hint="lowercase letters, digits and single hyphens",
        )
    if publisher is not None and not PUBLISHER.match(publisher):
        raise FlightPlanError(
            "freeze.invalid_publisher",
            f"publisher '{publisher}' is not github://owner or github://owner/repo",
        )
    if version is not None and not SEMVER.match(version):
        raise FlightPlanError(
            "freeze.invalid_version", f"version '{version}' is not a semver label (e.g. 1.2.0)"
        )


def _resolve_images(plan: FlightPlan, resolver: ImageResolver) -> tuple[ResolvedImage, ...]:
    image = plan.environment.image if plan.environment else None
    if image is None:
        return ()
    pinned = resolver.resolve(image)
    digest = (pinned or "").rpartition("@")[2]
    if not pinned or "@" not in pinned or not IMAGE_DIGEST.match(digest):
        raise FlightPlanError(
            "freeze.image_unresolved",
            f"image '{image}' did not resolve to a digest",
            hint="check the tag exists in the registry, or pin it as name@sha256:<hex>",
        )
    # Aileron's form: the bare digest; the repository is the one `ref` names
    # (launch pulls `ResolvedImage.pinned`).
    return (ResolvedImage(image, digest),)


def _resolve_tools(plan: FlightPlan) -> tuple[ResolvedCapability, ...]:
    known = catalog()
    out = []
    for text in plan.environment.tools if plan.environment else ():
        ref = parse_tool_ref(text)
        tool = known.get(ref.name) if ref else None
        pinned = resolve_version(tool, ref.version) if ref and tool else None
        if ref is None or pinned is None:  # a well-formed version the catalog lacks
            versions = ", ".join(tool.versions) if tool else "none"
            raise FlightPlanError(
                "freeze.tool_unresolved",
                f"no catalog version of tool '{text}' to pin",
                hint=f"catalog versions: {versions}",
            )
        out.append(ResolvedCapability(ref.name, ref.version, pinned))
    return tuple(out)


def _seal_step_trust(plan: FlightPlan) -> dict[str, tuple[str, ...]]:
    return {
        step.id: step.trust_contract.hosts
        for step in plan.steps
        if step.kind == "tool" and step.trust_contract is not None
    }
