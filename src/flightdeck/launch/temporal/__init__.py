"""The Temporal executor: the client that starts, follows and signals a
run's workflow (`_client`, `TemporalEngine`), the workflow that walks the
frozen graph with the engine's scheduler (`_workflow`, with its executor and
write buffer in `_rounds`), and the worker that
runs its steps, journal writes and conclusions (`_worker`). Only these
modules import temporalio; a local launch imports none of them. It imports
`launch.core` and `launch.engine`.
"""
