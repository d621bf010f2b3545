"""How much of each file verify and the trust files will read.

Anyone who can write the store, the keyring or the trust state can make a
file of any size (docs/flightplan.md, threat model); each reader stops one
byte past its limit and reports the file as damaged with its usual code.
The limits sit far above anything flightdeck writes.
"""

from __future__ import annotations

from flightdeck._bounded import MiB
from flightdeck.documents import Limits

# A signature envelope, a co-signature or a public key: under 2 KiB each.
STORE_FILE_BYTES = 1 * MiB
# lock.json and code-pins.json are parts of a plan: no larger than its
# SKILL.md may be (the lock is a copy of one block of it).
PLAN_FILE_BYTES = Limits().max_bytes
# The keyring and the trust state: ~0.5 KiB per key or plan.
STATE_FILE_BYTES = 64 * MiB

__all__ = ["PLAN_FILE_BYTES", "STATE_FILE_BYTES", "STORE_FILE_BYTES"]
