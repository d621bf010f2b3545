"""The step kinds that run in the launcher's process or a worker's: action
calls through the trust contract (`_action`: approval, retries, idempotency
key, egress, credentials, redaction by `_redact`, audit records), the
llm-seam (`_seam`), and transforms (`_transform_step` runs one of the
registered `_transforms`). Each takes a `StepTask` and returns a
`StepOutcome`; tool steps are `launch.sandbox`'s. It imports `launch.core`
only.
"""
