"""Fault injection behind one seam (`shell.faults`): its variable, its points, and that nothing else
in slopd reads a test-only switch."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from slopd.shell import faults
from tests import ROOT

SLOPD = ROOT / "slopd"
PASSES = (
    "from slopd.shell import faults\n"
    "for n in range(1, 4):\n"
    "    faults.passed('baton.written')\n"
    "    print(n, flush=True)\n"
)


@pytest.mark.parametrize(
    ("value", "armed"),
    [
        ("", {}),
        ("http.dropped", {"http.dropped": 1}),
        ("baton.written=3", {"baton.written": 3}),
        (" http.dropped , baton.written=2 ,", {"http.dropped": 1, "baton.written": 2}),
    ],
)
def test_parse_reads_points_and_counts(value: str, armed: dict[str, int]) -> None:
    """Rule 1: `POINT` is its first passage, `POINT=N` its N-th."""
    assert faults.parse(value) == armed


def test_parse_refuses_every_bad_item_at_once() -> None:
    """Rule 4: an unknown point and a bad count are both named, with the variable."""
    with pytest.raises(ValueError, match="SLOPD_FAULTS") as raised:
        faults.parse("http.droped,baton.written=0,baton.written=x")
    said = str(raised.value)
    assert "'http.droped' is not a fault point" in said
    assert "'baton.written=0'" in said
    assert "'baton.written=x'" in said


def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if key != faults.VARIABLE}
    return subprocess.run(
        [sys.executable, "-c", PASSES],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_the_variable_every_point_is_passed() -> None:
    """Rule 2: no variable, no fault: the process passes the point three times and exits 0."""
    done = run({})
    assert (done.returncode, done.stdout.split()) == (0, ["1", "2", "3"])


def test_the_process_is_killed_at_the_nth_passage_of_its_point() -> None:
    """Rule 1: `baton.written=2` kills the process as it passes the point the second time."""
    done = run({faults.VARIABLE: "baton.written=2"})
    assert (done.returncode, done.stdout.split()) == (-signal.SIGKILL, ["1"])


def test_a_fault_armed_on_another_point_changes_nothing_here() -> None:
    """Rule 1: only the point named is armed."""
    done = run({faults.VARIABLE: "http.dropped"})
    assert (done.returncode, done.stdout.split()) == (0, ["1", "2", "3"])


def test_no_other_module_reads_a_test_switch() -> None:
    """The seam is the only place: no other slopd module names the variable or an `SLOPD_TEST_` one."""
    readers = [
        path.relative_to(SLOPD).as_posix()
        for path in SLOPD.rglob("*.py")
        if re.search(r"SLOPD_FAULTS|SLOPD_TEST_", path.read_text(encoding="utf-8"))
    ]
    assert readers == ["shell/faults.py"]
