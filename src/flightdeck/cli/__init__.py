"""The `flightdeck` command line: argument parsing and printing only.

Each command group lives in its own module and is imported lazily, so
`flightdeck --version` and `flightdeck agent` start without importing the
whole toolkit.
"""

from flightdeck.cli._main import main

__all__ = ["main"]
