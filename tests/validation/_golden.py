"""Fixture trees and the `validate` outputs pinned over them.

The outputs were recorded from the tree before the validate fast paths
(issue 14); `test_output_golden.py` compares the current output with them
byte for byte, so a faster path that changes a code, a location, an order or
a character fails there. Regenerate only for an intended change of output:

    .venv/bin/python -m tests.validation._golden
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
CORPUS = ROOT / "tests" / "data" / "corpus"

# Each run: (name, extra arguments, colour). The tree is the last argument.
RUNS: list[tuple[str, tuple[str, ...], bool]] = [
    ("text", (), False),
    ("text-verbose", ("-v",), False),
    ("text-colour", (), True),
    ("text-strict", ("--strict",), False),
    ("json", ("--format", "json"), False),
    ("github", ("--format", "github"), False),
    ("sarif", ("--format", "sarif"), False),
]
TREES = ("corpus", "bench", "hostile")

_FILE_NAMES = {"action": "ACTION.md", "tool": "TOOL.md", "driver": "DRIVER.md", "skill": "SKILL.md"}
_BODY = "When to use it, its side effects, what an operator reviews.\n\n"


def _corpus(root: Path) -> None:
    shutil.copytree(CORPUS, root / "corpus")
    shutil.copytree(ROOT / "examples", root / "corpus" / "examples")


def _bench(root: Path, count: int = 240) -> None:
    """Manifests made the way `bench/validate.py` makes its corpus (ids and
    bodies varied from the valid corpus), with more and more kinds of damage
    so that more codes take part."""
    rng = random.Random(14)
    templates: dict[str, list[tuple[object, str]]] = {}
    for kind in _FILE_NAMES:
        for path in sorted((CORPUS / "valid" / kind).rglob("*.md")):
            _, front, body = path.read_text("utf-8").split("---\n", 2)
            templates.setdefault(kind, []).append((yaml.safe_load(front), body))
    kinds = sorted(templates)
    for n in range(count):
        kind = kinds[n % len(kinds)]
        data, body = rng.choice(templates[kind])
        varied = json.loads(json.dumps(data, default=str))
        if kind == "skill":
            varied["name"] = f"bench-plan-{n}"
        elif kind == "action":
            varied["id"] = f"bench{n}:run"
        elif "id" in varied:
            varied["id"] = f"bench-{kind}-{n}"
        roll = rng.random()
        if roll < 0.08:
            varied["unexpected_field"] = True
        elif roll < 0.14:
            varied["risk_level"] = "high"
        elif roll < 0.18:
            varied.pop(next(iter(varied)))
        elif roll < 0.22 and kind == "skill":
            varied["description"] = "token ghp_" + "a1B2c3D4e5" * 4
        folder = root / "bench" / kind / f"m{n:04d}"
        folder.mkdir(parents=True)
        front = yaml.safe_dump(varied, sort_keys=False, allow_unicode=True)
        text = f"---\n{front}---\n{body}\n{_BODY * rng.randint(1, 3)}"
        (folder / _FILE_NAMES[kind]).write_text(text, "utf-8")


_HEAD = "---\nschema: action/v1\nid: a:b\ndescription: x\n"
_HOSTILE: dict[str, bytes] = {
    "deep-flow/ACTION.md": (_HEAD + "x: " + "[" * 5_000 + "]" * 5_000 + "\n---\n").encode(),
    "deep-block/ACTION.md": (
        _HEAD + "x:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(300)) + "---\n"
    ).encode(),
    "huge-int/ACTION.md": (_HEAD + "risk_level: " + "9" * 10_000 + "\n---\n").encode(),
    "hex-int/ACTION.md": (_HEAD + "risk_level: 0x" + "f" * 5_000 + "\n---\n").encode(),
    "big-scalar/ACTION.md": (_HEAD + "notes: " + "a" * 2_000_000 + "\n---\n").encode(),
    "many-keys/ACTION.md": (
        _HEAD + "x:\n" + "".join(f"  k{i}: 1\n" for i in range(20_000)) + "---\n"
    ).encode(),
    "many-errors/ACTION.md": (
        _HEAD + "".join(f"bad{i}: 1\n" for i in range(300)) + "---\n"
    ).encode(),
    "alias-bomb/ACTION.md": (
        _HEAD
        + "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
            for i in range(8)
        )
        + "---\n"
    ).encode(),
    "undefined-alias/ACTION.md": (_HEAD + "x: *nope\n---\n").encode(),
    "two-documents/ACTION.md": (_HEAD + "---\nx: 1\n---\n").encode(),
    "duplicate-key/ACTION.md": (_HEAD + "description: y\n---\n").encode(),
    "tab/ACTION.md": (_HEAD + "x:\n\ty: 1\n---\n").encode(),
    "bad-utf8/ACTION.md": b"---\nschema: action/v1\nid: a:b\ndescription: caf\xe9\n---\n",
    "bom-crlf/ACTION.md": ("\ufeff" + _HEAD.replace("\n", "\r\n") + "---\r\n").encode(),
    "no-frontmatter/ACTION.md": b"# just a heading\n",
    "unclosed/ACTION.md": _HEAD.encode(),
    "empty/SKILL.md": b"",
    "list-frontmatter/TOOL.md": b"---\n- a\n- b\n---\n",
    "scalar-frontmatter/DRIVER.md": b"---\njust text\n---\n",
    "binary/TOOL.md": b"\x89PNG\r\n\x1a\n\x00\x00binary",
    "all-bytes/DRIVER.md": bytes(range(256)) * 4,
    "kind-number/x.skill.md": b"---\nkind: 7\nname: a\n---\n",
    "unknown-kind/ACTION.md": b"---\nschema: nothing/v9\ntitle: hello\n---\n",
    "secret-skill/SKILL.md": (
        "---\nname: leaky\ndescription: uses AKIAABCDEFGHIJKLMNOP and"
        " -----BEGIN RSA PRIVATE KEY-----\n---\nbody with sk-" + "A1b2C3d4" * 6 + "\n"
    ).encode(),
    "nul-in-yaml/ACTION.md": (_HEAD + "x: a\x00b\n---\n").encode(),
    "control-chars/ACTION.md": (_HEAD + "x: \x1b[31mred\x07\n---\n").encode(),
    "long-line/ACTION.md": (_HEAD + "x: " + "y " * 50_000 + "\n---\n").encode(),
    "dates/ACTION.md": (_HEAD + "created: 2024-01-01\non: yes\n---\n").encode(),
}


def _hostile(root: Path) -> None:
    for name, data in _HOSTILE.items():
        path = root / "hostile" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # A symlink loop and a dangling link: the walk must not follow them.
    loop = root / "hostile" / "loop"
    loop.mkdir()
    (loop / "again").symlink_to(loop, target_is_directory=True)
    (root / "hostile" / "dangling").mkdir()
    (root / "hostile" / "dangling" / "ACTION.md").symlink_to(root / "hostile" / "absent.md")


BUILDERS = {"corpus": _corpus, "bench": _bench, "hostile": _hostile}


def build(root: Path) -> None:
    for builder in BUILDERS.values():
        builder(root)


def output(root: Path, tree: str, args: tuple[str, ...], colour: bool) -> str:
    """`flightdeck validate ARGS TREE` run from `root`, with the exit status
    on the first line and `root` written as `<ROOT>`."""
    from flightdeck.cli._main import cli

    here = Path.cwd()
    os.chdir(root)
    try:
        env = {"NO_COLOR": None, "FORCE_COLOR": None}
        result = CliRunner().invoke(cli, ["validate", *args, tree], color=colour, env=env)
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    text = f"exit {result.exit_code}\n" + result.stdout
    return text.replace(str(root.resolve()), "<ROOT>").replace(str(root), "<ROOT>")


def golden_path(tree: str, run: str) -> Path:
    suffix = "json" if run in ("json", "sarif") else "txt"
    return GOLDEN / f"{tree}.{run}.{suffix}"


def _write(root: Path) -> None:
    build(root)
    GOLDEN.mkdir(exist_ok=True)
    for tree in TREES:
        for run, args, colour in RUNS:
            golden_path(tree, run).write_text(output(root, tree, args, colour), "utf-8")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp))
    sys.exit(0)
