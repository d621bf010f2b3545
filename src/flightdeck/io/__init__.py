"""IO blocks (AIP-16): `define_io` / `defineIO` and the file-contract host.

    io = define_io({"inputs": {...}, "inputsFiles": {"src": {"path": "docs/a.pdf"}}})
    result = run_with_file_contract(io, body, {"x": 1}, workspace=ws, unit_id="translate")

`define_io` never touches the filesystem; `run_with_file_contract` stages
declared inputs into a private scratch root, runs the body, syncs declared
outputs back and records each file (bytes, sha256) through `flightdeck.audit`.
"""

from __future__ import annotations

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
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

_LAZY: dict[str, tuple[str, str]] = {
    "FS_ROOT_KEY": ("flightdeck.io._define", "FS_ROOT_KEY"),
    "FileContractEntry": ("flightdeck.io._define", "FileContractEntry"),
    "IOHandle": ("flightdeck.io._define", "IOHandle"),
    "define_io": ("flightdeck.io._define", "define_io"),
    "defineIO": ("flightdeck.io._define", "defineIO"),
    "fs_root_admitted": ("flightdeck.io._define", "fs_root_admitted"),
    "FileContractError": ("flightdeck.io._errors", "FileContractError"),
    "IODefinitionError": ("flightdeck.io._errors", "IODefinitionError"),
    "FileRecord": ("flightdeck.io._host", "FileRecord"),
    "RunResult": ("flightdeck.io._host", "RunResult"),
    "arun_with_file_contract": ("flightdeck.io._host", "arun_with_file_contract"),
    "run_with_file_contract": ("flightdeck.io._host", "run_with_file_contract"),
    "TOKENS": ("flightdeck.io._paths", "TOKENS"),
    "confine": ("flightdeck.io._paths", "confine"),
    "interpolate": ("flightdeck.io._paths", "interpolate"),
    "Err": ("flightdeck.io._result", "Err"),
    "Ok": ("flightdeck.io._result", "Ok"),
    "ValidationResult": ("flightdeck.io._result", "ValidationResult"),
}


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


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
