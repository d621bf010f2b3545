"""The plans page: frozen plans with their verification, and looking never pins."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from flightdeck.config import data_dir
from flightdeck.flightplan import Keyring, freeze_plan, generate_keys
from flightdeck.ui import UiConfig, create_app
from tests.flightplan._plans import example_text


def test_plans_show_verification_and_the_page_pins_nothing(tmp_path: Path) -> None:
    keys = generate_keys(tmp_path / "keys")
    source = tmp_path / "plan" / "SKILL.md"
    source.parent.mkdir()
    source.write_text(example_text(), encoding="utf-8")
    outcome = freeze_plan(
        source, signing_key=keys.private_path, publisher="github://acme/digests", version="1.0.0"
    )
    Keyring().trust("github://acme/digests", keys.public_path.read_bytes())
    config = UiConfig(data=data_dir())
    client = TestClient(create_app(config), base_url="http://127.0.0.1")
    page = client.get(f"/plans?token={config.secrets.token}").text
    assert 'data-plan="weekly-metrics-digest"' in page
    assert "verified" in page and "github://acme/digests" in page and "1.0.0" in page
    assert not (data_dir() / "trust.json").exists()  # looking is not trusting
    stored = outcome.stored.skill_path
    stored.write_text(stored.read_text("utf-8").replace("tracking issue", "Tracking issue"))
    tampered = client.get("/plans").text
    assert "fails" in tampered and "[verify." in tampered
