"""Concurrent writers in separate processes lose no keyring entry and no
trust-state record (the file locks of issue 12, item 7, proven across
processes, not only threads). Without the locks both tests fail: entries
are read, changed and replaced by processes that start at one barrier."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from flightdeck.flightplan import Keyring, generate_keys
from flightdeck.flightplan.signing._trust import TrustState

WRITERS = 12


def _trust(barrier: multiprocessing.synchronize.Barrier, index: int, pem: bytes) -> None:
    barrier.wait()  # every process reads the keyring at about the same moment
    Keyring().trust(f"github://owner{index}", pem)


def _record(barrier: multiprocessing.synchronize.Barrier, index: int) -> None:
    barrier.wait()
    TrustState().check_and_record(
        f"plan-{index}", "github://o", "1.0.0", f"sha256:{index}", explicit_version=False
    )


def _in_processes(target: object, args: list[tuple[object, ...]]) -> None:
    context = multiprocessing.get_context("fork")  # the env (FLIGHTDECK_HOME) is inherited
    barrier = context.Barrier(len(args))
    processes = [context.Process(target=target, args=(barrier, *a)) for a in args]  # type: ignore[arg-type]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0


def test_keyring_trust_from_many_processes_loses_no_entry(tmp_path: Path) -> None:
    pems = [generate_keys(tmp_path / "k", f"k{i}").public_path.read_bytes() for i in range(WRITERS)]
    _in_processes(_trust, [(i, pem) for i, pem in enumerate(pems)])
    assert sorted(k.publisher for k in Keyring().entries()) == sorted(
        f"github://owner{i}" for i in range(WRITERS)
    )


def test_trust_state_from_many_processes_loses_no_record() -> None:
    _in_processes(_record, [(i,) for i in range(WRITERS)])
    assert [r.name for r in TrustState().records()] == sorted(f"plan-{i}" for i in range(WRITERS))
