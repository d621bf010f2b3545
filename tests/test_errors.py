"""The reportable errors: what each one says, pinned as literals.

Every class below was recorded from the code as it stood before the errors
shared one base (issue 29): `to_dict()`, `describe()`, `str()`, `args`, the
attributes a caller reads, the constructor's signature and the classes it
is an instance of. A change to any of them is a change users see (`--format
json` output, the terminal's `error: ... [code]` line, log lines built from
`str(exc)`), so it must be made here on purpose.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flightdeck.audit._errors import AuditStoreError
from flightdeck.audit._query import AuditQueryError
from flightdeck.config import ConfigError
from flightdeck.documents import Diagnostic, Severity
from flightdeck.drivers._errors import (
    DriverCallError,
    DriverError,
    DriverNotRunnable,
    DriverRegistrationError,
)
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.launch.core._errors import LaunchError
from flightdeck.ui._errors import UiError

LINT = Diagnostic(
    "lint.bad", "a bad step", pointer="/steps/0", file="plan.md", line=3, column=5, hint="fix it"
)
BARE = Diagnostic("lint.worse", "no file", pointer="/x")
WARN = Diagnostic("lint.meh", "only a warning", severity=Severity.WARNING, file="d.md", line=7)
LINT_D = {
    "code": "lint.bad",
    "severity": "error",
    "message": "a bad step",
    "pointer": "/steps/0",
    "schema_pointer": None,
    "file": "plan.md",
    "line": 3,
    "column": 5,
    "hint": "fix it",
}
BARE_D = {
    "code": "lint.worse",
    "severity": "error",
    "message": "no file",
    "pointer": "/x",
    "schema_pointer": None,
    "file": None,
    "line": None,
    "column": None,
    "hint": None,
}
WARN_D = {
    "code": "lint.meh",
    "severity": "warning",
    "message": "only a warning",
    "pointer": "",
    "schema_pointer": None,
    "file": "d.md",
    "line": 7,
    "column": None,
    "hint": None,
}
NPM = Diagnostic("driver_not_runnable", "needs npm", hint="install node")
NPM_D = {**BARE_D, "code": "driver_not_runnable", "message": "needs npm", "pointer": ""}
NPM_D["hint"] = "install node"
AUDIT_DB = Path("/data/audit.db")


class Case:
    """One error as built, and what it said before the shared base."""

    def __init__(
        self,
        make: Callable[[], Exception],
        to_dict: dict[str, Any],
        text: str,
        *,
        describe: str | None = None,  # None: the class had no describe()
        attrs: dict[str, Any] | None = None,
    ) -> None:
        self.make = make
        self.to_dict = to_dict
        self.text = text
        self.describe = describe
        self.attrs = attrs or {}


CASES: dict[str, Case] = {
    "ui-full": Case(
        lambda: UiError("ui.store_unreadable", "cannot open x", "check the path"),
        {"code": "ui.store_unreadable", "message": "cannot open x", "hint": "check the path"},
        "cannot open x",
        describe="error: cannot open x [ui.store_unreadable]\n  hint: check the path",
    ),
    "ui-keyword-hint": Case(
        lambda: UiError("ui.bad", "bad thing", hint="do y"),
        {"code": "ui.bad", "message": "bad thing", "hint": "do y"},
        "bad thing",
        describe="error: bad thing [ui.bad]\n  hint: do y",
    ),
    "ui-minimal": Case(
        lambda: UiError("ui.bad", "bad thing"),
        {"code": "ui.bad", "message": "bad thing", "hint": None},
        "bad thing",
        describe="error: bad thing [ui.bad]",
    ),
    "ui-empty-hint": Case(
        lambda: UiError("ui.bad", "bad thing", ""),
        {"code": "ui.bad", "message": "bad thing", "hint": ""},
        "bad thing",
        describe="error: bad thing [ui.bad]",
    ),
    "audit-store": Case(
        lambda: AuditStoreError("audit.store_corrupt", AUDIT_DB, "file is not a database"),
        {
            "code": "audit.store_corrupt",
            "message": "audit store /data/audit.db: file is not a database",
            "file": "/data/audit.db",
        },
        "audit store /data/audit.db: file is not a database",
        describe="error: audit store /data/audit.db: file is not a database [audit.store_corrupt]",
        attrs={"path": AUDIT_DB},
    ),
    "audit-query-full": Case(
        lambda: AuditQueryError("cannot read the time 'x'", "use an age like 2h"),
        {
            "code": "audit.bad_filter",
            "message": "cannot read the time 'x'",
            "hint": "use an age like 2h",
        },
        "cannot read the time 'x'",
        describe="error: cannot read the time 'x' [audit.bad_filter]\n  hint: use an age like 2h",
    ),
    "audit-query-minimal": Case(
        lambda: AuditQueryError("bad filter"),
        {"code": "audit.bad_filter", "message": "bad filter", "hint": None},
        "bad filter",
        describe="error: bad filter [audit.bad_filter]",
    ),
    "driver-full": Case(
        lambda: DriverError(
            "template_error",
            "bad template",
            pointer="/x/y",
            file="DRIVER.md",
            line=4,
            column=2,
            hint="quote it",
            details={"path": "a.b", "n": 1},
        ),
        {
            "code": "template_error",
            "message": "bad template",
            "pointer": "/x/y",
            "file": "DRIVER.md",
            "line": 4,
            "column": 2,
            "hint": "quote it",
            "details": {"path": "a.b", "n": 1},
        },
        "template_error: bad template",
    ),
    "driver-minimal": Case(
        lambda: DriverError("driver_call_failed", "boom"),
        {"code": "driver_call_failed", "message": "boom"},
        "driver_call_failed: boom",
        attrs={"pointer": "", "file": None, "line": None, "column": None, "details": {}},
    ),
    # Empty text and empty details are left out; a zero line is kept; an
    # empty message is not (code and message are always there).
    "driver-empty-and-zero": Case(
        lambda: DriverError(
            "input_invalid", "", pointer="", file="", line=0, column=None, hint="", details={}
        ),
        {"code": "input_invalid", "message": "", "line": 0},
        "input_invalid: ",
    ),
    "driver-call": Case(
        lambda: DriverCallError("egress_denied", "host not allowed", hint="add it to egress"),
        {"code": "egress_denied", "message": "host not allowed", "hint": "add it to egress"},
        "egress_denied: host not allowed",
    ),
    "driver-registration": Case(
        lambda: DriverRegistrationError([WARN, LINT, BARE], driver_id="acme.http"),
        {
            "code": "lint.bad",
            "message": "a bad step (+1 more)",
            "pointer": "/steps/0",
            "file": "plan.md",
            "line": 3,
            "column": 5,
            "hint": "fix it",
            "driver": "acme.http",
            "diagnostics": [WARN_D, LINT_D, BARE_D],
        },
        "lint.bad: a bad step (+1 more)",
        attrs={"driver_id": "acme.http", "diagnostics": (WARN, LINT, BARE), "details": {}},
    ),
    "driver-registration-warnings-only": Case(
        lambda: DriverRegistrationError([WARN]),
        {
            "code": "lint.meh",
            "message": "only a warning",
            "file": "d.md",
            "line": 7,
            "driver": None,
            "diagnostics": [WARN_D],
        },
        "lint.meh: only a warning",
    ),
    "driver-registration-empty": Case(
        lambda: DriverRegistrationError([]),
        {"code": "driver_invalid", "message": "driver refused", "driver": None, "diagnostics": []},
        "driver_invalid: driver refused",
    ),
    "driver-not-runnable": Case(
        lambda: DriverNotRunnable([NPM], driver_id="acme.npm"),
        {
            "code": "driver_not_runnable",
            "message": "needs npm",
            "hint": "install node",
            "driver": "acme.npm",
            "diagnostics": [NPM_D],
        },
        "driver_not_runnable: needs npm",
        attrs={"reason": "needs npm"},
    ),
    "flightplan-full": Case(
        lambda: FlightPlanError(
            "freeze.lint_failed",
            "lint found 2 errors",
            hint="run flightdeck lint",
            where="plans/a.md",
            diagnostics=(LINT, BARE),
        ),
        {
            "code": "freeze.lint_failed",
            "message": "lint found 2 errors",
            "hint": "run flightdeck lint",
            "where": "plans/a.md",
            "diagnostics": [LINT_D, BARE_D],
        },
        "freeze.lint_failed: lint found 2 errors",
        describe="error: lint found 2 errors [freeze.lint_failed]\n"
        "  at plans/a.md\n"
        "  plan.md:3:5: a bad step [lint.bad]\n"
        "  <input>: no file [lint.worse]\n"
        "hint: run flightdeck lint",
    ),
    "flightplan-minimal": Case(
        lambda: FlightPlanError("verify.tampered", "the plan's digest does not match"),
        {
            "code": "verify.tampered",
            "message": "the plan's digest does not match",
            "hint": None,
            "where": None,
            "diagnostics": [],
        },
        "verify.tampered: the plan's digest does not match",
        describe="error: the plan's digest does not match [verify.tampered]",
        attrs={"diagnostics": ()},
    ),
    "launch-full": Case(
        lambda: LaunchError(
            "step.failed", "the tool failed", step="fetch", hint="see the log", transient=True
        ),
        {
            "code": "step.failed",
            "message": "the tool failed",
            "step": "fetch",
            "hint": "see the log",
        },
        "step.failed: the tool failed",
        describe="error: the tool failed (step fetch) [step.failed]\nhint: see the log",
        attrs={"transient": True},
    ),
    "launch-minimal": Case(
        lambda: LaunchError("input.missing", "input `x` is required"),
        {"code": "input.missing", "message": "input `x` is required", "step": None, "hint": None},
        "input.missing: input `x` is required",
        describe="error: input `x` is required [input.missing]",
        attrs={"transient": False},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_error_says_what_it_said(name: str) -> None:
    case = CASES[name]
    exc = case.make()
    assert exc.to_dict() == case.to_dict  # type: ignore[attr-defined]
    assert list(exc.to_dict()) == list(case.to_dict)  # type: ignore[attr-defined]
    json.dumps(exc.to_dict())  # type: ignore[attr-defined]
    if case.describe is not None:
        assert exc.describe() == case.describe  # type: ignore[attr-defined]
    assert str(exc) == case.text
    assert exc.args == (case.to_dict["message"],)
    for key in ("code", "message", "hint", "where", "step"):
        if key in case.to_dict:
            assert getattr(exc, key) == case.to_dict[key], key
    for key, value in case.attrs.items():
        assert getattr(exc, key) == value, key


def test_launch_error_reads_back_what_it_wrote() -> None:
    again = LaunchError.from_dict(CASES["launch-full"].make().to_dict())  # type: ignore[attr-defined]
    assert again.to_dict() == CASES["launch-full"].to_dict
    assert again.transient is False  # not part of the dict
    assert LaunchError.from_dict({}).to_dict() == {
        "code": "step.failed",
        "message": "",
        "step": None,
        "hint": None,
    }


CONFIG_INVALID = (Path("/ws/flightdeck.toml"), "Expected '=' (at line 1, column 5)")


def test_config_error_str_and_attributes() -> None:
    exc = ConfigError(*CONFIG_INVALID)
    assert str(exc) == "/ws/flightdeck.toml: Expected '=' (at line 1, column 5)"
    assert exc.args == ("/ws/flightdeck.toml: Expected '=' (at line 1, column 5)",)
    assert (exc.path, exc.code, exc.message) == (
        *CONFIG_INVALID[:1],
        "config.invalid",
        CONFIG_INVALID[1],
    )
    other = ConfigError(
        Path("/home/u/config.toml"), "cannot read: Is a directory", "config.unreadable"
    )
    assert str(other) == "/home/u/config.toml: cannot read: Is a directory"
    assert other.code == "config.unreadable"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_config_show_reports_a_config_error_as_before(
    fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flightdeck.cli import config as command

    def broken(_workspace: Path | None) -> None:
        raise ConfigError(*CONFIG_INVALID)

    monkeypatch.setattr(command, "explain_config", broken)
    result = CliRunner().invoke(command.config, ["show", "--format", fmt, "--workspace", "."])
    assert result.exit_code == 1
    if fmt == "json":
        assert json.loads(result.stdout) == {
            "ok": False,
            "error": {
                "code": "config.invalid",
                "message": "Expected '=' (at line 1, column 5)",
                "file": "/ws/flightdeck.toml",
            },
        }
        assert list(json.loads(result.stdout)["error"]) == ["code", "message", "file"]
    else:
        assert result.stderr == (
            "error: /ws/flightdeck.toml: Expected '=' (at line 1, column 5) [config.invalid]\n"
        )


SIGNATURES = {
    UiError: "(code: 'str', message: 'str', hint: 'str | None' = None) -> 'None'",
    AuditStoreError: "(code: 'str', path: 'Path | str', message: 'str') -> 'None'",
    AuditQueryError: "(message: 'str', hint: 'str | None' = None) -> 'None'",
    ConfigError: "(path: 'Path', message: 'str', code: 'str' = 'config.invalid') -> 'None'",
    DriverError: "(code: 'str', message: 'str', *, pointer: 'str' = '', file: 'str | None' = None, "
    "line: 'int | None' = None, column: 'int | None' = None, hint: 'str | None' = None, "
    "details: 'Mapping[str, Any] | None' = None) -> 'None'",
    DriverRegistrationError: "(diagnostics: 'Iterable[Diagnostic]', *, "
    "driver_id: 'str | None' = None) -> 'None'",
    FlightPlanError: "(code: 'str', message: 'str', *, hint: 'str | None' = None, "
    "where: 'str | None' = None, diagnostics: 'tuple[Diagnostic, ...]' = ()) -> 'None'",
    LaunchError: "(code: 'str', message: 'str', *, step: 'str | None' = None, "
    "hint: 'str | None' = None, transient: 'bool' = False) -> 'None'",
}


@pytest.mark.parametrize("cls", list(SIGNATURES), ids=lambda cls: cls.__name__)
def test_constructors_take_what_they_took(cls: type[Exception]) -> None:
    assert str(inspect.signature(cls)) == SIGNATURES[cls]


def test_the_error_classes_keep_their_parents() -> None:
    assert issubclass(AuditQueryError, ValueError)
    assert issubclass(DriverNotRunnable, DriverRegistrationError)
    assert issubclass(DriverRegistrationError, DriverError)
    assert issubclass(DriverCallError, DriverError)
    assert not issubclass(DriverCallError, DriverRegistrationError)
    for cls in (UiError, AuditStoreError, ConfigError, FlightPlanError, LaunchError, DriverError):
        assert issubclass(cls, Exception)
        assert not issubclass(cls, ValueError)


def test_config_error_reports_itself_as_the_command_did() -> None:
    exc = ConfigError(*CONFIG_INVALID)
    assert exc.describe() == (
        "error: /ws/flightdeck.toml: Expected '=' (at line 1, column 5) [config.invalid]"
    )
    assert exc.to_dict() == {
        "code": "config.invalid",
        "message": "Expected '=' (at line 1, column 5)",
        "file": "/ws/flightdeck.toml",
    }
