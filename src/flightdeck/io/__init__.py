"""IO blocks (AIP-16): `define_io` / `defineIO` and the file-contract host.

    io = define_io({"inputs": {...}, "inputsFiles": {"src": {"path": "docs/a.pdf"}}})
    result = run_with_file_contract(io, body, {"x": 1}, workspace=ws, unit_id="translate")

`define_io` never touches the filesystem; `run_with_file_contract` stages
declared inputs into a private scratch root, runs the body, syncs declared
outputs back and records each file (bytes, sha256) through `flightdeck.audit`.
"""

from __future__ import annotations

from flightdeck.io._define import (
    FS_ROOT_KEY,
    FileContractEntry,
    IOHandle,
    define_io,
    defineIO,
    fs_root_admitted,
)
from flightdeck.io._errors import FileContractError, IODefinitionError
from flightdeck.io._host import (
    FileRecord,
    RunResult,
    arun_with_file_contract,
    run_with_file_contract,
)
from flightdeck.io._paths import TOKENS, confine, interpolate
from flightdeck.io._result import Err, Ok, ValidationResult

__all__ = [
    "FS_ROOT_KEY",
    "TOKENS",
    "Err",
    "FileContractEntry",
    "FileContractError",
    "FileRecord",
    "IODefinitionError",
    "IOHandle",
    "Ok",
    "RunResult",
    "ValidationResult",
    "arun_with_file_contract",
    "confine",
    "defineIO",
    "define_io",
    "fs_root_admitted",
    "interpolate",
    "run_with_file_contract",
]
