"""Calling a tool through an SDK driver: validate in, template, call, extract, validate out."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from flightdeck.audit import MemoryAuditSink
from flightdeck.drivers import (
    CallResult,
    DriverCallError,
    FunctionDriver,
    SdkDriver,
    call_tool,
    load_driver,
)
from flightdeck.io import define_io
from tests.drivers._ws import ECHO_MODULE, ECHO_TOOL, add_driver, sdk_driver, workspace

CANARY = "canary-7f3a9c21-secret"


def make(
    tmp_path: Path, *, module: str = ECHO_MODULE, tool: dict[str, Any] | None = None, **kw: Any
) -> SdkDriver:
    ws = workspace(tmp_path, tool=tool)
    kw.setdefault("auth", {"state": {"env": ["ECHO_KEY"]}})
    return load_driver(add_driver(ws, sdk_driver(**kw), module), environ={"ECHO_KEY": CANARY})


def run(driver: Any, value: Any, **kw: Any) -> CallResult:
    return asyncio.run(call_tool("text.echo", value, driver=driver, **kw))


def test_aip30_inputs_validated_before_the_call(tmp_path: Path) -> None:
    driver = make(tmp_path)
    module = driver.import_report.module  # type: ignore[union-attr]
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": 5})
    assert info.value.code == "input_invalid"
    assert info.value.pointer == "/text"
    assert module.CALLS == []


def test_default_call_passes_the_input_as_the_only_argument(tmp_path: Path) -> None:
    result = run(make(tmp_path), {"text": "hi", "times": 2})
    assert result.output == {"text": "hi", "n": 2}
    assert result.to_dict()["driver"] == "echo-sdk"


def test_sync_functions_run_off_the_event_loop_thread(tmp_path: Path) -> None:
    driver = make(tmp_path)
    loop_thread: list[int] = []

    async def go() -> None:
        loop_thread.append(threading.get_ident())
        await call_tool("text.echo", {"text": "x"}, driver=driver)

    asyncio.run(go())
    calls = driver.import_report.module.CALLS  # type: ignore[union-attr]
    assert calls and calls[0] != loop_thread[0]


def test_async_functions_are_awaited_with_keyword_template(tmp_path: Path) -> None:
    driver = make(
        tmp_path,
        function_ref="aecho",
        sdk={"args_template": {"text": "${input.text}", "times": "${input.times | default(3)}"}},
    )
    assert driver.bindings["text.echo"].is_async
    assert run(driver, {"text": "ab"}).output == {"text": "ababab"}


def test_keyword_only_functions_get_the_input_as_keywords(tmp_path: Path) -> None:
    driver = make(tmp_path, function_ref="kw_only")
    assert run(driver, {"text": "z", "times": 3}).output == "zzz"


def test_positional_and_keyword_arguments_mixed(tmp_path: Path) -> None:
    driver = make(
        tmp_path,
        function_ref="positional",
        sdk={
            "args_template": {
                "_0": "${input.text}",
                "_1": {"k": "${context.workspace}"},
                "flag": True,
            }
        },
    )
    out = run(driver, {"text": "t"}, context={"workspace": "/ws"}).output
    assert out == {"a": "t", "b": {"k": "/ws"}, "flag": True}


def test_result_extract_shapes_the_output(tmp_path: Path) -> None:
    driver = make(tmp_path, function_ref="Client.images.create", sdk={"result_extract": "$.url"})
    assert run(driver, {"text": "cat"}).output == "https://img/cat"


def test_extract_no_match(tmp_path: Path) -> None:
    driver = make(tmp_path, sdk={"result_extract": "$.nothing[0]"})
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x"})
    assert info.value.code == "extract_no_match"
    assert "$.nothing[0]" in info.value.message and '"text": "x"' in info.value.message


def test_outputs_schema_validates_the_result(tmp_path: Path) -> None:
    tool = {**ECHO_TOOL, "outputs": {"type": "object", "required": ["missing"]}}
    driver = make(tmp_path, tool=tool)
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x"})
    assert info.value.code == "output_invalid"


def test_non_json_return_value_is_output_invalid(tmp_path: Path) -> None:
    with pytest.raises(DriverCallError) as info:
        run(make(tmp_path, function_ref="not_json"), {"text": "x"})
    assert info.value.code == "output_invalid"
    assert "object" in info.value.message


def test_package_exception_is_driver_call_failed_with_type_and_message(tmp_path: Path) -> None:
    with pytest.raises(DriverCallError) as info:
        run(make(tmp_path, function_ref="boom"), {"text": "nope"})
    assert info.value.code == "driver_call_failed"
    assert "builtins.ValueError" in info.value.message and "bad input: nope" in info.value.message
    assert info.value.details == {"exception_type": "builtins.ValueError"}


def test_missing_template_value_is_template_error_at_call(tmp_path: Path) -> None:
    driver = make(tmp_path, sdk={"args_template": {"_0": "${input.items[0]}"}})
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x"})
    assert info.value.code == "template_error"
    assert "input.items[0]" in info.value.message


def test_aip30_dropped_input_is_refused_not_ignored(tmp_path: Path) -> None:
    driver = make(tmp_path, entry={"schema_narrowing": {"drop_inputs": ["seed"]}})
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x", "seed": 4})
    assert info.value.code == "dropped_input_used"
    assert run(driver, {"text": "x"}).output["text"] == "x"


def test_unknown_tool_is_tool_not_implemented(tmp_path: Path) -> None:
    with pytest.raises(DriverCallError) as info:
        asyncio.run(call_tool("other.tool", {}, driver=make(tmp_path)))
    assert info.value.code == "tool_not_implemented"


def test_invoke_sync_runs_the_same_pipeline_in_the_calling_thread(tmp_path: Path) -> None:
    driver = make(tmp_path, sdk={"result_extract": "$.text"})
    assert driver.invoke_sync("text.echo", {"text": "s"}, {}) == "s"


def test_aip33_secrets_never_reach_errors_logs_or_audit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Canary: a secret used in a template and echoed by the package's exception."""
    caplog.set_level(logging.DEBUG)
    sink = MemoryAuditSink()
    driver = make(
        tmp_path,
        function_ref="boom",
        sdk={"args_template": {"_0": {"text": "${secrets.ECHO_KEY}"}}},
    )
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x"}, audit=sink, run_id="r1")
    assert CANARY not in str(info.value) and CANARY not in repr(info.value.to_dict())
    assert "***" in info.value.message
    records = sink.records(run_id="r1")
    assert [r.kind for r in records] == ["driver.call"]
    assert records[0].fields["code"] == "driver_call_failed"
    assert CANARY not in repr([r.to_dict() for r in records])
    assert CANARY not in caplog.text
    assert CANARY not in repr(driver) and CANARY not in repr(driver.describe())


