"""The content-addressed skill store: frozen versions on disk by name and
content hash, their labels and index, and the code pins file (`code-pins.json`)
stored beside each SKILL.md. It imports the shared parts at the top of
flightplan (the error, the read limits, canonical bytes, and `_freeze`'s
`FrozenPlan` and name rules) and the model's `CodePin`; never signing, the
registry or lint. Import-free: its names are public through
`flightdeck.flightplan`."""
