"""`flightdeck agent` without `--json-stream`: the chat for a person in a
terminal (`_chat`: events rendered with rich, approval asked as y / n /
always, workspace trust asked before anything starts) and its local slash
commands (`_slash`). It may import the app (`agent/_app.py`'s `start`),
`agent.engine`, `agent.protocol` and `agent.extensions`. Nothing is
imported here.
"""
