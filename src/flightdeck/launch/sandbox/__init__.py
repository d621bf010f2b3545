"""Tool steps: the bubblewrap argv that confines one (`_bwrap`), the egress
relay that gives it `127.0.0.1:3128` inside its network namespace
(`_relay`), the check of its tools against the versions the lock pinned
(`_toolcheck`), and the step runner itself (`_tool_step`: stage the inputs,
run the command in its image or the host's system directories, collect the
outputs). It imports `launch.core` and `launch.image`.
"""
