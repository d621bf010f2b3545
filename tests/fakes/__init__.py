"""Test doubles that speak the real provider wire formats over loopback HTTP."""

from tests.fakes._script import ToolCall, Turn, load_script
from tests.fakes._server import FakeLLMServer, RecordedRequest

__all__ = ["FakeLLMServer", "RecordedRequest", "ToolCall", "Turn", "load_script"]
