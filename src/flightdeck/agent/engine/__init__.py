"""The agent's engine, at the bottom of the agent package: a session
(`AgentSession`: conversation state, dispatch of protocol commands, turns
run as tasks), the model loop of one turn, compaction, tool approval, what a
host may change while it runs (`set_config`), attachments; the agent's
settings, the on-disk session store and its message codec; and the steps of
a start-up that can fail (settings from flags, environment and config, the
provider, the session) that prepare it. It may import `agent.protocol` (the
events it emits and the commands it handles) and `agent.tools` (the built-in
tools), never a transport (the JSON stream, ACP, the terminal chat) nor an
extension (MCP, `Spawn`, manifest tools): those reach it through
`AgentSession.emit`, `AgentSession.handle` and the `Extension` the app
registers on a session (`_extension.py`). Nothing is imported here: the
start-up path loads the modules it needs (`_setup`, `_settings`, `_store`)
before `ready` without the session's.
"""
