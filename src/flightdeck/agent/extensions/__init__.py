"""The tools beyond the built-in ones and how they meet a session: loading
and attaching them at start-up (`_load`: configured MCP servers, the
workspace's manifest tools, `Spawn`; workspace trust; `--list-tools`; the
servers a host adds while the session runs), what an MCP server starts in
the session that connected it (`_mcp_session`: changed tool lists,
elicitations asked as tool calls, prompts as commands), `Spawn`'s
sub-agents (`_spawn`) and the manifest tools (`_manifest_tools`). It may
import `agent.engine` (the session it extends, registering the engine's
`Extension` on it), `agent.protocol`, `agent.tools` and `agent.mcp`, never a
transport. Nothing is imported here, and no MCP SDK is loaded unless the
agent starts with MCP servers.
"""
