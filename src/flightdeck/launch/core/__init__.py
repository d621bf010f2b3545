"""What every part of a launch shares: `LaunchError`, the step contract
that crosses an executor (`StepTask` in, `StepOutcome` out, `StepSettings`),
the services a step runs with (`StepServices`: the action invoker, the
secret store and scrubber, the LLM provider), canonical JSON values and
hashes, and the binding paths (`select`, `rewrite`). It imports no other
part of `flightdeck.launch`; every other part may import it.
"""
