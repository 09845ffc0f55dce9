"""kill -9 torture (issue 6, point 2): no loss and at-most-once through 20+ SIGKILLs of a busy daemon.

The run is bench/torture.py's `torture` (one implementation, also runnable standalone): a writer
thread drops 600 mixed inputs (handshakes, notes, handoffs, queries, instigates, signed orders,
invalid files, duplicates, conflict copies) while the daemon is SIGKILLed at 30 random moments
and restarted each time; `slopd run --once` finishes. `torture` checks every invariant and
returns the broken ones. The second test rebuilds, deterministically, a crash state the torture
ran into.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from bench.torture import OPERATOR, Lab, envelope, torture

pytestmark = pytest.mark.slow


@pytest.mark.timeout(300)
def test_kill_9_torture_keeps_every_guarantee(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """600 inputs, 30 SIGKILLs: all archived, one terminal reply each, nothing run twice, ledger = files."""
    seed = int(os.environ.get("SLOPD_TORTURE_SEED") or random.SystemRandom().randrange(2**32))

    def say(text: str) -> None:
        with capsys.disabled():
            print(f"\n{text}", flush=True)

    report = torture(tmp_path / "torture", envelopes=600, kills=30, seed=seed, say=say)
    say(report.summary())

    context = f"seed {seed} (replay: SLOPD_TORTURE_SEED={seed})"
    assert not report.problems, "\n".join([context, *report.problems])
    assert report.kills >= 20, context
    assert report.envelopes >= 500, context
    assert report.duplicates >= report.copies - report.conflicts > 0, context  # same bytes: duplicates
    assert report.conflicts > 0, context  # other bytes: refused as conflicts, checked by `torture`
    # The kills must have landed on running commands, or the run proved nothing about them.
    assert report.executions > 0, context
    assert report.interruptions > 0, context


def signed_order(tmp_path: Path) -> tuple[Lab, str, str, bytes]:
    """A lab with one signed order and its signature dropped into authorized/."""
    lab = Lab(tmp_path / "lab")
    lab.make()
    ident = "20260704t120000z-order"
    name = f"{ident}.md"
    data = envelope(ident, "instigate", "Record it.\n", OPERATOR, auth=f"signed:{name}.sig", action="record")
    lab.drop("authorized", f"{name}.sig", lab.sign(name, data))
    lab.drop("authorized", name, data)
    return lab, ident, name, data


def run_once(lab: Lab) -> None:
    done = subprocess.run(
        lab.run_args("--once"), env=lab.env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_an_order_whose_archive_move_was_cut_short_takes_its_signature_along(tmp_path: Path) -> None:
    """SIGKILL between linking an order into archive/ and unlinking it: the restart archives its .sig too."""
    lab, ident, name, _ = signed_order(tmp_path)
    run_once(lab)
    outbox = lab.hub / "outbox"
    replies = {path.name: path.read_bytes() for path in outbox.iterdir()}
    assert sorted(replies) == [f"{ident}.ack.md", f"{ident}.result.md"]
    assert os.listdir(lab.hub / "authorized") == []
    (day,) = (lab.hub / "archive").iterdir()
    assert sorted(os.listdir(day)) == [name, f"{name}.sig"]

    # What a SIGKILL inside Hub.archive leaves: the order linked into archive/ but still in the
    # lane (two links), its signature not moved yet; the ledger already says done, archived.
    os.link(day / name, lab.hub / "authorized" / name)
    os.rename(day / f"{name}.sig", lab.hub / "authorized" / f"{name}.sig")
    run_once(lab)  # the restart
    run_once(lab)  # and one more, as after any later restart

    assert os.listdir(lab.hub / "authorized") == []
    assert sorted(os.listdir(day)) == [name, f"{name}.sig"]
    assert {path.name: path.read_bytes() for path in outbox.iterdir()} == replies
    assert lab.journal(lab.action_journal) == [ident]
    with contextlib.closing(sqlite3.connect(lab.state / "ledger.sqlite3")) as db:
        assert [row[0] for row in db.execute("SELECT key FROM inputs")] == [ident]


def test_a_conflict_copy_never_archives_a_signature_whose_move_was_cut_short(tmp_path: Path) -> None:
    """SIGKILL between linking an order's .sig into archive/ and unlinking it, then a sync client's
    copy of the order: the copy does not move the .sig a second time (`NAME-2.md.sig`); the
    restart finishes the first move. (Found by the kill -9 torture, seed 2323699844.)"""
    lab, ident, name, data = signed_order(tmp_path)
    run_once(lab)
    (day,) = (lab.hub / "archive").iterdir()
    assert sorted(os.listdir(day)) == [name, f"{name}.sig"]
    # The signature linked into archive/ but not yet unlinked from the lane; the copy, older, is read first.
    os.link(day / f"{name}.sig", lab.hub / "authorized" / f"{name}.sig")
    copy = f"{ident} (conflicted copy 2026-07-04).md"
    lab.drop("authorized", copy, data)
    old = time.time() - 30
    os.utime(lab.hub / "authorized" / copy, (old, old))
    run_once(lab)
    run_once(lab)

    assert os.listdir(lab.hub / "authorized") == []
    assert sorted(os.listdir(day)) == sorted([name, f"{name}.sig", copy])


def test_an_order_and_its_signature_both_linked_but_not_unlinked_are_each_archived_once(
    tmp_path: Path,
) -> None:
    """SIGKILL after a batch linked both an order and its .sig into archive/ (the links come first,
    then one sync, then the unlinks): the restart finishes both moves; the .sig is not archived a
    second time as `NAME-2.md.sig`. (Found by the kill -9 torture, seed 1096493832.)"""
    lab, ident, name, _ = signed_order(tmp_path)
    run_once(lab)
    (day,) = (lab.hub / "archive").iterdir()
    assert sorted(os.listdir(day)) == [name, f"{name}.sig"]
    os.link(day / name, lab.hub / "authorized" / name)
    os.link(day / f"{name}.sig", lab.hub / "authorized" / f"{name}.sig")
    run_once(lab)
    run_once(lab)

    assert os.listdir(lab.hub / "authorized") == []
    assert sorted(os.listdir(day)) == [name, f"{name}.sig"]
    assert lab.journal(lab.action_journal) == [ident]
