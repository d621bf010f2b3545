"""Issue 32: a tools-only plan frozen to one composed image and launched in it.

A busybox runner base and two Features (one with an option) are pushed to a
real registry on loopback; freeze composes them without a daemon, the lock
pins the composed digest, and launch runs the steps inside that image: both
tools at their pinned versions, nothing of the host. Freezing again in
another home gives the same digest; a changed byte, a moved tag, a failing
install.sh, one that leaves what no layer may carry or tries the network,
are each refused with their own code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    OciResolver,
    freeze_plan,
    generate_keys,
    load_feature_catalog,
)
from flightdeck.launch import FeatureComposer, LaunchError, bwrap_path
from flightdeck.launch.image._cache import ImageCache
from tests.flightplan import _registry

from . import _features, _image
from .conftest import Harness, write_plan

pytestmark = [
    pytest.mark.skipif(bwrap_path() is None, reason="needs bubblewrap: apt-get install bubblewrap"),
    pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT),
    pytest.mark.skipif(not _image.busybox_available(), reason=_image.INSTALL_HINT),
]


@dataclass
class Registry:
    address: str
    folder: Path
    base: str  # the runner base, tag and digest

    def feature(self, name: str, tarball: bytes, tag: str = "1") -> str:
        digest = _features.push_feature(self.address, f"features/{name}", tag, tarball)
        return f"{self.address}/features/{name}:{tag}@{digest}"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    folder = tmp_path_factory.mktemp("registry")
    with _registry.running_registry(folder) as address:
        digest = _image.push(address, "flightdeck/runner", "1", _features.runner_layers())
        yield Registry(address, folder, f"{address}/flightdeck/runner:1@{digest}")


def _plan(folder: Path, tools: list[str], host_only: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        name="composed-plan",
        environment={"tools": tools},
        outputs=[
            {
                "name": "report.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "report.txt"},
            }
        ],
        steps=[
            {
                "id": "hello",
                "kind": "tool",
                "command": ["hello"],
                "collect": {"path": "/flightdeck/out"},
                "outputs": ["files"],
            },
            {
                "id": "greet",
                "kind": "tool",
                "command": ["greet", "/usr/bin/python3", str(host_only), "/etc/motd"],
                "collect": {"path": "/flightdeck/out"},
                "outputs": ["files"],
                "materializesOutput": "report.txt",
            },
        ],
    )


def _catalog(registry: Registry, folder: Path, **override: str) -> Path:
    hello = override.get("hello") or registry.feature("hello", _features.hello_feature())
    greet = override.get("greet") or registry.feature("greet", _features.greet_feature())
    return _features.write_catalog(
        folder / "catalog.json",
        registry.base,
        {"hello": ("1.2.0", hello, {}), "greet": ("2.0.1", greet, {"greeting": "howdy"})},
    )


def _freeze(plan: Path, catalog: Path, keys: Path) -> Any:
    if not (keys / "flightdeck.key").exists():
        generate_keys(keys)
    resolver = OciResolver()
    try:
        return freeze_plan(
            plan,
            signing_key=keys / "flightdeck.key",
            version="1.0.0",
            resolver=resolver,
            tools=load_feature_catalog(catalog),
            composer=FeatureComposer(),
        )
    finally:
        resolver.close()


def test_a_tools_only_plan_runs_inside_its_composed_image(
    harness: Harness,
    registry: Registry,
    tmp_path: Path,
    fd_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host_only = tmp_path / "host-only.txt"
    host_only.write_text("the host's\n")
    catalog = _catalog(registry, tmp_path)
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2.x"], host_only)
    outcome = _freeze(plan, catalog, tmp_path / "keys")
    lock = outcome.frozen.lock
    [image] = lock["resolvedImages"]
    assert image["ref"] == f"{registry.base}+tools(greet@2.0.1,hello@1.2.0)"
    assert image["localTag"].startswith("flightdeck/composed:")
    assert [(f["tool"], f["version"]) for f in image["features"]] == [
        ("greet", "2.0.1"),
        ("hello", "1.2.0"),
    ]
    assert lock["resolvedCapabilitySet"] == ["greet@2.0.1", "hello@1.2.0"]
    pinned = f"flightdeck.local/composed@{image['digest']}"
    assert [e["digest"] for e in ImageCache().entries() if e["pinned"] == pinned]
    # One layer per Feature; bubblewrap's mount points (the base has no
    # /proc, /dev or /tmp) are not in them.
    folder = ImageCache().folder(pinned)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(manifest["layers"]) == 3
    for layer in manifest["layers"][1:]:
        with tarfile.open(folder / "blobs" / "sha256" / layer["digest"][7:]) as tar:
            names = tar.getnames()
        assert names and not [n for n in names if n.split("/")[0] in ("proc", "dev", "tmp")]
    _umoci_reads(folder, tmp_path / "bundle")

    result = harness.run("composed-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert result.status == "completed", result.error
    assert (tmp_path / "out" / "report.txt").read_text().splitlines() == [
        "greet 2.0.1 says howdy",
        "hello 1.2.0",
        "/usr/bin/python3 absent",
        f"{host_only} absent",
        "/etc/motd absent",  # the greet Feature removed it: a whiteout
    ]
    network = sorted(harness.records("launch.tool_network"), key=lambda r: str(r["step"]))
    assert [r["tool_version"] for r in network] == [
        {"tool": "greet", "version": "2.0.1"},
        {"tool": "hello", "version": "1.2.0"},
    ]
    assert network[0]["environment"] == f"image {pinned}"
    run = harness.records("launch.run")[0]
    assert run["image"]["pinned"] == pinned
    assert run["image"]["features"][1]["feature"].startswith(f"{registry.address}/features/hello@")

    # Another home (nothing cached, keys of its own): the same digest.
    monkeypatch.setenv("FLIGHTDECK_HOME", str(tmp_path / "home2"))
    again = _freeze(plan, catalog, tmp_path / "keys2")
    assert again.frozen.lock["resolvedImages"][0]["digest"] == image["digest"]


def _umoci_reads(folder: Path, bundle: Path) -> None:
    """The cached composed image is a standard OCI layout: umoci (a tool of
    its own) lists its layers and unpacks it to the tools the steps use."""
    if shutil.which("umoci") is None:
        pytest.skip("needs umoci to read the layout: apt-get install umoci")
    stat = subprocess.run(
        ["umoci", "stat", "--json", "--image", f"{folder}:latest"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert stat.returncode == 0, stat.stderr
    assert isinstance(json.loads(stat.stdout), dict)  # the base keeps no history to list
    done = subprocess.run(
        ["umoci", "unpack", "--image", f"{folder}:latest", str(bundle)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (bundle / "rootfs" / "usr" / "local" / "bin" / "greet").read_text() == _features.GREET
    assert not (bundle / "rootfs" / "etc" / "motd").exists()  # the whiteout applied
    ImageCache().verify(f"flightdeck.local/composed@sha256:{folder.name}")  # umoci changed nothing


def test_unknown_tools_and_versions_are_located_lint_errors(
    registry: Registry, tmp_path: Path
) -> None:
    catalog = _catalog(registry, tmp_path)
    plan = _plan(tmp_path / "src", ["hello@3", "nope@1"], tmp_path)
    with pytest.raises(FlightPlanError) as caught:
        _freeze(plan, catalog, tmp_path / "keys")
    assert caught.value.code == "freeze.invalid_plan"
    found = {(d.code, d.pointer, d.line is not None) for d in caught.value.diagnostics}
    assert ("flightplan.unknown_tool_version", "/aileron/environment/tools/0", True) in found
    assert ("flightplan.unknown_tool", "/aileron/environment/tools/1", True) in found


def _refused(registry: Registry, tmp_path: Path, **override: str) -> LaunchError:
    catalog = _catalog(registry, tmp_path, **override)
    plan = _plan(tmp_path / "src", ["hello@1.2.0", "greet@2"], tmp_path)
    with pytest.raises(LaunchError) as caught:
        _freeze(plan, catalog, tmp_path / "keys")
    assert not [e for e in ImageCache().entries() if "composed" in str(e["pinned"])]
    return caught.value


def test_a_changed_byte_in_a_feature_is_refused(registry: Registry, tmp_path: Path) -> None:
    tarball = _features.feature_tar("hello", "1.2.0", "#!/bin/sh\necho changed-byte\n")
    ref = registry.feature("hello", tarball, tag="flip")
    stored = _features.blob_file(registry.folder, tarball)
    data = bytearray(stored.read_bytes())
    data[600] ^= 0x01
    stored.write_bytes(bytes(data))
    try:
        assert _refused(registry, tmp_path, hello=ref).code == "compose.feature_mismatch"
    finally:
        data[600] ^= 0x01
        stored.write_bytes(bytes(data))


def test_a_moved_tag_is_refused(registry: Registry, tmp_path: Path) -> None:
    first = registry.feature("hello", _features.hello_feature(), tag="moving")
    registry.feature("hello", _features.hello_feature("#!/bin/sh\necho other\n"), tag="moving")
    assert _refused(registry, tmp_path, hello=first).code == "compose.feature_tag_moved"


@pytest.mark.parametrize(
    ("install", "code", "said"),
    [
        ("#!/bin/sh\necho cannot >&2\nexit 3\n", "compose.install_failed", "status 3: cannot"),
        # The Feature's own folder is read-only, the host is not there at all.
        ("#!/bin/sh\necho x > ./install.sh\n", "compose.install_failed", "Read-only"),
        (
            "#!/bin/sh\nln -s ../../../../etc/shadow /usr/local/bin/x\n",
            "compose.unsafe_change",
            "points outside the image",
        ),
        ("#!/bin/sh\nmkfifo /usr/local/bin/pipe\n", "compose.unsafe_change", "fifo"),
        (
            "#!/bin/sh\nmkdir -p /deep/" + "d/" * 130 + "\n",
            "compose.unsafe_change",
            "nested deeper than 128",
        ),
        (
            "#!/bin/sh\nwget -q -O- http://{registry}/v2/\n",
            "compose.network_refused",
            "tried the network",
        ),
    ],
)
def test_a_hostile_install_is_refused(
    registry: Registry, tmp_path: Path, install: str, code: str, said: str
) -> None:
    tarball = _features.hello_feature(install.format(registry=registry.address))
    error = _refused(registry, tmp_path, hello=registry.feature("hello", tarball, tag="bad"))
    assert error.code == code, error
    assert said in error.message


def test_an_install_cannot_write_to_the_host(registry: Registry, tmp_path: Path) -> None:
    """What install.sh writes to a host path lands in the image's tree (and
    its layer), never on the host. (Not under /tmp: the install's /tmp is a
    tmpfs of its own.)"""
    target = Path("/var/tmp") / f"flightdeck-compose-{tmp_path.name}" / "written"
    script = f"#!/bin/sh\nset -e\nmkdir -p {target.parent}\necho x > {target}\n"
    ref = registry.feature("hello", _features.hello_feature(script), tag="host")
    catalog = _catalog(registry, tmp_path, hello=ref)
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path)
    lock = _freeze(plan, catalog, tmp_path / "keys").frozen.lock
    assert not target.exists()
    folder = ImageCache().folder(f"flightdeck.local/composed@{lock['resolvedImages'][0]['digest']}")
    assert (folder / "rootfs" / str(target).lstrip("/")).read_text() == "x\n"


def test_the_catalog_file_is_checked(tmp_path: Path) -> None:
    bad = tmp_path / "catalog.json"
    for text in (
        "[]",
        json.dumps(
            {"catalogVersion": 1, "tools": {"x": {"versions": {"1": {"feature": "a/b:1"}}}}}
        ),
        json.dumps({"catalogVersion": 1, "tools": {"X": {}}}),
        "{",
    ):
        bad.write_text(text)
        with pytest.raises(FlightPlanError) as caught:
            load_feature_catalog(bad)
        assert caught.value.code == "catalog.invalid"
    with pytest.raises(FlightPlanError) as missing:
        load_feature_catalog(tmp_path / "absent.json")
    assert missing.value.code == "catalog.unreadable"


def _cli(*args: str) -> Any:
    from click.testing import CliRunner

    from flightdeck.cli._main import cli

    return CliRunner().invoke(cli, list(args))


def test_catalog_add_pins_by_digest_then_list_and_show(registry: Registry, tmp_path: Path) -> None:
    catalog = tmp_path / "tools.catalog.json"
    ref = registry.feature("greet", _features.greet_feature(), tag="2.0.1")
    tagged = ref.partition("@")[0]
    added = _cli(
        "catalog",
        "add",
        "greet",
        "2.0.1",
        tagged,
        "--option",
        "greeting=yo",
        "--runner-base",
        registry.base.partition("@")[0],
        "--catalog",
        str(catalog),
        "--format",
        "json",
    )
    assert added.exit_code == 0, added.output
    assert json.loads(added.output)["feature"] == ref  # the tag and the digest it names
    from tests.cli.test_json_casing import non_snake_keys

    assert non_snake_keys(json.loads(added.output)) == []
    loaded = load_feature_catalog(catalog)
    assert loaded.runner_base == registry.base
    assert dict(loaded.tools["greet"]["2.0.1"].options) == {"greeting": "yo"}

    listed = _cli("catalog", "list", "--catalog", str(catalog), "--format", "json")
    assert json.loads(listed.output)["tools"]["greet"]["programs"] == ["greet"]
    shown = _cli("catalog", "show", "greet", "--catalog", str(catalog))
    assert f"2.0.1: {ref}  [greeting=yo]" in shown.output

    # A Feature composition would refuse never enters the catalog.
    bad = _cli(
        "catalog",
        "add",
        "greet",
        "2.0.2",
        tagged,
        "--option",
        "colour=red",
        "--catalog",
        str(catalog),
    )
    assert bad.exit_code == 1 and "[compose.bad_option]" in bad.output
    again = _cli(
        "catalog",
        "add",
        "greet",
        "2.0.1",
        registry.feature("hello", _features.hello_feature(), tag="x").partition("@")[0],
        "--catalog",
        str(catalog),
    )
    assert again.exit_code == 1 and "[catalog.version_exists]" in again.output
    assert set(load_feature_catalog(catalog).tools["greet"]) == {"2.0.1"}
    missing = _cli("catalog", "show", "nope", "--catalog", str(catalog))
    assert missing.exit_code == 1 and "[catalog.unknown_tool]" in missing.output


def test_a_moved_base_tag_is_refused(registry: Registry, tmp_path: Path) -> None:
    first = _image.push(registry.address, "flightdeck/runner", "moving", _features.runner_layers())
    layers = [*_features.runner_layers(), (_image.layer([("etc/extra", "file", "x\n")]), False)]
    _image.push(registry.address, "flightdeck/runner", "moving", layers)
    catalog = _catalog(registry, tmp_path)
    data = json.loads(catalog.read_text())
    data["runnerBase"] = f"{registry.address}/flightdeck/runner:moving@{first}"
    catalog.write_text(json.dumps(data))
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path)
    with pytest.raises(LaunchError) as caught:
        _freeze(plan, catalog, tmp_path / "keys")
    assert caught.value.code == "compose.base_tag_moved"


def test_a_composed_pin_missing_from_the_cache_is_not_pulled(
    harness: Harness, registry: Registry, tmp_path: Path
) -> None:
    catalog = _catalog(registry, tmp_path)
    _freeze(_plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path), catalog, tmp_path / "keys")
    ImageCache().prune()
    result = harness.run("composed-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "image.composed_missing", result.error


def test_the_commands_freeze_and_dry_run_a_composed_plan(
    registry: Registry, tmp_path: Path, fd_home: Path
) -> None:
    from tests.cli._run import run

    catalog = _catalog(registry, tmp_path)
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path)
    assert run("keys", "generate", "--out", str(tmp_path / "keys")).returncode == 0
    lint = run("lint", "--catalog", str(catalog), str(plan))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    frozen = run(
        "freeze",
        str(plan),
        "--catalog",
        str(catalog),
        "--version",
        "1.0.0",
        "--signing-key",
        str(tmp_path / "keys" / "flightdeck.key"),
        cwd=tmp_path,
    )
    assert frozen.returncode == 0, frozen.stderr
    assert "  composed image sha256:" in frozen.stdout
    assert f"    hello@1.2.0: {registry.address}/features/hello@sha256:" in frozen.stdout
    shown = run("launch", "composed-plan@1.0.0", "--dry-run", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    image = json.loads(shown.stdout)["image"]
    assert image["pinned"].startswith("flightdeck.local/composed@sha256:")
    assert [(f["tool"], f["version"]) for f in image["features"]] == [
        ("greet", "2.0.1"),
        ("hello", "1.2.0"),
    ]
    text = run("launch", "composed-plan@1.0.0", "--dry-run", cwd=tmp_path)
    assert f"  image: {image['pinned']}" in text.stdout
    assert f"    composed from {registry.base}+tools(greet@2.0.1,hello@1.2.0)" in text.stdout


def test_a_feature_of_two_layers_is_refused(registry: Registry, tmp_path: Path) -> None:
    import hashlib

    import httpx

    tarball = _features.hello_feature()
    base = f"http://{registry.address}"
    with httpx.Client(timeout=20) as client:
        config = _registry._upload(client, base, "features/two", b"{}")
        layer = _registry._upload(client, base, "features/two", tarball)
        entry = {"mediaType": _features.FEATURE_MEDIA, "digest": layer, "size": len(tarball)}
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {
                    "mediaType": "application/vnd.devcontainers",
                    "digest": config,
                    "size": 2,
                },
                "layers": [entry, entry],
            }
        ).encode()
        put = client.put(
            f"{base}/v2/features/two/manifests/1",
            content=manifest,
            headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert put.status_code == 201
    ref = f"{registry.address}/features/two@sha256:{hashlib.sha256(manifest).hexdigest()}"
    error = _refused(registry, tmp_path, hello=ref)
    assert error.code == "compose.bad_feature" and "2 layers" in error.message


def test_verify_judges_the_tools_by_the_features_the_lock_pins(
    registry: Registry, tmp_path: Path
) -> None:
    """A lock whose Features do not cover the declared tools (re-signed by
    the same key) no longer validates."""
    from flightdeck.flightplan import KeyPair, verify_plan
    from tests.flightplan._resign import resign

    catalog = _catalog(registry, tmp_path)
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path)
    outcome = _freeze(plan, catalog, tmp_path / "keys")
    assert verify_plan("composed-plan@1.0.0").plan.name == "composed-plan"

    def drop_hello(data: dict[str, Any]) -> None:
        image = data["aileron"]["lock"]["resolvedImages"][0]
        image["features"] = [f for f in image["features"] if f["tool"] != "hello"]

    keys = tmp_path / "keys"
    pair = KeyPair(keys / "flightdeck.key", keys / "flightdeck.pub", "")
    resign(outcome.stored.path, pair, drop_hello)
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(outcome.stored.path / "SKILL.md")
    assert caught.value.code == "verify.invalid_plan"
    assert "'hello'" in caught.value.message


def test_depends_on_orders_the_install_and_a_cycle_is_refused(
    registry: Registry, tmp_path: Path
) -> None:
    """greet (first by name) dependsOn hello, so hello installs first: greet's
    install.sh finds it. With hello also installing after greet: a cycle."""
    hello_key = f"{registry.address}/features/hello"
    check = "test -x /usr/local/bin/hello || { echo hello first >&2; exit 9; }\n"
    greet = _features.feature_tar(
        "greet",
        "2.0.1",
        _features.GREET_INSTALL.replace("set -e\n", "set -e\n" + check),
        {"greet.sh": _features.GREET},
        {"greeting": {"type": "string", "default": "hi"}},
        depends_on={hello_key: {}},
    )
    greet_ref = registry.feature("greet", greet, tag="needs-hello")
    catalog = _catalog(registry, tmp_path, greet=greet_ref)
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path)
    lock = _freeze(plan, catalog, tmp_path / "keys").frozen.lock
    assert [f["tool"] for f in lock["resolvedImages"][0]["features"]] == ["hello", "greet"]

    hello = _features.feature_tar(
        "hello",
        "1.2.0",
        "#!/bin/sh\nexit 0\n",
        {"hello.sh": _features.HELLO},
        installs_after=[f"{registry.address}/features/greet"],
    )
    hello_ref = registry.feature("hello", hello, tag="after-greet")
    (tmp_path / "cycle").mkdir()
    cycle = _catalog(registry, tmp_path / "cycle", greet=greet_ref, hello=hello_ref)
    with pytest.raises(LaunchError) as caught:
        _freeze(plan, cycle, tmp_path / "keys")
    assert caught.value.code == "compose.feature_cycle"
    assert "dependsOn" in caught.value.message and "installsAfter" in caught.value.message


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _with_network(catalog: Path, tool: str, hosts: list[str]) -> Path:
    data = json.loads(catalog.read_text())
    for entry in data["tools"][tool]["versions"].values():
        entry["network"] = hosts
    catalog.write_text(json.dumps(data))
    return catalog


def test_a_catalog_entry_may_name_the_hosts_its_install_downloads_from(
    registry: Registry, tmp_path: Path
) -> None:
    """`network` in a catalog entry: install.sh reaches those hosts (through
    the egress proxy) and no other; the entry is part of the composition's
    inputs, so naming hosts changes the composed image's tag."""
    fetch = (
        "#!/bin/sh\nset -e\nmkdir -p /usr/local/share\n"
        f"wget -q -O /usr/local/share/fetched http://{registry.address}/v2/\n"
    )
    ref = registry.feature("hello", _features.hello_feature(fetch), tag="net")
    plan = _plan(tmp_path / "src", ["hello@1", "greet@2"], tmp_path)
    offline = _catalog(registry, _folder(tmp_path / "offline"), hello=ref)
    with pytest.raises(LaunchError) as refused:
        _freeze(plan, offline, tmp_path / "keys")
    assert refused.value.code == "compose.network_refused"
    assert "allows none" in refused.value.message
    allowed = _with_network(_catalog(registry, _folder(tmp_path / "net"), hello=ref), "hello",
                            [registry.address])  # fmt: skip
    lock = _freeze(plan, allowed, tmp_path / "keys").frozen.lock
    digest = lock["resolvedImages"][0]["digest"]
    rootfs = ImageCache().folder(f"flightdeck.local/composed@{digest}") / "rootfs"
    assert (rootfs / "usr/local/share/fetched").read_text().strip() == "{}"
    # Another host is still refused, naming what the entry allows.
    elsewhere = fetch.replace(registry.address, "127.0.0.1:9")
    other = registry.feature("hello", _features.hello_feature(elsewhere), tag="elsewhere")
    narrow = _with_network(_catalog(registry, _folder(tmp_path / "narrow"), hello=other), "hello",
                           [registry.address])  # fmt: skip
    with pytest.raises(LaunchError) as caught:
        _freeze(plan, narrow, tmp_path / "keys")
    assert caught.value.code == "compose.network_refused"
    assert f"allows only {registry.address}" in caught.value.message


def test_a_network_entry_is_checked_where_the_catalog_is_read(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    entry = {"feature": "r.example/f/x:1@sha256:" + "a" * 64, "network": ["bad host"]}
    catalog.write_text(
        json.dumps({"catalogVersion": 1, "tools": {"x": {"versions": {"1.0.0": entry}}}})
    )
    with pytest.raises(FlightPlanError) as caught:
        load_feature_catalog(catalog)
    assert caught.value.code == "catalog.invalid"
    assert "tools.x.versions.1.0.0.network" in caught.value.message
