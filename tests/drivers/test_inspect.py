"""`inspect_driver`: the safety view of a DRIVER.md, from manifests only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers import DriverInspectReport, inspect_driver
from tests.drivers._ws import ECHO_TOOL, add_driver, sdk_driver, workspace, write

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ROOT / "examples" / "drivers" / ".drivers"
DIGEST = ROOT / "examples" / "flightplans" / "metrics-digest" / ".drivers"
STANDARD = ROOT / "tests" / "data" / "corpus" / "libraries" / "standard"
EXAMPLES = sorted([*DRIVERS.iterdir(), *DIGEST.iterdir()])


def errors(report: DriverInspectReport) -> list[tuple[str, str]]:
    return [(d.code, d.pointer) for d in report.diagnostics if d.is_error]


@pytest.mark.parametrize("folder", EXAMPLES, ids=[f.name for f in EXAMPLES])
def test_every_example_driver_inspects_clean(folder: Path) -> None:
    report = inspect_driver(folder)
    assert report.ok, errors(report)
    assert report.id == folder.name and report.entries
    assert all(e.tool_id and e.fields and e.binding["function_ref"] for e in report.entries)


PROBE = """
import json, sys
from flightdeck.drivers import inspect_driver, load_driver
def local():
    return sorted(m for m in sys.modules if m.startswith(("flightdeck_local_", "textstats")))
for folder in sys.argv[1:]:
    inspect_driver(folder)
after_inspect = local()
load_driver(sys.argv[1])  # the control: registering does import it
print(json.dumps([after_inspect, local()]))
"""


def test_inspect_does_not_import_the_package() -> None:
    """inspect reads manifests only, like validate: the package never lands in sys.modules.
    Run in a fresh interpreter so other tests' imports cannot hide an import."""
    folders = [str(DRIVERS / "textstats-local"), *(str(f) for f in EXAMPLES)]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *folders], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    after_inspect, after_load = json.loads(proc.stdout)
    assert after_inspect == []
    assert after_load  # the probe can see an import when there is one


def test_identity_and_binding_of_textstats_local() -> None:
    report = inspect_driver(DRIVERS / "textstats-local" / "DRIVER.md")
    assert report.identity == {
        "id": "textstats-local",
        "kind": "sdk",
        "version": "1.0.0",
        "package": "textstats",
        "package_manager": "local",
        "version_range": None,
        "policy_tags": ["self-hosted", "pii-safe", "no-third-party"],
        "region": ["self-hosted"],
        "egress": [],
    }
    (entry,) = report.entries
    assert entry.tool_id == "text.stats" and entry.tool_ref == "../../.tools/text-stats/TOOL.md"
    assert entry.tool_file is not None and entry.tool_file.endswith("text-stats/TOOL.md")
    assert entry.binding == {
        "function_ref": "countWords",
        "args_template": True,
        "result_extract": None,
        "streaming": False,
    }
    as_json: dict[str, Any] = report.to_dict()
    assert as_json["kind"] == "driver" and as_json["ok"] is True
    assert as_json["implements"][0]["view"]["approval"] == {"value": "auto", "from": "default"}


def test_openai_example_shows_its_action_range_and_egress() -> None:
    report = inspect_driver(DRIVERS / "openai-sdk")
    assert report.identity["version_range"] == ">=1.0"
    assert report.identity["egress"] == ["api.openai.com"]
    (entry,) = report.entries
    assert entry.action is not None and entry.action["id"] == "llm:chat"
    assert entry.origins["risk_level"] == "action" and entry.fields["risk_level"] == 1
    assert entry.binding["result_extract"] == "$.choices[0].message.content"


def test_streaming_binding_is_reported() -> None:
    (entry,) = inspect_driver(DRIVERS / "wordstream-sdk").entries
    assert entry.binding["streaming"] is True


def test_metrics_digest_driver_has_one_view_per_entry() -> None:
    report = inspect_driver(DIGEST / "metrics")
    assert [e.index for e in report.entries] == [0, 1]
    assert [e.binding["function_ref"] for e in report.entries] == ["list_metrics", "query_series"]


