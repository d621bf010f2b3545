"""Who vouches for a frozen plan: Ed25519 keys and signatures, passphrases,
co-signatures, the signed statement, the keyring (trusted publishers, pinned
plan names, revocations), the trust state (what this machine, or with a
PostgreSQL store the fleet, has accepted before, against rollback) and the
decision which of a version's signatures counts. It imports the shared parts
at the top of flightplan (the error, the read limits, canonical bytes, and
from `_freeze` the name, version and publisher patterns, the signing time
and the statement type) and the model's lock; never the store, the registry
or lint. Import-free: its names are public through `flightdeck.flightplan`."""
