"""A deterministic slice of the document fuzzer (bench/fuzz/documents.py):
the same case generator, a few thousand seeds, in process."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from flightdeck.documents import parse_document

FUZZER = Path(__file__).resolve().parents[2] / "bench" / "fuzz" / "documents.py"
SEEDS = range(3_000)


def _fuzzer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_documents", FUZZER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fuzzed_documents_give_diagnostics_never_exceptions() -> None:
    fuzz = _fuzzer()
    docs = fuzz.corpus()
    assert docs
    refused = 0
    for seed in SEEDS:
        case = fuzz.mutate(seed, docs)
        result = parse_document(case, path=fuzz.KINDS[seed % len(fuzz.KINDS)])
        for diag in result.diagnostics:
            assert diag.code and diag.message, (seed, diag)
        if result.document is None:
            assert result.diagnostics, seed  # refused documents always say why
            refused += 1
    assert refused > len(SEEDS) // 10  # the generator does produce hostile input


def test_cases_are_a_function_of_their_seed() -> None:
    fuzz = _fuzzer()
    docs = fuzz.corpus()
    assert [fuzz.mutate(s, docs) for s in (1, 2, 3)] == [fuzz.mutate(s, docs) for s in (1, 2, 3)]
