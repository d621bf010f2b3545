"""`flightdeck images list|prune`, run as users run it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.launch._image import layer
from tests.launch._image import serve as _serve

from ._run import run


def test_list_and_prune_the_image_cache(fd_home: Path) -> None:
    from flightdeck.launch import ImageCache

    assert run("images", "list").stdout.strip() == "no cached images"
    pinned, resolver = _serve([(layer([("f", "file", "content")]), False)])
    ImageCache().ensure(pinned, lambda: resolver)
    digest = pinned.rsplit("@", 1)[1]

    listed = run("images", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["digest"] == digest and row["pinned"] == pinned and row["bytes"] > 0

    kept = run("images", "prune", "--keep", digest)
    assert kept.returncode == 0 and "removed 0" in kept.stdout
    bad = run("images", "prune", "--keep", "sha256:nothex")
    assert bad.returncode == 2 and "image.not_pinned" in bad.stderr
    pruned = run("images", "prune", "--format", "json")
    assert json.loads(pruned.stdout) == {"removed": [digest]}
    assert run("images", "list").stdout.strip() == "no cached images"
