"""`flightdeck.llm.warm`: the provider SDK imports in a background thread."""

from __future__ import annotations

import subprocess
import sys

from flightdeck.llm import ScriptedProvider, sdk_modules, warm

_PROBE = """
import sys
from flightdeck.llm import AnthropicProvider, warm
provider = AnthropicProvider("anthropic", "m", lambda: None)
before = "anthropic" in sys.modules
thread = warm(provider)
assert thread is not None and thread.daemon
thread.join(60)
print(before, "anthropic" in sys.modules, "anthropic.types" in sys.modules)
"""


def test_warm_imports_the_sdk_off_the_calling_thread() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["False", "True", "True"]


def test_a_provider_without_an_sdk_starts_no_thread() -> None:
    provider = ScriptedProvider([])
    assert sdk_modules(provider) == ()
    assert warm(provider) is None
