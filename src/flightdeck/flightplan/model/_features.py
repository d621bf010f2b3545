"""A tool catalog whose versions are Dev Container Features (issue 32).

A catalog file maps each tool to its versions and each version to one
Feature: an OCI artifact pinned by digest whose layer is the Feature's
tarball (`devcontainer-feature.json` + `install.sh`, the containers.dev
format). It also names the runner base tools-only plans are composed onto:

    {
      "catalogVersion": 1,
      "runnerBase": "registry.example/flightdeck/runner:1@sha256:<hex>",
      "tools": {
        "hello": {
          "programs": ["hello"],
          "versions": {
            "1.2.0": {"feature": "registry.example/features/hello:1.2.0@sha256:<hex>",
                      "options": {"greeting": "hi"},
                      "network": ["downloads.example:443"]}
          }
        }
      }
    }

Whoever writes this file decides what runs as root at freeze, so it is read
like any outside JSON (bounded, through `read_json`) and every Feature must
be pinned by digest: a tag beside the digest is kept only so composition can
refuse a tag that has since moved. `network` (optional) names the hosts
(`host` for its ports 80 and 443, or `host:port`) the Feature's install.sh
may reach through the egress proxy at freeze; without it the install is
offline. A problem is `catalog.invalid` naming the file and the key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from flightdeck._bounded import TooLarge, read_regular
from flightdeck._json import JsonError, read_json
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.model._catalog import CatalogTool, resolve_version

CATALOG_LIMIT = 4 << 20  # bytes of a catalog file
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_VERSION = re.compile(r"^\d+(\.\d+){0,2}$")
_OPTION = re.compile(r"^[A-Za-z0-9_-]+$")
# The shape only; the egress proxy checks each entry exactly when it starts.
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:[0-9]{1,5})?$")


@dataclass(frozen=True)
class FeaturePin:
    """One tool of a plan resolved against a catalog: the exact version and
    the Feature (by digest) that installs it, with its options."""

    tool: str
    requested: str
    version: str
    feature: str  # `<registry>/<repository>[:tag]@sha256:<hex>`
    options: Mapping[str, str] = field(default_factory=dict)
    programs: tuple[str, ...] = ()
    network: tuple[str, ...] = ()  # hosts install.sh may reach; none: offline


@dataclass(frozen=True)
class FeatureCatalog:
    path: Path
    runner_base: str | None
    tools: Mapping[str, Mapping[str, FeaturePin]]  # name -> version -> pin
    programs: Mapping[str, tuple[str, ...]]

    def as_tools(self) -> dict[str, CatalogTool]:
        """The catalog in the shape lint checks names and versions against."""
        return {
            name: CatalogTool(name, self.programs[name], tuple(sorted(versions, key=_key)))
            for name, versions in sorted(self.tools.items())
        }

    def resolve(self, name: str, spec: str) -> FeaturePin | None:
        """The Feature of the highest version of `name` matching `spec`."""
        tool = self.as_tools().get(name)
        version = resolve_version(tool, spec) if tool is not None else None
        if tool is None or version is None:
            return None
        pin = self.tools[name][version]
        return FeaturePin(name, spec, version, pin.feature, pin.options, pin.programs, pin.network)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _invalid(path: Path, where: str, message: str) -> FlightPlanError:
    return FlightPlanError(
        "catalog.invalid",
        f"{path}: {where}: {message}",
        where=str(path),
        hint="see docs/launch.md, 'Composed images': tools -> versions -> a Feature pinned"
        " by digest",
    )


def load_feature_catalog(path: str | Path) -> FeatureCatalog:
    """Read and check a catalog file. Raises `FlightPlanError`
    (`catalog.unreadable`, `catalog.invalid`)."""
    where = Path(path)
    try:
        raw = read_regular(where, CATALOG_LIMIT)
    except TooLarge as exc:
        raise _invalid(where, "the file", str(exc)) from None
    except OSError as exc:
        raise FlightPlanError(
            "catalog.unreadable",
            f"cannot read the catalog {where}: {exc.strerror or exc}",
            where=str(where),
        ) from None
    try:
        data = read_json(raw)
    except JsonError as exc:
        raise _invalid(where, "the file", f"not JSON ({exc})") from None
    return parse_feature_catalog(data, where)


def parse_feature_catalog(data: Any, path: Path) -> FeatureCatalog:
    if not isinstance(data, dict) or data.get("catalogVersion") != 1:
        raise _invalid(path, "catalogVersion", "must be 1 (an object with catalogVersion: 1)")
    base = data.get("runnerBase")
    if base is not None and (not isinstance(base, str) or not base):
        raise _invalid(path, "runnerBase", "must be an image reference")
    tools = data.get("tools")
    if not isinstance(tools, dict):
        raise _invalid(path, "tools", "must be an object of tool names")
    out: dict[str, Mapping[str, FeaturePin]] = {}
    programs: dict[str, tuple[str, ...]] = {}
    for name, entry in sorted(tools.items()):
        if not _NAME.match(name) or not isinstance(entry, dict):
            raise _invalid(path, f"tools.{name}", "a lowercase name mapping to an object")
        names = entry.get("programs", [name])
        if not isinstance(names, list) or not all(
            isinstance(p, str) and _NAME.match(p) for p in names
        ):
            raise _invalid(path, f"tools.{name}.programs", "must be a list of program names")
        programs[name] = tuple(names)
        versions = entry.get("versions")
        if not isinstance(versions, dict) or not versions:
            raise _invalid(path, f"tools.{name}.versions", "must map versions to Features")
        out[name] = MappingProxyType(
            {
                version: _pin(
                    path, f"tools.{name}.versions.{version}", name, version, spec, tuple(names)
                )
                for version, spec in versions.items()
            }
        )
    return FeatureCatalog(path, base, MappingProxyType(out), MappingProxyType(programs))


def _pin(
    path: Path, where: str, name: str, version: str, spec: Any, programs: tuple[str, ...]
) -> FeaturePin:
    if not _VERSION.match(version):
        raise _invalid(path, where, "a version is digits and dots, e.g. 2.19.1")
    if not isinstance(spec, dict):
        raise _invalid(path, where, "must be an object with a feature")
    feature = spec.get("feature")
    if not isinstance(feature, str) or not _DIGEST.search(feature):
        raise _invalid(path, f"{where}.feature", "must be a reference pinned by @sha256:<hex>")
    options = spec.get("options", {})
    if not isinstance(options, dict) or not all(
        isinstance(k, str) and _OPTION.match(k) and isinstance(v, (str, bool)) and v is not None
        for k, v in options.items()
    ):
        raise _invalid(path, f"{where}.options", "must map option ids to strings or booleans")
    network = spec.get("network", [])
    if not isinstance(network, list) or not all(
        isinstance(h, str) and _HOST.match(h) for h in network
    ):
        raise _invalid(path, f"{where}.network", "must be a list of hosts (host or host:port)")
    unknown = sorted(set(spec) - {"feature", "options", "network"})
    if unknown:
        raise _invalid(path, where, f"unknown keys {', '.join(unknown)}")
    values = {k: str(v).lower() if isinstance(v, bool) else v for k, v in options.items()}
    frozen = MappingProxyType(dict(sorted(values.items())))
    hosts = tuple(sorted(set(network)))
    return FeaturePin(name, version, version, feature, frozen, programs, hosts)


def catalog_to_data(catalog: FeatureCatalog) -> dict[str, Any]:
    """The catalog as its file holds it (what `catalog list --format json`
    shows and `add_feature` writes)."""
    tools: dict[str, Any] = {}
    for name, versions in sorted(catalog.tools.items()):
        entries: dict[str, Any] = {}
        for version in sorted(versions, key=_key):
            pin = versions[version]
            entries[version] = {"feature": pin.feature}
            if pin.options:
                entries[version]["options"] = dict(pin.options)
            if pin.network:
                entries[version]["network"] = list(pin.network)
        tools[name] = {"programs": list(catalog.programs[name]), "versions": entries}
    data: dict[str, Any] = {"catalogVersion": 1}
    if catalog.runner_base is not None:
        data["runnerBase"] = catalog.runner_base
    data["tools"] = tools
    return data


def add_feature(
    path: Path,
    pin: FeaturePin,
    *,
    runner_base: str | None = None,
) -> FeatureCatalog:
    """Add `pin` (a Feature pinned by digest) to the catalog file at `path`,
    creating it when missing; written whole and renamed into place. A
    version already there with another Feature is `catalog.version_exists`."""
    if path.exists():
        catalog = load_feature_catalog(path)
        data = catalog_to_data(catalog)
    else:
        data = {"catalogVersion": 1, "tools": {}}
    if runner_base is not None:
        data["runnerBase"] = runner_base
    tool = data["tools"].setdefault(pin.tool, {"programs": [pin.tool], "versions": {}})
    if pin.programs:
        tool["programs"] = list(pin.programs)
    entry: dict[str, Any] = {"feature": pin.feature}
    if pin.options:
        entry["options"] = dict(pin.options)
    if pin.network:
        entry["network"] = list(pin.network)
    known = tool["versions"].get(pin.version)
    if known is not None and known != entry:
        raise FlightPlanError(
            "catalog.version_exists",
            f"{path}: {pin.tool} {pin.version} is already {known['feature']}",
            where=str(path),
            hint="a catalog version names one Feature for good; add a new version",
        )
    tool["versions"][pin.version] = entry
    checked = parse_feature_catalog(data, path)  # what is written must read back
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(catalog_to_data(checked), indent=2) + "\n", "utf-8")
    os.replace(temp, path)
    return checked


__all__ = [
    "FeatureCatalog",
    "FeaturePin",
    "add_feature",
    "catalog_to_data",
    "load_feature_catalog",
    "parse_feature_catalog",
]
