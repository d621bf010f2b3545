"""The coding agent's commands: `agent` (a JSON-Lines process for a host, an
ACP server, or a chat in the terminal; `--list-tools` in `_agent_tools`) and
`sessions` (its saved conversations). `_agent_stream` serves `agent
--json-stream` without click and is imported by `flightdeck.cli.main` itself,
so this package's `__init__` imports nothing and `_agent_stream` imports the
standard library and the agent's start-up modules only. They may import the
top-level helpers of `flightdeck.cli` (`_render`) and `flightdeck.agent`.
"""
