"""The one error base: every reportable error leaves both forms to it.

`FlightdeckError` (src/flightdeck/_errors.py) writes `describe()` and
`to_dict()` once; a class declares its fields, their order and its hooks.
What each class says is pinned in tests/test_errors.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

from flightdeck._errors import FlightdeckError
from flightdeck.audit._errors import AuditStoreError
from flightdeck.audit._query import AuditQueryError
from flightdeck.config import ConfigError
from flightdeck.drivers._errors import DriverCallError, DriverError, DriverNotRunnable
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.launch.core._errors import LaunchError
from flightdeck.ui._errors import UiError

SRC = Path(__file__).resolve().parents[1] / "src" / "flightdeck"
CONVERTED = {
    "UiError",
    "AuditStoreError",
    "AuditQueryError",
    "ConfigError",
    "DriverError",
    "DriverCallError",
    "DriverRegistrationError",
    "DriverNotRunnable",
    "FlightPlanError",
    "LaunchError",
}
# A subclass of the base that writes describe() or to_dict() itself, and why.
ALLOWED_OWN_FORMS: dict[str, str] = {}


def _subclasses_of_the_base() -> dict[str, tuple[str, set[str]]]:
    """Every class in src that descends from FlightdeckError, by base name, with
    its module and the methods it defines."""
    classes: dict[str, tuple[str, list[str], set[str]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                methods = {
                    n.name
                    for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                }
                assigned = {
                    t.id
                    for n in node.body
                    if isinstance(n, ast.Assign | ast.AnnAssign)
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Name)
                }
                where = str(path.relative_to(SRC))
                classes[node.name] = (where, bases, methods | assigned)
    found = {"FlightdeckError"}
    grew = True
    while grew:
        new = {name for name, (_, bases, _) in classes.items() if found & set(bases)} - found
        found |= new
        grew = bool(new)
    found.discard("FlightdeckError")
    return {name: (classes[name][0], classes[name][2]) for name in found}


def test_every_error_leaves_describe_and_to_dict_to_the_base() -> None:
    subclasses = _subclasses_of_the_base()
    assert set(subclasses) >= CONVERTED
    own = {
        f"{where}: {name}.{method}"
        for name, (where, members) in subclasses.items()
        for method in members & {"describe", "to_dict"}
        if name not in ALLOWED_OWN_FORMS
    }
    assert own == set(), "declare fields and hooks instead (src/flightdeck/_errors.py)"


def test_every_converted_class_is_a_flightdeck_error() -> None:
    for cls in (UiError, AuditStoreError, AuditQueryError, ConfigError, DriverNotRunnable):
        assert issubclass(cls, FlightdeckError)
    assert issubclass(DriverCallError, FlightdeckError)
    assert issubclass(FlightPlanError, FlightdeckError) and issubclass(LaunchError, FlightdeckError)


def test_the_base_imports_nothing_of_flightdeck() -> None:
    tree = ast.parse((SRC / "_errors.py").read_text("utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported == {"__future__", "typing"}


def test_the_base_alone() -> None:
    exc = FlightdeckError("x.y", "it broke", hint="mend it")
    assert (str(exc), exc.args, exc.where) == ("x.y: it broke", ("it broke",), None)
    assert exc.to_dict() == {"code": "x.y", "message": "it broke", "hint": "mend it"}
    assert exc.describe() == "error: it broke [x.y]\nhint: mend it"


def test_a_driver_error_now_describes_itself() -> None:
    # New with the base (DriverError had no describe): the same form as the rest.
    exc = DriverError("template_error", "bad template", pointer="/x", line=4, hint="quote it")
    assert exc.describe() == "error: bad template [template_error]\nhint: quote it"
