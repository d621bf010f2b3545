"""flightdeck: a toolkit and runtime for agent manifests."""

from flightdeck._version import __version__

__all__ = ["__version__"]
