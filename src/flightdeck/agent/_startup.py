"""The cyclic garbage collector is paused while the agent starts.

Start-up builds thousands of long-lived objects (modules, classes, pydantic
models; ~280 models for `acp` alone) and almost no garbage, yet every 700
allocations the collector walks the young objects and, as they pile up, the
older generations: ~8% of the CPU spent before `ready`. `flightdeck agent`
pauses it before its first heavy import; the JSON stream resumes it once
`ready` is written and the engine is loaded (a plain start writes `ready`
before loading it: agent/stream/_early.py), ACP once `initialize` is answered.
Reference counting frees everything else as usual meanwhile.

On resuming, what start-up built is frozen (`gc.freeze`) first. Otherwise
the first collection, due at the next allocation, walks all of it (~64,000
objects after a plain start's first-reply imports: ~13 ms, on the way to the
first reply) and later ones keep walking it as it ages. The price is the
few hundred objects of cyclic garbage start-up leaves (~800 after those
imports), which are never collected.
"""

from __future__ import annotations

import gc

_paused = False


def pause_gc() -> None:
    """Stop automatic collection, unless something else already did."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_gc() -> None:
    """Undo `pause_gc` (nothing if it did not pause)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()  # see the module's doc
        gc.enable()
