"""Lint of a Flight Plan: the checks the JSON Schema cannot make (unknown
steps and outputs, cycles, tokens that name nothing, the environment's tools
and transforms against the catalog, secret-named keys and credential-looking
values), reported as `flightdeck.documents` diagnostics. It reads the model
(`flightplan.model`) and imports nothing else of flightplan. Import-free: its
names are public through `flightdeck.flightplan`."""
