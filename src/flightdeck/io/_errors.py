"""IO errors: definition problems and file-contract run problems, as values with codes.

IODefinitionError     define_io refused the definition (carries Diagnostics)
FileContractError     a run under the file contract could not start or finish
  ├─ code io.input_file_missing      an inputsFiles path does not exist (no run started)
  ├─ code io.path_escapes_workspace  absolute, `..` or symlink leaving the workspace
  ├─ code io.unsafe_token_value      a run/unit id would add path segments
  ├─ code io.input_invalid           the input failed the `inputs` schema
  ├─ code io.output_invalid          the body's result failed the `outputs` schema
  └─ code io.body_failed             the body raised (the cause is chained)
"""

from __future__ import annotations

from collections.abc import Sequence

from flightdeck.documents import Diagnostic


class IODefinitionError(ValueError):
    """An IO definition that cannot be used. `diagnostics` lists every problem."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        lines = [f"{d.code} at {d.pointer or '/'}: {d.message}" for d in self.diagnostics]
        super().__init__("invalid IO definition: " + "; ".join(lines))

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]


class FileContractError(RuntimeError):
    """A file-contract run failed. `code` is stable; `key`/`path` say where."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        run_id: str | None = None,
        key: str | None = None,
        path: str | None = None,
        started: bool = False,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.run_id = run_id
        self.key = key
        self.path = path
        self.started = started  # False: the body never ran
