"""Registration of kind: sdk drivers (AIP-33 § Function refs, § Compatibility, § Security)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers import (
    DriverNotRunnable,
    DriverRegistrationError,
    SdkDriver,
    define_driver,
    defineDriver,
    load_driver,
)
from tests.drivers._ws import ECHO_MODULE, ECHO_TOOL, add_driver, sdk_driver, workspace, write


def register(tmp_path: Path, module: str = ECHO_MODULE, **kw: Any) -> SdkDriver:
    ws = workspace(tmp_path)
    path = add_driver(ws, sdk_driver(**kw), module)
    return load_driver(path)


def refused(tmp_path: Path, module: str = ECHO_MODULE, **kw: Any) -> DriverRegistrationError:
    with pytest.raises(DriverRegistrationError) as info:
        register(tmp_path, module, **kw)
    return info.value


def test_local_driver_registers_and_reports_import_time(tmp_path: Path) -> None:
    driver = register(tmp_path)
    assert driver.tool_ids == ("text.echo",)
    assert driver.key == "echo-sdk@1"
    report = driver.import_report
    assert report is not None and report.seconds >= 0 and not report.cached
    assert driver.describe()["import"]["module"] == "flightdeck_local_echo_sdk"


@pytest.mark.parametrize(
    ("ref", "expected_name"),
    [
        ("default", "main"),  # no `default` export: falls back to main
        ("echo", "echo"),
        ("kwOnly", "kw_only"),  # camelCase resolved in snake case
        ("images.create", "<lambda>"),  # nested namespace
        ("Client.images.create", "create"),  # constructor pattern
    ],
)
def test_aip33_function_refs_resolve_at_registration(
    tmp_path: Path, ref: str, expected_name: str
) -> None:
    driver = register(tmp_path, function_ref=ref)
    assert driver.bindings["text.echo"].ref.function.__name__ == expected_name


@pytest.mark.parametrize(
    ("ref", "part"),
    [
        ("nope", "`nope`"),
        ("images.crate", "`images.crate`"),
        ("Client.images.crate", "`Client.images.crate`"),
        ("Client.videos.create", "`Client.videos`"),
        ("CALLS", "`CALLS`"),
    ],
)
def test_aip33_unresolvable_ref_fails_registration_naming_the_part(
    tmp_path: Path, ref: str, part: str
) -> None:
    error = refused(tmp_path, function_ref=ref)
    assert error.code == "function_ref_unresolvable"
    assert part in error.message
    assert error.file is not None and error.file.endswith("DRIVER.md") and error.line


def test_aip33_constructor_pattern_builds_one_client_with_options_and_secrets(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    data = sdk_driver(
        function_ref="Client.images.create",
        auth={"state": {"env": ["ECHO_KEY"]}},
        metadata={"sdk": {"client_options": {"api_key": "${secrets.ECHO_KEY}", "region": "us"}}},
    )
    path = add_driver(ws, data, ECHO_MODULE)
    driver = load_driver(path, environ={"ECHO_KEY": "k-1"})
    module = driver.import_report.module  # type: ignore[union-attr]
    assert module.Client.made == [("k-1", "us")]
    # a second identity gets its own client; the default one is reused
    driver._function(driver.bindings["text.echo"], {"identity": "alice"})
    driver._function(driver.bindings["text.echo"], {"identity": "alice"})
    driver._function(driver.bindings["text.echo"], {})
    assert module.Client.made == [("k-1", "us"), ("k-1", "us")]


def test_constructor_secret_missing_refuses_naming_the_secret_not_a_value(tmp_path: Path) -> None:
    error = refused(
        tmp_path,
        function_ref="Client.images.create",
        auth={"state": {"env": ["ECHO_KEY"]}},
        metadata={"sdk": {"client_options": {"api_key": "${secrets.ECHO_KEY}"}}},
    )
    assert error.code == "function_ref_unresolvable"
    assert "secrets.ECHO_KEY" in error.message and "`Client`" in error.message


def test_constructor_exception_is_wrapped(tmp_path: Path) -> None:
    module = (
        ECHO_MODULE + "\nclass Bad:\n    def __init__(self):\n        raise RuntimeError('no')\n"
    )
    error = refused(tmp_path, module, function_ref="Bad.x")
    assert error.code == "function_ref_unresolvable"
    assert "RuntimeError: no" in error.message


@pytest.mark.parametrize("manager", ["npm", "pnpm", "yarn", "cargo", "go"])
def test_aip33_foreign_package_managers_are_not_runnable_with_a_reason(
    tmp_path: Path, manager: str
) -> None:
    with pytest.raises(DriverNotRunnable) as info:
        register(tmp_path, manager=manager, package="@host/x", install=[])
    assert info.value.code == "driver_not_runnable"
    assert "not runnable by this Python host" in info.value.reason
    assert info.value.pointer == "/package_manager"


def test_esm_import_style_is_not_runnable(tmp_path: Path) -> None:
    with pytest.raises(DriverNotRunnable, match="import_style 'esm'"):
        register(tmp_path, import_style="esm")


def test_non_sdk_kind_is_not_runnable(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    path = write(
        ws / ".drivers" / "h" / "DRIVER.md",
        "---\nname: H\nid: h-http\ndescription: d\nversion: 1.0.0\nkind: http\n"
        "implements:\n  - tool: text.echo\n    version: '^1'\n---\n",
    )
    with pytest.raises(DriverNotRunnable, match="kind 'http'"):
        load_driver(path)


def test_aip33_install_method_must_agree_with_package_manager(tmp_path: Path) -> None:
    error = refused(
        tmp_path,
        manager="pip",
        package="semantic-version",
        install=[{"method": "pip", "package": "x"}, {"method": "cargo", "package": "x"}],
    )
    assert error.code == "install_mismatch"
    assert error.pointer == "/install/1/method"
    assert error.line is not None


def test_local_driver_without_a_path_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, install=[{"method": "vendored"}])
    assert error.code == "install_mismatch"


def test_aip33_version_mismatch_names_found_and_wanted(tmp_path: Path) -> None:
    found = importlib.metadata.version("semantic-version")
    error = refused(
        tmp_path,
        manager="pip",
        package="semantic-version",
        install=[{"method": "pip", "package": "semantic-version"}],
        package_version="^99.0.0",
    )
    assert error.code == "version_mismatch"
    assert found in error.message and "^99.0.0" in error.message
    assert error.pointer == "/package_version"


@pytest.mark.parametrize("wanted", [">=2.0 <3", "^2.1.0", ">=2,<3", "~=2.10"])
def test_npm_style_comma_and_pep440_ranges_are_understood(tmp_path: Path, wanted: str) -> None:
    ws = workspace(tmp_path)
    data = sdk_driver(
        manager="pip",
        package="semantic-version",
        install=[{"method": "pip", "package": "semantic-version"}],
        function_ref="Version",
        package_version=wanted,
        entrypoint="semantic_version",
    )
    driver = load_driver(add_driver(ws, data))
    assert driver.import_report is not None
    assert driver.import_report.module_name == "semantic_version"


def test_version_check_range_is_checked_too(tmp_path: Path) -> None:
    error = refused(
        tmp_path,
        manager="pip",
        package="semantic-version",
        install=[],
        version_check={"cmd": "x", "parse": "(.*)", "range": "<1"},
    )
    assert error.code == "version_mismatch"
    assert error.pointer == "/version_check/range"


def test_package_not_installed(tmp_path: Path) -> None:
    error = refused(
        tmp_path, manager="pip", package="no-such-dist-xyz", install=[], package_version="^1.0.0"
    )
    assert error.code == "package_not_installed"


def test_template_syntax_error_refuses_with_the_template_location(tmp_path: Path) -> None:
    error = refused(tmp_path, sdk={"args_template": {"_0": "${input.text", "x": "${nope}"}})
    assert error.code == "template_error"
    codes = [d.code for d in error.diagnostics]
    assert codes == ["template_error", "template_error"]
    first = error.diagnostics[0]
    assert first.pointer == "/implements/0/metadata/sdk/args_template/_0"
    assert first.line is not None and first.file is not None


def test_undeclared_secret_reference_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, sdk={"args_template": {"k": "${secrets.NOT_DECLARED}"}})
    assert error.code == "template_error"
    assert "auth.state.env" in error.message


def test_aip30_schema_narrowing_is_non_extensive_drop_inputs_real_and_optional(
    tmp_path: Path,
) -> None:
    error = refused(tmp_path, entry={"schema_narrowing": {"drop_inputs": ["seed", "sead", "text"]}})
    assert [(d.code, d.pointer.rsplit("/", 1)[-1]) for d in error.diagnostics] == [
        ("drop_input_unknown", "1"),
        ("drop_input_required", "2"),
    ]


def test_tool_version_outside_the_entry_range_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, entry={"version": "^2.0.0"})
    assert error.code == "tool_version_mismatch"


def test_unknown_tool_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, tool="text.nothing")
    assert error.code == "tool_unresolvable"


def test_tool_that_widens_its_action_is_refused_through_the_narrowing_validator(
    tmp_path: Path,
) -> None:
    from tests.drivers._ws import ACTION, ECHO_TOOL

    ws = workspace(tmp_path, tool={**ECHO_TOOL, "risk_level": 1})
    write(
        ws / ".actions" / "text-count" / "ACTION.md",
        ACTION.replace("risk_level: 0", "risk_level: 2"),
    )
    with pytest.raises(DriverRegistrationError) as info:
        load_driver(add_driver(ws, sdk_driver(), ECHO_MODULE))
    assert info.value.code == "tool_unresolvable"
    assert "lowers_risk_level" in info.value.message


def test_schema_errors_refuse_before_anything_is_imported(tmp_path: Path) -> None:
    error = refused(tmp_path, "raise SystemExit('imported')\n", sdk={"function_ref": "a b"})
    assert error.code.startswith("schema")
    assert error.pointer == "/implements/0/metadata/sdk/function_ref"


def test_define_driver_takes_keywords_and_camel_case(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    write(ws / "pkgs" / "echomod" / "__init__.py", ECHO_MODULE)
    folder = ws / ".drivers" / "echo-sdk"
    data = sdk_driver()
    manager = data.pop("package_manager")
    driver = defineDriver(
        kind="sdk",
        packageManager=manager,
        base_dir=folder,
        workspace=ws,
        **{k: v for k, v in data.items() if k != "kind"},
    )
    assert driver.id == "echo-sdk"
    assert define_driver is defineDriver


def test_define_driver_reports_schema_problems(tmp_path: Path) -> None:
    with pytest.raises(DriverRegistrationError) as info:
        define_driver({"kind": "sdk", "id": "x"})
    assert all(d.code.startswith("schema") for d in info.value.diagnostics)
    assert len(info.value.diagnostics) > 1


IMPORT_EFFECTS = {
    "file_write": "open(__file__ + '.out', 'w').close()\n",
    "subprocess": "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'])\n",
    "network": (
        "import socket\ns = socket.socket()\ns.settimeout(0.2)\n"
        "try:\n    s.connect(('127.0.0.1', 9))\nexcept OSError:\n    pass\nfinally:\n"
        "    s.close()\n"
    ),
}


@pytest.mark.parametrize("effect", sorted(IMPORT_EFFECTS))
def test_aip33_import_side_effects_are_refused_naming_what_happened(
    tmp_path: Path, effect: str
) -> None:
    error = refused(tmp_path, IMPORT_EFFECTS[effect] + ECHO_MODULE)
    assert error.code == "import_side_effect"
    assert effect in error.message


def test_declared_egress_allows_connections_at_import(tmp_path: Path) -> None:
    driver = register(
        tmp_path, IMPORT_EFFECTS["network"] + ECHO_MODULE, network={"egress": ["127.0.0.1"]}
    )
    assert driver.egress == ("127.0.0.1",)


def test_the_audit_hook_is_inert_outside_a_driver_import(tmp_path: Path) -> None:
    register(tmp_path)
    from flightdeck.guard import layers

    assert layers() == ()
    (tmp_path / "after.txt").write_text("writes after registration are not watched")


def test_import_failure_is_reported(tmp_path: Path) -> None:
    error = refused(tmp_path, "raise ImportError('missing native lib')\n")
    assert error.code == "package_import_failed"
    assert "missing native lib" in error.message


def test_one_process_wide_audit_hook_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from flightdeck.guard import Policy, _hook, active, enter, leave

    added: list[object] = []
    monkeypatch.setattr(_hook, "_installed", False)
    monkeypatch.setattr(_hook.sys, "addaudithook", added.append)
    for _ in range(3):
        with active(Policy.watch()):
            pass
    token = enter(Policy.allow_hosts((), owner="driver x", limit="network.egress"))
    leave(token)
    assert added == [_hook._hook]


def test_aip33_secret_echoed_by_a_constructor_is_scrubbed_from_the_refusal(
    tmp_path: Path,
) -> None:
    canary = "sk-ctor-canary-5566778899"
    module = ECHO_MODULE + (
        "\nclass Leaky:\n    def __init__(self, api_key=None):\n"
        "        raise ValueError('rejected key ' + str(api_key))\n"
    )
    ws = workspace(tmp_path)
    data = sdk_driver(
        function_ref="Leaky.run",
        auth={"state": {"env": ["LEAKY_KEY"]}},
        metadata={"sdk": {"client_options": {"api_key": "${secrets.LEAKY_KEY}"}}},
    )
    with pytest.raises(DriverRegistrationError) as info:
        load_driver(add_driver(ws, data, module), environ={"LEAKY_KEY": canary})
    assert "rejected key ***" in info.value.message
    assert canary not in repr(info.value.to_dict())


def test_binding_the_same_tool_twice_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    data = sdk_driver()
    data["implements"] = data["implements"] * 2
    with pytest.raises(DriverRegistrationError) as info:
        load_driver(add_driver(ws, data, ECHO_MODULE))
    assert info.value.code == "duplicate_tool"
    assert info.value.pointer == "/implements/1/tool"


def test_aip30_mapping_is_not_applied_by_sdk_drivers_and_says_so(tmp_path: Path) -> None:
    driver = register(tmp_path, entry={"mapping": {"text": "prompt"}})
    assert driver.notes and driver.notes[0].startswith("mapping_ignored at /implements/0/mapping")


def test_aip33_client_constructor_side_effects_are_refused_too(tmp_path: Path) -> None:
    module = ECHO_MODULE + (
        "\nclass Writer:\n    def __init__(self):\n"
        "        open(__file__ + '.state', 'w').close()\n"
        "        self.run = lambda value: value\n"
    )
    error = refused(tmp_path, module, function_ref="Writer.run")
    assert error.code == "import_side_effect"
    assert "building its clients" in error.message and "file_write" in error.message


def test_bound_tool_action_resolves_from_a_library_on_the_search_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TOOL whose action lives in an action library (not the workspace's
    .actions/) still binds: the driver layer searches the same library path
    as validate (FLIGHTDECK_LIBRARY_PATH, [library] paths)."""
    library = Path(__file__).resolve().parents[1] / "data" / "corpus" / "libraries" / "standard"
    monkeypatch.setenv("FLIGHTDECK_LIBRARY_PATH", str(library))
    tool = {**ECHO_TOOL, "implements": "@agentik/actions-standard/storage-read"}
    ws = workspace(tmp_path / "ws", tool=tool)
    driver = load_driver(add_driver(ws, sdk_driver(), ECHO_MODULE))
    assert "text.echo" in driver.tool_ids
