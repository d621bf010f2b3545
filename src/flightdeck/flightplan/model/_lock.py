"""The `aileron.lock` section freeze writes: the resolved images, the pinned
tool versions, each tool step's sealed hosts and the code pins."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from flightdeck.flightplan.model._values import _list, _map, _str, _strs

# A composed image exists in the image cache of the machine that froze it
# (or composes it again, to the same digest), never in a registry under this
# name: launch refuses to pull it (`image.composed_missing`). `publish` copies
# it into the plan's repository; an installed plan pulls it from there.
COMPOSED_REPOSITORY = "flightdeck.local/composed"
COMPOSED_TAG = "flightdeck/composed"


@dataclass(frozen=True)
class ComposedFeature:
    """One Feature in a composed image: the tool and version it installs,
    the Feature's reference with the manifest digest it was fetched by, and
    the programs the catalog says it provides (the version check's names)."""

    tool: str
    version: str
    feature: str
    programs: tuple[str, ...] = ()

    @classmethod
    def read(cls, item: object) -> ComposedFeature | None:
        value = _map(item)
        fields = [value.get(k) for k in ("tool", "version", "feature")]
        if not all(isinstance(f, str) for f in fields):
            return None
        return cls(str(fields[0]), str(fields[1]), str(fields[2]), _strs(value.get("programs")))

    def to_data(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "version": self.version,
            "feature": self.feature,
            "programs": list(self.programs),
        }


@dataclass(frozen=True)
class ResolvedImage:
    COMPOSED_REPOSITORY: ClassVar[str] = COMPOSED_REPOSITORY

    ref: str  # the image as `environment.image` names it
    # Aileron's form, a bare `sha256:<hex>` (what freeze writes); locks
    # frozen before hold `<name>@sha256:<hex>`, still read.
    digest: str
    local_tag: str | None = None  # Aileron's composed-tools tag, booted as written
    # A composed image (issue 32): the Features composed onto the base that
    # `ref` names, in the order they were applied.
    features: tuple[ComposedFeature, ...] = ()
    # Where this machine pulls a composed image from (`HOST/REPO`: the origin
    # of an installed plan, where publish copied it); not in the lock.
    source: str | None = None

    @property
    def pinned(self) -> str:
        """The reference launch pulls: `<registry>/<repository>@sha256:<hex>`,
        the repository named by `ref` (an older lock's digest already is one);
        a composed image's is `COMPOSED_REPOSITORY@<digest>`, found in the
        image cache only."""
        if "@" in self.digest:
            return self.digest
        if self.features:
            return f"{self.source or COMPOSED_REPOSITORY}@{self.digest}"
        # Lazily: _images brings httpx, which most readers of a plan never need.
        from flightdeck.flightplan._errors import FlightPlanError
        from flightdeck.flightplan.registry._images import ImageRef, parse_image_ref

        try:
            image = parse_image_ref(self.ref)
        except FlightPlanError:  # lint refuses such a ref; keep it readable here
            return f"{self.ref.partition('@')[0]}@{self.digest}"
        return ImageRef(image.registry, image.repository, None, self.digest).pinned

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ref": self.ref, "digest": self.digest}
        if self.local_tag is not None:
            data["localTag"] = self.local_tag
        if self.features:
            data["features"] = [feature.to_data() for feature in self.features]
        return data


@dataclass(frozen=True)
class ResolvedCapability:
    name: str
    requested: str
    version: str

    @classmethod
    def read(cls, item: object) -> ResolvedCapability | None:
        """`<name>@<version>` (Aileron's schema, what freeze writes) or the
        older `{name, requested, version}` object flightdeck wrote before."""
        if isinstance(item, str):
            name, at, version = item.rpartition("@")
            return cls(name, version, version) if at and name and version else None
        if isinstance(item, dict) and all(
            isinstance(item.get(k), str) for k in ("name", "requested", "version")
        ):
            return cls(item["name"], item["requested"], item["version"])
        return None

    def to_data(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class CodePin:
    """The code behind a plan's action refs to one driver, pinned at freeze:
    where its DRIVER.md was (`root` "workspace" or "library", `location`
    relative to it), the tools the plan calls, and the code digest
    (docs/canonical-bytes.md). `files` lists the digested files of a
    workspace-local tree by name; an installed distribution is pinned by
    `distribution`, `version` and the digest alone."""

    driver: str
    tools: tuple[str, ...]
    root: str
    location: str
    digest: str
    files: Mapping[str, str] = field(default_factory=dict)
    distribution: str | None = None
    version: str | None = None

    @classmethod
    def read(cls, item: object) -> CodePin | None:
        value = _map(item)
        fields = [value.get(k) for k in ("driver", "root", "location", "digest")]
        if not all(isinstance(f, str) for f in fields):
            return None
        dist = _map(value.get("distribution"))
        return cls(
            driver=str(fields[0]),
            tools=_strs(value.get("tools")),
            root=str(fields[1]),
            location=str(fields[2]),
            digest=str(fields[3]),
            files={k: v for k, v in _map(value.get("files")).items() if isinstance(v, str)},
            distribution=_str(dist.get("name")),
            version=_str(dist.get("version")),
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "driver": self.driver,
            "tools": list(self.tools),
            "root": self.root,
            "location": self.location,
            "digest": self.digest,
            "files": dict(self.files),
        }
        if self.distribution is not None:
            data["distribution"] = {"name": self.distribution, "version": self.version}
        return data


@dataclass(frozen=True)
class Lock:
    """The `aileron.lock` section written by freeze."""

    resolved_images: tuple[ResolvedImage, ...] = ()
    resolved_capability_set: tuple[ResolvedCapability, ...] = ()
    step_trust: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # step id -> hosts
    publisher: str | None = None
    content_hash: str | None = None
    version: str | None = None
    code_pins: tuple[CodePin, ...] = ()

    @classmethod
    def read(cls, value: object) -> Lock | None:
        if not isinstance(value, dict):
            return None
        images = tuple(
            ResolvedImage(
                item["ref"],
                item["digest"],
                _str(item.get("localTag")),
                tuple(f for f in map(ComposedFeature.read, _list(item.get("features"))) if f),
            )
            for item in _list(value.get("resolvedImages"))
            if isinstance(item, dict)
            and isinstance(item.get("ref"), str)
            and isinstance(item.get("digest"), str)
        )
        read = (ResolvedCapability.read(item) for item in _list(value.get("resolvedCapabilitySet")))
        capabilities = tuple(cap for cap in read if cap is not None)
        trust = {
            step_id: _strs(_map(entry).get("hosts"))
            for step_id, entry in _map(value.get("stepTrust")).items()
        }
        return cls(
            resolved_images=images,
            resolved_capability_set=capabilities,
            step_trust=trust,
            publisher=_str(value.get("publisher")),
            content_hash=_str(value.get("contentHash")),
            version=_str(value.get("version")),
            code_pins=tuple(
                pin for pin in map(CodePin.read, _list(value.get("codePins"))) if pin is not None
            ),
        )

    def to_data(self) -> dict[str, Any]:
        """The lock as frontmatter data; empty sections are left out."""
        data: dict[str, Any] = {}
        if self.resolved_images:
            data["resolvedImages"] = [image.to_data() for image in self.resolved_images]
        if self.resolved_capability_set:
            # Strings, as Aileron's schema has them: `aws-cli@2.22.4`, the
            # version freeze pinned (the request stays in environment.tools).
            data["resolvedCapabilitySet"] = [cap.to_data() for cap in self.resolved_capability_set]
        if self.step_trust:
            data["stepTrust"] = {
                step_id: {"hosts": list(hosts)} for step_id, hosts in self.step_trust.items()
            }
        if self.code_pins:
            data["codePins"] = [pin.to_data() for pin in self.code_pins]
        for key, value in (
            ("publisher", self.publisher),
            ("version", self.version),
            ("contentHash", self.content_hash),
        ):
            if value is not None:
                data[key] = value
        return data
