"""The run commands: start a Flight Plan run (`launch`, with `--dry-run`'s
rendering in `_dry_run`), read and approve runs (`runs`), run steps for a
Temporal cluster (`worker`, with what the Temporal paths share in
`_temporal`), the image cache tool steps run in (`images`), the audit record
(`audit`) and the local web view of all of it (`ui`). One module per command,
each imported only when its command runs (`cli/_main.py`); they may import the
top-level helpers of `flightdeck.cli` (`_render`, `_params`), `flightdeck.launch`,
`flightplan`, `audit`, `config` and `ui`. Nothing here is imported by the rest
of the CLI.
"""
