"""define_io / defineIO: the IOHandle shape, validation and definition refusals (AIP-16)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
from pydantic import BaseModel

import flightdeck.io as fio
from flightdeck.io import Err, IODefinitionError, IOHandle, Ok, define_io, defineIO

OPEN_WITH_ROOT = {
    "type": "object",
    "properties": {"_workflowFsRoot": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


def test_aip16_must_export_canonical_name_define_io() -> None:
    assert defineIO is define_io
    assert "defineIO" in fio.__all__


def test_public_surface_is_pinned() -> None:
    assert fio.__all__ == sorted(fio.__all__, key=lambda s: (not s.isupper(), s))
    for name in fio.__all__:
        assert hasattr(fio, name)


def test_handle_has_the_spec_interface_and_file_maps_are_never_none() -> None:
    io = define_io({})
    assert isinstance(io, IOHandle)
    assert io.inputs == {} and io.outputs == {}
    assert dict(io.inputsFiles) == {} and dict(io.outputsFiles) == {}
    assert io.inputs_files is io.inputsFiles


def test_aip16_empty_and_absent_file_maps_are_equivalent() -> None:
    absent = define_io({"inputs": {"type": "object"}})
    empty = define_io({"inputs": {"type": "object"}, "inputsFiles": {}, "outputsFiles": {}})
    assert absent == empty
    assert not absent.uses_files


def test_aip16_input_and_output_file_maps_are_independent() -> None:
    only_out = define_io({"inputs": OPEN_WITH_ROOT, "outputsFiles": {"o": {"path": "out.txt"}}})
    assert dict(only_out.inputsFiles) == {} and set(only_out.outputsFiles) == {"o"}
    only_in = define_io({"inputs": OPEN_WITH_ROOT, "inputsFiles": {"i": {"path": "in.txt"}}})
    assert set(only_in.inputsFiles) == {"i"} and dict(only_in.outputsFiles) == {}


def test_entry_fields_are_kept_in_canonical_shape() -> None:
    io = define_io(
        inputs=OPEN_WITH_ROOT,
        inputs_files={"src": {"path": "a/b.pdf", "mode": "ro", "contentType": "application/pdf"}},
    )
    assert io.to_dict()["inputsFiles"] == {
        "src": {"path": "a/b.pdf", "mode": "ro", "contentType": "application/pdf"}
    }


def test_validate_input_returns_ok_with_value_or_err_with_string() -> None:
    io = define_io({"inputs": {"type": "object", "properties": {"n": {"type": "integer"}}}})
    good = io.validate_input({"n": 1})
    assert isinstance(good, Ok) and good.ok and good.value == {"n": 1}
    bad = io.validateInput({"n": "x"})
    assert isinstance(bad, Err) and not bad.ok and "/n" in bad.error


def test_validate_input_is_draft_2020_12() -> None:
    # prefixItems exists only from 2020-12 on.
    io = define_io({"inputs": {"type": "array", "prefixItems": [{"type": "integer"}]}})
    assert io.validate_input([1]).ok
    assert not io.validate_input(["x"]).ok


def test_validate_input_requires_the_fs_root_when_files_are_used() -> None:
    io = define_io({"inputs": OPEN_WITH_ROOT, "inputsFiles": {"i": {"path": "in.txt"}}})
    missing = io.validate_input({"n": 1})
    assert isinstance(missing, Err) and "_workflowFsRoot" in missing.error
    assert io.validate_input({"n": 1, "_workflowFsRoot": "/tmp/x"}).ok
    assert not io.validate_input([1]).ok


def test_pydantic_model_classes_are_converted() -> None:
    class Args(BaseModel):
        name: str
        count: int = 1

    io = define_io(inputs=Args)
    assert io.inputs["properties"]["name"]["type"] == "string"
    assert io.validate_input({"name": "x"}).ok
    assert not io.validate_input({"count": 2}).ok


def test_aip16_inputs_schema_must_allow_fs_root_when_files_are_declared() -> None:
    closed = {"type": "object", "properties": {"n": {}}, "additionalProperties": False}
    with pytest.raises(IODefinitionError) as info:
        define_io({"inputs": closed, "inputsFiles": {"i": {"path": "x"}}})
    assert info.value.codes == ["io.fs_root_not_admitted"]
    assert info.value.diagnostics[0].pointer == "/inputs"


@pytest.mark.parametrize(
    "inputs",
    [
        {"type": "object", "properties": {"_workflowFsRoot": {"type": "integer"}}},
        {"type": "string"},
        {"type": "object", "unevaluatedProperties": False},
        False,
    ],
)
def test_schemas_that_cannot_carry_the_fs_root_are_refused(inputs: Any) -> None:
    with pytest.raises(IODefinitionError) as info:
        define_io({"inputs": inputs, "outputsFiles": {"o": {"path": "x"}}})
    assert info.value.codes == ["io.fs_root_not_admitted"]


@pytest.mark.parametrize(
    "inputs",
    [
        None,
        {"type": "object"},
        {"type": "object", "additionalProperties": False, "patternProperties": {"^_": {}}},
        OPEN_WITH_ROOT,
    ],
)
def test_schemas_that_admit_the_fs_root_are_accepted(inputs: Any) -> None:
    assert define_io({"inputs": inputs, "outputsFiles": {"o": {"path": "x"}}}).uses_files


def test_bad_definitions_report_every_problem_with_code_and_pointer() -> None:
    with pytest.raises(IODefinitionError) as info:
        define_io(
            {
                "inputs": {"type": "nonsense"},
                "outputs": 3,
                "inputsFiles": {
                    "a/b": {"path": "x"},
                    "abs": {"path": "/etc/passwd"},
                    "up": {"path": "../secret"},
                    "nomode": {"path": "x", "mode": "wx"},
                    "nopath": {"mode": "ro"},
                },
                "outputsFiles": {
                    "tok": {"path": "out/<targetLocale>/x.pdf"},
                    "extra": {"path": "y", "z": 1},
                },
            }
        )
    got = {(d.code, d.pointer) for d in info.value.diagnostics}
    assert got == {
        ("io.invalid_schema", "/inputs/type"),
        ("io.invalid_schema", "/outputs"),
        ("io.file_key_invalid", "/inputsFiles/a~1b"),
        ("io.path_unsafe", "/inputsFiles/abs/path"),
        ("io.path_unsafe", "/inputsFiles/up/path"),
        ("io.file_entry_invalid", "/inputsFiles/nomode/mode"),
        ("io.file_entry_invalid", "/inputsFiles/nopath"),
        ("io.unknown_path_token", "/outputsFiles/tok/path"),
        ("io.file_entry_invalid", "/outputsFiles/extra"),
    }


def test_handle_does_not_share_the_callers_schema() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    io = define_io({"inputs": schema})
    schema["properties"]["x"] = {"type": "integer"}
    assert io.inputs == {"type": "object", "properties": {}}


def test_aip16_must_not_do_io_at_module_load_or_definition() -> None:
    """Importing flightdeck.io and calling define_io open no file and create no directory."""
    code = textwrap.dedent(
        """
        import sys
        import flightdeck.io as fio
        import jsonschema, jsonschema.validators  # warm the validator's own lazy imports
        fio.define_io({"inputs": {"type": "object"}})
        events = []
        def hook(name, args):
            if name in ("open", "os.mkdir", "os.listdir", "os.remove", "shutil.rmtree"):
                target = str(args[0]) if args else ""
                if not target.endswith((".py", ".pyc")) and "__pycache__" not in target:
                    events.append((name, target))
        sys.addaudithook(hook)
        fio.define_io({
            "inputs": {"type": "object"},
            "inputsFiles": {"src": {"path": "missing/nowhere.txt"}},
            "outputsFiles": {"out": {"path": "out/<runId>.txt"}},
        })
        print(events)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


CORPUS = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "corpus"
VALID_IO = sorted((CORPUS / "valid" / "io").glob("*/IO.md"))


@pytest.mark.parametrize("path", VALID_IO, ids=[p.parent.name for p in VALID_IO])
def test_corpus_io_blocks_define(path: Any) -> None:
    from flightdeck.documents import DocumentKind, load_document

    doc = load_document(path, kind=DocumentKind.IO).document
    assert doc is not None
    if "<targetLocale-IS-NOT-A-VALID-TOKEN>" in path.read_text():
        # The spec's own deliberate gotcha: schema-valid, but not a path token.
        with pytest.raises(IODefinitionError) as info:
            define_io(doc.data)
        assert info.value.codes == ["io.unknown_path_token"]
    else:
        io = define_io(doc.data)
        assert io.to_dict()["inputsFiles"] == doc.data.get("inputsFiles", {})
