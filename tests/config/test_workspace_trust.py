"""The workspace trust rule (`decide_trust`) and what writes it (`set_trust`,
`flightdeck config trust`): only the user's config.toml or the host trust a
workspace, one folder per entry, compared after resolving links."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.config import ConfigError, config_dir, decide_trust, load_config, set_trust
from tests.cli._run import run


def user_config(text: str) -> Path:
    path = config_dir() / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def folder(tmp_path: Path, name: str = "ws") -> Path:
    path = tmp_path / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_nothing_is_trusted_by_default(tmp_path: Path) -> None:
    trust = decide_trust(folder(tmp_path))
    assert not trust.trusted and trust.by == "" and trust.problem is None


def test_the_host_trusts_for_one_start(tmp_path: Path) -> None:
    trust = decide_trust(folder(tmp_path), host=True)
    assert trust.trusted and trust.by == "host"
    assert not (config_dir() / "config.toml").exists()


def test_the_users_config_trusts_named_folders_only(tmp_path: Path) -> None:
    ws, other = folder(tmp_path), folder(tmp_path, "other")
    child = folder(ws, "child")
    user_config(f"[trust]\nworkspaces = [{str(ws)!r}]\n")
    assert decide_trust(ws).trusted and decide_trust(ws).by == "config"
    assert not decide_trust(other).trusted
    assert not decide_trust(child).trusted  # no prefixes: a clone inside is not trusted
    assert not decide_trust(tmp_path).trusted


def test_links_are_resolved_both_ways(tmp_path: Path) -> None:
    ws = folder(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(ws)
    user_config(f"[trust]\nworkspaces = [{str(link)!r}]\n")
    assert decide_trust(ws).trusted and decide_trust(link).trusted


def test_a_workspace_file_cannot_trust_its_workspace(tmp_path: Path) -> None:
    ws = folder(tmp_path)
    (ws / "flightdeck.toml").write_text(f"[trust]\nworkspaces = [{str(ws)!r}]\n")
    assert load_config(ws).get("trust.workspaces") == [str(ws)]  # merged, yet not read for trust
    assert not decide_trust(ws).trusted


@pytest.mark.parametrize(
    "text",
    [
        "trust = 1\n",
        "[trust]\nworkspaces = 'one'\n",
        "[trust]\nworkspaces = [1]\n",
        "[trust]\nworkspaces = ['']\n",
        "[trust\n",
    ],
)
def test_a_bad_user_config_trusts_nothing_and_says_why(text: str, tmp_path: Path) -> None:
    ws = folder(tmp_path)
    user_config(text + f"\n# {ws}\n")
    trust = decide_trust(ws)
    assert not trust.trusted and trust.problem is not None
    assert str(config_dir() / "config.toml") in trust.problem
    with pytest.raises(ConfigError):
        set_trust(ws)


def test_a_config_folder_that_is_a_file_trusts_nothing_and_is_not_written(
    tmp_path: Path,
) -> None:
    ws = folder(tmp_path)
    config_dir().parent.mkdir(parents=True, exist_ok=True)
    config_dir().write_text("not a folder")
    trust = decide_trust(ws)
    assert not trust.trusted and trust.problem is not None
    with pytest.raises(ConfigError) as caught:
        set_trust(ws)
    assert caught.value.code == "config.unreadable"
    assert config_dir().read_text() == "not a folder"


def test_set_trust_adds_once_removes_and_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    ws, other = folder(tmp_path), folder(tmp_path, "other")
    path = user_config("# my settings\n[agent]\nmodel = 'm'  # the usual\n")
    os.chmod(path, 0o640)
    assert set_trust(ws) is True
    assert set_trust(ws) is False  # already there
    assert set_trust(other) is True
    text = path.read_text()
    assert "# my settings" in text and "# the usual" in text
    assert load_config(None).get("trust.workspaces") == [str(ws), str(other)]
    assert load_config(None).get("agent.model") == "m"
    assert path.stat().st_mode & 0o777 == 0o640
    assert set_trust(ws, False) is True and set_trust(ws, False) is False
    assert not decide_trust(ws).trusted and decide_trust(other).trusted


def test_set_trust_creates_the_users_file_private(tmp_path: Path) -> None:
    ws = folder(tmp_path)
    assert set_trust(ws) is True
    path = config_dir() / "config.toml"
    assert path.stat().st_mode & 0o777 == 0o600
    assert decide_trust(ws).trusted


@settings(max_examples=25, deadline=None)
@given(names=st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8), data=st.data())
def test_set_trust_keeps_exactly_the_folders_trusted(
    names: list[str], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("many")
    (config_dir() / "config.toml").unlink(missing_ok=True)
    expected: set[str] = set()
    for name in names:
        trusted = data.draw(st.booleans())
        set_trust(folder(root, name), trusted)
        (expected.add if trusted else expected.discard)(name)
    for name in "abcd":
        assert decide_trust(folder(root, name)).trusted == (name in expected)


def test_config_trust_command(fd_home: Path, tmp_path: Path) -> None:
    ws = folder(tmp_path)
    done = run("config", "trust", str(ws), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "workspace": str(ws),
        "trusted": True,
        "changed": True,
        "file": str(fd_home / "config" / "config.toml"),
    }
    again = run("config", "trust", cwd=ws)  # the workspace found from the current folder
    assert again.returncode == 0 and "already so" in again.stdout
    assert decide_trust(ws).trusted
    removed = run("config", "trust", "--remove", str(ws))
    assert removed.returncode == 0 and "not trusted" in removed.stdout
    assert not decide_trust(ws).trusted
    user_config("[trust]\nworkspaces = 3\n")
    bad = run("config", "trust", str(ws), "--format", "json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["error"]["code"] == "config.invalid"


def test_a_failed_write_is_a_coded_error_and_leaves_no_temporary_file(
    fd_home: Path, tmp_path: Path
) -> None:
    """The disk refusing the write (here a file size limit of one byte, in a
    process of its own) is `config.unreadable`; the old file stays as it was."""
    ws = folder(tmp_path)
    path = user_config("# mine\n")
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from flightdeck.config import ConfigError, set_trust\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))\n"
        "try:\n"
        "    set_trust(Path(sys.argv[1]))\n"
        "except ConfigError as exc:\n"
        "    print(exc.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(ws)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "config.unreadable", done.stderr
    assert path.read_text() == "# mine\n"
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.endswith(".lock")) == [
        "config.toml"
    ]