def test_successful_calls_are_audited_without_values(tmp_path: Path) -> None:
    sink = MemoryAuditSink()
    run(make(tmp_path), {"text": "private words"}, audit=sink, run_id="r2")
    (record,) = sink.records(run_id="r2")
    assert record.fields["ok"] is True and record.fields["tool"] == "text.echo"
    assert "private words" not in repr(record.to_dict())


def test_audit_record_fields_of_a_call_in_order(tmp_path: Path) -> None:
    """What a driver.call record holds, success and failure (built only for a sink)."""
    sink = MemoryAuditSink()
    driver = make(tmp_path)
    run(driver, {"text": "x"}, audit=sink, run_id="ok")
    with pytest.raises(DriverCallError):
        run(driver, {"text": 3}, audit=sink, run_id="bad")
    (good,) = sink.records(run_id="ok")
    (bad,) = sink.records(run_id="bad")
    assert list(good.fields) == ["tool", "driver", "kind", "ok", "duration_ms"]
    assert good.fields["driver"] == driver.id and good.fields["kind"] == "sdk"
    assert list(bad.fields) == ["tool", "driver", "kind", "ok", "code", "message"]
    assert (bad.fields["ok"], bad.fields["code"]) == (False, "input_invalid")


def test_function_driver_is_a_handler_backed_driver() -> None:
    io = define_io(
        {"inputs": {"type": "object", "required": ["a"]}, "outputs": {"type": "integer"}}
    )

    async def double(value: Any, context: Any) -> int:
        return int(value["a"]) * 2

    driver = FunctionDriver("test", {"math.double": double}, {"math.double": io})
    result = asyncio.run(call_tool("math.double", {"a": 21}, driver=driver))
    assert result.output == 42
    with pytest.raises(DriverCallError, match="input_invalid"):
        asyncio.run(call_tool("math.double", {}, driver=driver))
    bad = FunctionDriver("bad", {"math.double": lambda v, c: "x"}, {"math.double": io})
    with pytest.raises(DriverCallError, match="output_invalid"):
        asyncio.run(call_tool("math.double", {"a": 1}, driver=bad))


SLOW_MODULE = (
    ECHO_MODULE
    + """

async def slow(value):
    await asyncio.sleep(30)
"""
)


def test_aip30_timeout_override_narrows_the_tool_timeout(tmp_path: Path) -> None:
    driver = make(tmp_path, module=SLOW_MODULE, function_ref="slow", timeout_override_ms=20)
    binding = driver.binding("text.echo")
    assert binding is not None and binding.timeout_ms == 20
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x"})
    assert info.value.code == "driver_timeout"


def test_timeout_override_never_widens(tmp_path: Path) -> None:
    tool = {**ECHO_TOOL, "timeout_ms": 1000}
    driver = make(tmp_path, tool=tool, timeout_override_ms=99999)
    binding = driver.binding("text.echo")
    assert binding is not None and binding.timeout_ms == 1000


def test_aip30_expiry_detect_marks_auth_expired(tmp_path: Path) -> None:
    driver = make(
        tmp_path,
        function_ref="boom",
        auth={"state": {"env": ["ECHO_KEY"]}, "expiry": {"detect": "exception:ValueError"}},
    )
    with pytest.raises(DriverCallError) as info:
        run(driver, {"text": "x"})
    assert info.value.details["auth_expired"] is True
    assert "ECHO_KEY" in (info.value.hint or "") and CANARY not in (info.value.hint or "")
