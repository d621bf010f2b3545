"""`flightdeck validate` prints, byte for byte, what it printed before its
fast paths: text (plain, verbose, coloured, strict), JSON, GitHub and SARIF
over the test corpus with the examples, a bench-like generated corpus and
hostile files. See `_golden.py` for the trees and how the goldens were made."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validation._golden import RUNS, TREES, build, golden_path, output


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("golden")
    build(root)
    return root


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize(("run", "args", "colour"), RUNS, ids=[r[0] for r in RUNS])
def test_output_is_the_golden_one(
    trees: Path, tree: str, run: str, args: tuple[str, ...], colour: bool
) -> None:
    expected = golden_path(tree, run).read_text("utf-8")
    assert output(trees, tree, args, colour) == expected
