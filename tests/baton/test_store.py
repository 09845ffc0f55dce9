"""Lease state in SQLite (SPEC §11), with real files and real concurrent processes: two
claimants never both hold a vessel, a commit is admitted and written in one transaction, and a
lease cannot be taken over while its commit is being written."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from slopd.baton.leases import Held, Lease, Refused
from slopd.baton.store import Store
from tests.conftest import SLOPD, hub_env
from tests.polling import until


def in_a_sleep(pid: int) -> bool:
    """The process is in a `nanosleep` now (Linux's /proc/PID/wchan names the kernel function)."""
    try:
        return "nanosleep" in Path(f"/proc/{pid}/wchan").read_text()
    except FileNotFoundError:  # it has exited
        return False


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_take_refuse_expire(tmp_path: Path) -> None:
    """One live lease; a second claimant is told who holds it; after expiry another may take it."""
    clock = Clock()
    store = Store(tmp_path / "state", clock=clock)
    first = store.take("v", "gen1", 60, lambda: 0)
    assert isinstance(first, Lease)
    assert first.generation == 1
    assert store.take("v", "gen1-rival", 60, lambda: 0) == Held("gen1", 1060.0)
    clock.now = 1060.0
    second = store.take("v", "gen1-rival", 60, lambda: 0)
    assert isinstance(second, Lease)
    assert second.lease_id != first.lease_id
    assert store.get("v") == second
    assert Store(tmp_path / "state", clock=clock).get("v") == second  # durable: another process sees it


def test_commit_runs_the_write_once_admitted_and_releases_the_lease(tmp_path: Path) -> None:
    """Admitted: the write runs, its result is returned, the lease is released. Refused: no write."""
    store = Store(tmp_path / "state")
    lease = store.take("v", "gen1", 60, lambda: 0)
    assert isinstance(lease, Lease)
    writes: list[int] = []
    refused = store.commit("v", "not-the-id", 1, lambda: 0, lambda: writes.append(1))
    assert isinstance(refused, Refused)
    assert writes == []
    assert store.commit("v", lease.lease_id, 1, lambda: 0, lambda: "written") == "written"
    current = store.get("v")
    assert current is not None
    assert current.released
    again = store.commit("v", lease.lease_id, 1, lambda: 0, lambda: writes.append(2))
    assert isinstance(again, Refused)
    assert "released" in again.reason
    assert writes == []


def test_a_failed_write_leaves_the_lease_held(tmp_path: Path) -> None:
    """The write raised: the transaction rolls back, the lease is still live for a retry."""
    store = Store(tmp_path / "state")
    lease = store.take("v", "gen1", 60, lambda: 0)
    assert isinstance(lease, Lease)

    def broken() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        store.commit("v", lease.lease_id, 1, lambda: 0, broken)
    current = store.get("v")
    assert current is not None
    assert not current.released
    assert store.commit("v", lease.lease_id, 1, lambda: 0, lambda: "ok") == "ok"


def test_no_lease_is_granted_while_a_commit_is_being_written(tmp_path: Path) -> None:
    """A claimant in another process waits for the commit's transaction, then sees the new generation."""
    state, marker = tmp_path / "state", [0]
    store = Store(state)
    lease = store.take("v", "gen1", 1, lambda: marker[0])  # a 1-second lease
    assert isinstance(lease, Lease)
    inside, finish = threading.Event(), threading.Event()

    def write() -> str:
        inside.set()
        finish.wait(10)
        marker[0] = 1
        return "gen1 committed"

    committing = threading.Thread(
        target=lambda: store.commit("v", lease.lease_id, 1, lambda: marker[0], write)
    )
    committing.start()
    assert inside.wait(10)
    time.sleep(1.2)  # the scenario, not a check: the lease's ttl runs out while its commit is being written
    code = (
        "import json,sys; from pathlib import Path; from slopd.baton.store import Store; "
        "t = Store(Path(sys.argv[1])).take('v', 'rival', 60, lambda: int(sys.argv[2])); "
        "print(json.dumps([type(t).__name__, getattr(t, 'generation', None)]))"
    )
    rival = subprocess.Popen(
        [SLOPD[0], "-c", code, str(state), "1"], stdout=subprocess.PIPE, text=True, env=hub_env(tmp_path)
    )
    # A positive signal that the rival is waiting on the commit's write lock: SQLite's busy
    # handler sleeps between its tries, and nothing else in that process sleeps.
    until(lambda: rival.poll() is not None or in_a_sleep(rival.pid))
    assert rival.poll() is None, "the rival got an answer while the commit held the lock"
    finish.set()
    committing.join(10)
    out, _ = rival.communicate(timeout=30)
    assert json.loads(out) == ["Lease", 2]


def test_racing_processes_get_exactly_one_lease(tmp_path: Path) -> None:
    """Eight `slopd baton lease` at once on one vessel: one exit 0 with the lease, seven refused."""
    env = hub_env(tmp_path)
    hub = tmp_path / "hub"
    subprocess.run([*SLOPD, "init", "--no-home", str(hub)], env=env, check=True, capture_output=True)
    identity = tmp_path / "id.json"
    identity.write_text('{"name": "oracle"}')
    subprocess.run(
        [*SLOPD, "baton", "init", "--hub", str(hub), "--identity", str(identity), "oracle"],
        env=env,
        check=True,
        capture_output=True,
    )
    args = ["baton", "lease", "--hub", str(hub), "--state", str(tmp_path / "state"), "oracle", "--holder"]
    racers = [
        subprocess.Popen(
            [*SLOPD, *args, f"gen1-{n}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )
        for n in range(8)
    ]
    results = [(racer.wait(60), *racer.communicate()) for racer in racers]
    winners = [out for code, out, _ in results if code == 0]
    assert len(winners) == 1, results
    lease = json.loads(winners[0])
    assert lease["generation"] == 1
    assert len(lease["lease_id"]) == 64
    refusals = [err for code, _, err in results if code == 1]
    assert len(refusals) == 7
    holder = next(f"gen1-{n}" for n, (code, _, _) in enumerate(results) if code == 0)
    assert all(f"is leased to {holder} until" in err for err in refusals)
