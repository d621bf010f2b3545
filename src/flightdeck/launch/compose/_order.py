"""The order Features are installed in: `dependsOn` and `installsAfter`
(the containers.dev Features spec), else the tool names' order.

A Feature is known by its reference without tag or digest
(`registry/repository`, lower case), as the spec names Features in both
fields; a bare name (no `/`) also matches a Feature's `id`. `dependsOn`
is hard: a Feature it names must be among the plan's tools (composition
fetches nothing the catalog does not pin, so a dependency is never added
behind the user's back: `compose.missing_dependency`). `installsAfter` is
soft: a Feature it names that is not composed is ignored. Among the
Features whose predecessors are installed, the one first by tool name goes
next, so the order is a function of the inputs alone and the digest stays
reproducible. A cycle is `compose.feature_cycle`, naming each Feature and
the field of its `devcontainer-feature.json` that closes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from flightdeck.flightplan import FlightPlanError, parse_image_ref
from flightdeck.launch.compose._feature import Feature
from flightdeck.launch.core._errors import LaunchError


def feature_key(reference: str) -> str:
    """`registry/repository` of a Feature reference (tag and digest dropped)."""
    try:
        ref = parse_image_ref(reference)
    except FlightPlanError:
        return reference.strip().lower()
    return f"{ref.registry}/{ref.repository}".lower()


def install_order(features: Sequence[Feature]) -> list[Feature]:
    """`features` (in tool-name order) reordered so every Feature comes
    after those it depends on or installs after."""
    keys = {feature_key(f.pinned): n for n, f in enumerate(features)}
    ids = {f.feature_id: n for n, f in enumerate(features) if f.feature_id}
    after: list[dict[int, str]] = [{} for _ in features]  # n -> {before: why}
    for n, feature in enumerate(features):
        what = f"{feature.pin.tool}@{feature.pin.version}"
        for field, names in (("dependsOn", feature.depends_on), ("installsAfter", feature.after)):
            for name in names:
                found = _find(name, keys, ids)
                if found is None and field == "dependsOn":
                    raise LaunchError(
                        "compose.missing_dependency",
                        f"{what}: its devcontainer-feature.json dependsOn {name!r}, which is"
                        " not among the plan's tools",
                        hint="add the tool that Feature installs to environment.tools (and to"
                        " the catalog); composition installs only what the catalog pins",
                    )
                if found is not None and found != n:
                    after[n].setdefault(found, f'{field}["{name}"]')
    placed: list[int] = []
    done: set[int] = set()
    while len(placed) < len(features):
        ready = [n for n in range(len(features)) if n not in done and set(after[n]) <= done]
        if not ready:
            raise _cycle(features, after, done)
        placed.append(ready[0])  # the first by tool name: the same order everywhere
        done.add(ready[0])
    return [features[n] for n in placed]


def _find(name: str, keys: dict[str, int], ids: dict[str, int]) -> int | None:
    if "/" not in name:
        return ids.get(name)
    return keys.get(feature_key(name))


def _cycle(features: Sequence[Feature], after: list[dict[int, str]], done: set[int]) -> LaunchError:
    """One cycle among the Features not placed, walked from the first."""
    start = min(n for n in range(len(features)) if n not in done)
    path, seen = [start], {start: 0}
    while True:
        current = path[-1]
        nxt = min(m for m in after[current] if m not in done)
        if nxt in seen:
            loop = [*path[seen[nxt] :], nxt]
            break
        seen[nxt] = len(path)
        path.append(nxt)
    steps = [
        f"{features[a].pin.tool}@{features[a].pin.version} {after[a][b]}"
        for a, b in itertools.pairwise(loop)
    ]
    return LaunchError(
        "compose.feature_cycle",
        "the Features' install order has a cycle: " + " -> ".join(steps),
        hint="a Feature cannot depend on (or install after) one that installs after it;"
        " fix the devcontainer-feature.json of one of them",
    )


__all__ = ["feature_key", "install_order"]
