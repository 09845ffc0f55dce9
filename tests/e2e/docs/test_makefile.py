"""The Makefile, as a new user meets it: the install step says what it is doing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests import ROOT


def test_the_install_step_prints_a_line_per_step_and_lets_pip_speak(tmp_path: Path) -> None:
    """`make install` on a fresh machine (dry run, a venv that does not exist): each of its
    commands is announced, and pip runs without -q, so the first minute is not silent."""
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "install", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    steps = [line for line in planned if line.startswith("echo ") and "install " in line]
    commands = [line for line in planned if not line.startswith(("echo ", "touch "))]
    assert len(steps) == len(commands) >= 3, planned
    pips = [line for line in commands if " pip install " in line]
    assert pips, planned
    assert not [line for line in pips if " -q" in line or "--quiet" in line], pips


def test_make_docs_builds_the_site_strictly_and_make_test_includes_it(tmp_path: Path) -> None:
    """`--strict` without `--quiet` (which would hide the warnings strict mode counts)."""
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "test", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    (build,) = [line for line in planned.splitlines() if "mkdocs build" in line]
    assert "--strict" in build
    assert "--quiet" not in build
    assert " -q" not in build
