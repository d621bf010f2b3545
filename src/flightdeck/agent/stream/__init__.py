"""The JSON stream transport (`flightdeck agent --json-stream`): stdin read
as bounded lines (`_lines`, shared with ACP), events written as flushed
lines and commands fed to the session (`_transport`), and the early path
that writes `ready` before the engine is imported (`_early`, with the
standard-library `ready` line of `_ready_line`). It may import
`agent.protocol` and `agent.engine` (the session it serves, the start-up
steps it runs early) and `agent.tools` (the sandbox state in `ready`); the
app (`agent/_app.py`) wires it to the engine and the extensions. Nothing is
imported here: a plain start writes `ready` with `_early` alone.
"""
