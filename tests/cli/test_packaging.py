"""The package as users get it: sdist and wheel build, carry the licence, and pass `twine check`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sdist_and_wheel_carry_the_licence_and_pass_twine_check(tmp_path: Path) -> None:
    # Build from a copy: `build` writes into the tree it builds (build/, dist/).
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns(".git", ".venv", "dist", "build", "__pycache__", "*.pyc")
    shutil.copytree(ROOT, source, ignore=ignore)
    dist = tmp_path / "dist"
    # --no-isolation: the dev environment already has hatchling, and CI stays offline-capable.
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), cwd=source)
    [wheel] = dist.glob("*.whl")
    [sdist] = dist.glob("*.tar.gz")
    _run(sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist), cwd=tmp_path)

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "flightdeck/documents/schemas/" in " ".join(names)  # package data ships
    assert b"License-Expression: Apache-2.0" in metadata
    assert b"Classifier: Typing :: Typed" in metadata and b"Project-URL: " in metadata
    with tarfile.open(sdist) as archive:
        members = {Path(m.name).relative_to(Path(m.name).parts[0]).as_posix() for m in archive}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} <= members