def _narrowing_ws(root: Path, entry: dict[str, Any] | None = None) -> Path:
    tool = {**ECHO_TOOL, "approval": "always"}  # the tool narrows its action's "auto"
    ws = workspace(root, tool=tool)
    return add_driver(ws, sdk_driver(entry=entry))


def test_aip39_entry_inherits_the_tools_merged_view(tmp_path: Path) -> None:
    """AIP-39: an implementor INHERITS; the entry's view is the tool's merged view,
    each value credited to the action or to the tool's narrowing."""
    report = inspect_driver(_narrowing_ws(tmp_path))
    assert report.ok, errors(report)
    (entry,) = report.entries
    assert entry.action is not None and entry.action["id"] == "text:count"
    assert (entry.fields["approval"], entry.origins["approval"]) == ("always", "tool")
    assert (entry.fields["risk_level"], entry.origins["risk_level"]) == (0, "action")
    assert entry.origins["category"] == "action"


def test_aip39_declared_entry_fields_narrow_over_the_tool(tmp_path: Path) -> None:
    """AIP-30 entries declare no safety fields (the schema says so), but what an
    entry does declare is merged over the tool's view, with its origin."""
    path = _narrowing_ws(tmp_path, {"risk_level": 2, "approval": "always"})
    report = inspect_driver(path)
    assert {code for code, _ in errors(report)} == {"schema.unknown_field"}
    (entry,) = report.entries
    assert (entry.fields["risk_level"], entry.origins["risk_level"]) == (2, "entry")
    assert entry.origins["approval"] == "tool+entry"


def test_aip39_must_not_widen_an_entry_relaxing_the_tool_is_an_error(tmp_path: Path) -> None:
    """AIP-39: MUST NOT widen; relaxing the tool's narrowing is reported at file:line."""
    path = _narrowing_ws(tmp_path, {"approval": "auto"})
    report = inspect_driver(path)
    assert ("relaxes_approval", "/implements/0/approval") in errors(report)
    (diag,) = [d for d in report.diagnostics if d.code == "relaxes_approval"]
    assert diag.file == str(path) and diag.line is not None
    assert diag.hint is not None and "tool text.echo's merged view" in diag.hint
    assert report.entries[0].fields == {}  # no view is shown for a violating entry


def test_unresolvable_tool_is_a_located_diagnostic(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    path = add_driver(ws, sdk_driver(tool="no.such.tool"))
    report = inspect_driver(path)
    assert errors(report) == [("tool_unresolvable", "/implements/0/tool")]
    assert report.diagnostics[-1].line is not None
    (entry,) = report.entries
    assert entry.tool_id is None and entry.binding["function_ref"] == "echo"


def test_template_error_is_a_located_diagnostic(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    path = add_driver(ws, sdk_driver(sdk={"args_template": {"text": "${input.text"}}))
    report = inspect_driver(path)
    codes = errors(report)
    assert codes and codes[0][0] == "template_error"
    assert codes[0][1].startswith("/implements/0/metadata/sdk/args_template")
    assert all(d.line is not None for d in report.diagnostics)


def test_unparseable_driver_reports_and_does_not_raise(tmp_path: Path) -> None:
    path = write(tmp_path / ".drivers" / "bad" / "DRIVER.md", "---\nid: [unclosed\n---\n")
    report = inspect_driver(path)
    assert not report.ok and report.id is None and report.entries == ()


def test_libraries_are_searched_for_the_tools_action(tmp_path: Path) -> None:
    """A tool whose action lives only in a library resolves with `libraries=`."""
    tool = {**ECHO_TOOL, "implements": "@agentik/actions-standard/storage-push@^1"}
    path = add_driver(workspace(tmp_path, tool=tool), sdk_driver())
    assert errors(inspect_driver(path)) == [("tool_unresolvable", "/implements/0/tool")]
    report = inspect_driver(path, libraries=[STANDARD])
    assert report.ok, errors(report)
    assert report.entries[0].action is not None
    assert report.entries[0].action["id"] == "storage:push"
