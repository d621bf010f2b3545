"""The one exception a tool raises to say it could not do what was asked;
its own module so the path checks (`_fs.py`) and the tool interface
(`_base.py`) both use it without importing each other."""

from __future__ import annotations


class ToolFailure(Exception):
    """A tool could not do what was asked; the message goes back to the model."""
