"""Where a recorded run goes (issue 28): flags, then the run's record, then
the configuration; and a resume only on the executor the run was launched
with. The Temporal tests run the same rules against a server; these pin
each rule for every combination."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.launch import LaunchError, RunRow, TemporalSettings, route_run
from flightdeck.launch.engine._route import check_executor

KEYS = ("address", "namespace", "task_queue", "tool_task_queue")
names = st.sampled_from(["a", "b", "c"])
maybe = st.one_of(st.none(), names)


def _row(executor: str | None, cluster: dict[str, Any] | None = None) -> RunRow:
    return RunRow(
        "run-1", "p", "/p", None, "failed", "t", None, "t", {}, {}, None, executor, cluster
    )


configs = st.builds(
    TemporalSettings,
    executor=st.sampled_from(["local", "temporal"]),
    address=maybe,
    task_queue=names,
    tool_task_queue=maybe,
    namespace=names,
    heartbeat_timeout=st.floats(1, 60),
    sticky_timeout=st.floats(1, 60),
)
clusters = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={key: maybe for key in KEYS}),
)
rows = st.one_of(st.none(), st.builds(_row, st.sampled_from([None, "local", "temporal"]), clusters))


@given(configs, rows, st.sampled_from([None, "local", "temporal"]), st.tuples(*[maybe] * 4))
def test_flags_then_the_record_then_the_config(
    config: TemporalSettings, row: RunRow | None, executor: str | None, flags: tuple[Any, ...]
) -> None:
    given_flags = dict(zip(KEYS, flags, strict=True))
    got = route_run(row, config, executor=executor, **given_flags)
    recorded = row is not None and row.executor is not None
    if executor is not None:
        assert got.executor == executor
    else:
        assert got.executor == (row.executor if recorded and row else config.executor)
    cluster = (row.cluster or {}) if recorded and row and row.executor == "temporal" else {}
    for key in KEYS:
        if given_flags[key] is not None:
            want = given_flags[key]
        elif cluster.get(key) is not None or (key == "tool_task_queue" and key in cluster):
            want = cluster[key]
        else:
            want = getattr(config, key)
        assert getattr(got, key) == want, key
    assert got.heartbeat_timeout == config.heartbeat_timeout
    assert got.sticky_timeout == config.sticky_timeout


def test_a_recorded_run_is_not_moved_by_the_configuration() -> None:
    config = TemporalSettings(executor="temporal", address="new:1", task_queue="cfg")
    recorded = _row("temporal", {"address": "old:1", "namespace": "ns", "task_queue": "q"})
    got = route_run(recorded, config)
    assert (got.executor, got.address, got.namespace, got.task_queue) == (
        "temporal",
        "old:1",
        "ns",
        "q",
    )
    assert route_run(_row("local"), config).executor == "local"
    assert route_run(_row(None), config).address == "new:1"  # unknown: as configured
    assert route_run(None, config, address="flag:1").address == "flag:1"
    # Only where a run lives is routed: not a setting of the launch or the worker.
    with pytest.raises(TypeError):
        route_run(None, config, heartbeat_timeout="5")


class _Engine:
    executor: ClassVar[str] = "temporal"


def test_a_resume_only_on_the_executor_the_run_was_launched_with() -> None:
    engine: Any = _Engine()
    check_executor(_row("temporal", {"address": "a:1"}), engine)
    check_executor(_row("local"), None)
    check_executor(_row(None), None)  # recorded before executors were: as asked
    check_executor(_row(None), engine)
    for row, on in ((_row("temporal", {"address": "a:1"}), None), (_row("local"), engine)):
        with pytest.raises(LaunchError) as refused:
            check_executor(row, on)
        assert refused.value.code == "resume.executor_mismatch"
    with pytest.raises(LaunchError) as unknown_address:
        check_executor(_row("temporal", None), None)
    assert unknown_address.value.hint is not None
    assert unknown_address.value.hint.endswith("--temporal HOST:PORT")
