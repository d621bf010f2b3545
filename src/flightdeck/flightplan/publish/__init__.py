"""Publishing a stored version to an OCI registry and installing it from
one: the artifact's shape (`_artifact`: media types, the manifest written
and the manifest judged), the push of a verified version with its image
copied by digest and the referrers fallback (`_publish`, `_copy`), and the
install that fetches, bounds and verifies every file in a staging folder
before the store's own atomic write (`_install`), with `origin.json` saying
where it came from. It imports the top of flightplan (the error, verify),
`store`, `signing` (the keyring and trust state verify is given) and
`registry` (the OCI client); nothing imports it but the CLI. Import-free:
callers import its modules."""
