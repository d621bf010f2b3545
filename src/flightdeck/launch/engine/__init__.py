"""A run's walk and its records: the scheduler that walks the step graph
(`_scheduler`) through an executor (`_executor`: the interface, the local
one, and `execute_step` for any kind), the run journal on SQLite or
PostgreSQL (`_journal`, its rows in `_rows`, its migrations in
`_journal_schema`, its PostgreSQL connection in `_journal_pg`), the lock
that lets one process walk a run (`_run_lock`), resume
decisions for in-doubt steps (`_resume`), where a run walks (`_route`),
approvals and progress events, the audit router, concluding a walk
(`_conclude`: materializing the declared outputs with `_outputs`), the
run's report (`_report`), and the types a launch hands the walk
(`VerifiedTarget`, `Runtime`, `RunEngine`). It imports `launch.core`,
`launch.steps` and `launch.sandbox` (the executor runs every step kind).
"""
