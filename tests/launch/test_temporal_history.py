"""A run started by an older flightdeck replays under this one.

Temporal replays a run's history through the workflow code of whichever
worker picks it up, so a fleet upgraded while runs are open must produce
the same commands for the old histories. The histories in
`data/histories/` were recorded from real runs on a Temporal dev server by
the workflow as it was before a batch of journal writes rode with its step
(`JOURNAL_WITH_STEP`): each round's writes were a local activity of their
own. `v1_digest`: a chain and two steps started together, one approved up
front; `v1_approval`: a run that held for an approval signal, then went on.
No server is needed: the replayer runs the code against the recorded events.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

HISTORIES = Path(__file__).parent / "data" / "histories"


@pytest.mark.parametrize("name", ["v1_digest", "v1_approval"])
def test_a_history_recorded_before_writes_rode_with_steps_replays(name: str) -> None:
    from temporalio.client import WorkflowHistory
    from temporalio.worker import Replayer

    from flightdeck.launch.temporal._workflow import FlightPlanWorkflow

    text = (HISTORIES / f"{name}.json").read_text("utf-8")
    events = json.loads(text)["events"]
    # The recorded run: local activities applying the journal, one per round.
    assert any(e["eventType"] == "EVENT_TYPE_MARKER_RECORDED" for e in events)
    history = WorkflowHistory.from_json(name, text)
    result = asyncio.run(Replayer(workflows=[FlightPlanWorkflow]).replay_workflow(history))
    assert result.replay_failure is None
