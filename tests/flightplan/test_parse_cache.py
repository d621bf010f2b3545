"""The in-process parse cache (`_parsed.py`): a hit is exactly a fresh parse
of the same bytes, never shared with an earlier caller, and any changed byte
(or a changed installed-action set) is parsed again. Verification of a plan
parsed before still refuses every tampering."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    freeze_plan,
    load_plan,
    verify_plan,
)
from flightdeck.flightplan._parsed import clear as clear_parse_cache
from tests.flightplan.test_verify import NAME, TAMPERS


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    clear_parse_cache()


def test_a_hit_equals_a_fresh_parse(example_file: Path) -> None:
    first = load_plan(example_file)
    hit = load_plan(example_file)
    clear_parse_cache()
    fresh = load_plan(example_file)
    assert hit == fresh == first
    assert hit.plan is not None and hit.plan.steps


def test_what_a_caller_changes_does_not_reach_the_next_caller(example_file: Path) -> None:
    first = load_plan(example_file)
    assert first.document is not None and first.plan is not None
    step = first.plan.steps[0]
    original = step.id
    first.document.data["aileron"]["steps"][0]["id"] = "changed-in-memory"
    first.document.data["aileron"]["steps"].clear()
    again = load_plan(example_file)
    assert again.plan is not None and again.document is not None
    assert again.plan.steps[0].id == original
    assert again.document.data["aileron"]["steps"][0]["id"] == original
    assert again.document.data is not first.document.data


def test_a_changed_byte_at_the_same_path_is_parsed_again(example_file: Path) -> None:
    assert load_plan(example_file).ok
    text = example_file.read_text("utf-8")
    assert "inputs.window_days" in text
    example_file.write_text(text.replace("inputs.window_days", "inputs.nope", 1), "utf-8")
    codes = {d.code for d in load_plan(example_file).diagnostics}
    assert "flightplan.unknown_input" in codes


def test_the_installed_actions_are_part_of_the_key(example_file: Path) -> None:
    assert not any(
        d.code == "flightplan.unsatisfied_action" for d in load_plan(example_file).diagnostics
    )
    told = load_plan(example_file, installed_actions=[])
    assert any(d.code == "flightplan.unsatisfied_action" for d in told.diagnostics)


def test_the_same_bytes_at_another_path_name_that_path(example_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy" / "SKILL.md"
    copy.parent.mkdir()
    copy.write_bytes(example_file.read_bytes())
    load_plan(example_file)
    loaded = load_plan(copy)
    assert loaded.path == copy
    assert loaded.document is not None and loaded.document.path == copy


@pytest.mark.parametrize(
    ("tamper", "code"), [(t, c) for _, t, c in TAMPERS], ids=[n for n, _, _ in TAMPERS]
)
def test_tampering_after_a_verified_parse_is_still_refused(
    example_file: Path,
    keys: KeyPair,
    other_keys: KeyPair,
    tamper: object,
    code: str,
) -> None:
    frozen: FreezeOutcome = freeze_plan(
        example_file,
        signing_key=keys.private_path,
        publisher="github://acme/digests",
        version="1.0.0",
    )
    Keyring().trust("github://acme/digests", keys.public_path.read_bytes())
    verify_plan(NAME)  # the untouched bytes are remembered now
    verify_plan(NAME)  # and read back from memory
    tamper(frozen.stored.path, keys, other_keys)  # type: ignore[operator]
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == code


def test_the_cache_holds_at_most_its_entry_count(example_file: Path, tmp_path: Path) -> None:
    """Memory stays bounded: parsing more distinct plans than MAX_ENTRIES keeps
    the newest MAX_ENTRIES, far below the weight cap."""
    from flightdeck.flightplan import _parsed

    text = example_file.read_text("utf-8")
    for index in range(_parsed.MAX_ENTRIES + 5):
        path = tmp_path / f"p{index}" / "SKILL.md"
        path.parent.mkdir()
        path.write_text(text + f"\n<!-- {index} -->\n", "utf-8")
        assert load_plan(path).ok
    assert len(_parsed._entries) == _parsed.MAX_ENTRIES
    assert _parsed._size < _parsed.MAX_WEIGHT


def test_the_content_hash_is_kept_with_the_bytes_and_changes_with_them(
    example_file: Path,
) -> None:
    from flightdeck.flightplan import content_hash

    first = load_plan(example_file)
    assert first.document is not None
    expected = content_hash(first.document.data, first.document.body)
    assert first.content_hash() == expected
    hit = load_plan(example_file)
    assert hit.digest == [expected]  # remembered with the bytes: not hashed again
    assert hit.content_hash() == expected
    text = example_file.read_text("utf-8")
    example_file.write_text(text.replace("# ", "## ", 1), "utf-8")
    changed = load_plan(example_file)
    assert changed.digest == []
    assert changed.document is not None
    assert changed.content_hash() == content_hash(changed.document.data, changed.document.body)
    assert changed.content_hash() != expected
    clear_parse_cache()
    assert load_plan(example_file).digest == []


@pytest.mark.parametrize("cached", [False, True], ids=["first-load", "cache-hit"])
def test_a_caller_editing_its_copy_cannot_change_the_remembered_content_hash(
    example_file: Path, cached: bool
) -> None:
    from flightdeck.flightplan import content_hash

    clear_parse_cache()
    if cached:
        load_plan(example_file)
    mine = load_plan(example_file)
    assert mine.document is not None
    honest = content_hash(mine.document.data, mine.document.body)
    mine.document.data["description"] = "edited by a caller"
    # The hash is of the bytes: this load's and every later load's.
    assert mine.content_hash() == honest
    assert load_plan(example_file).content_hash() == honest
