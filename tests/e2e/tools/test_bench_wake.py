"""The wake-up bench (bench/wake.py) must not rot: a --quick pass starts the daemon, every waiter wakes
in every round, and the table prints a row per waiter. No timing is asserted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

WAITERS = (
    "feed long-poll",
    "envelope long-poll",
    "notify /mcp",
    "notify stdio",
    "slop_wait /mcp",
    "slop_wait stdio",
    "slopd wait",
)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_wake_quick_prints_every_waiter_against_the_feed_long_poll(tmp_path: Path) -> None:
    """`wake.py --quick --json F` exits 0 with five figures per waiter and one table row each."""
    raw = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "wake.py"), "--quick", "--json", str(raw)],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT / "bench",
        env=dict(os.environ, BENCH_TMP=str(tmp_path / "scratch")),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "!!" not in result.stdout, result.stdout
    figures = json.loads(raw.read_text())["figures"]
    for name in WAITERS:
        assert len(figures[name]) == 5, (name, figures[name])
        assert re.search(rf"^{re.escape(name)} +5 +\d", result.stdout, re.MULTILINE), result.stdout
