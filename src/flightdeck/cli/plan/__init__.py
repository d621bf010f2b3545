"""The Flight Plan commands: author, check and seal a plan (`lint`, `graph`,
`freeze`), sign and verify it (`sign`, `verify`), and own the keys and stores
that trust rests on (`keys`, `keyring`, `skills`). One module per command,
each imported only when its command runs (`cli/_main.py`); they may import the
top-level helpers of `flightdeck.cli` (`_render`, `_params`, `_passphrase`,
`_annotations`), `flightdeck.flightplan`, and, where a command needs them,
`documents`, `config` and `launch` (the code resolver of `freeze` and `lint`).
Nothing here is imported by the rest of the CLI.
"""
