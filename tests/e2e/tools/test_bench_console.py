"""The console's bench (bench/console.py) must not rot: a --quick pass builds its hub with the daemon,
signs in with a software passkey, renders every page beside its floor and prints each row. No
timing is asserted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

LINES = (
    r"^# archived: \{'handoff': \d+, .*ledger: 300 inputs \(300 done\), \d+ replies; made in ",
    r"^# pending: 42 drafts, 18 orders held for a quorum; made in ",
    r"^== console pages: 60 approvals pending \(42 drafts, 18 held orders\), 300 envelopes archived",
    r"^page +bytes +slopd p50 +p90 +p99 +floor p50 +p99 +slopd/floor +CPU ms/render +slopd p50 by tenth"
    r" +first$",
    r"^approvals +[\d,]+ +[\d.]+ .* [\d.]+x ",
    r"^activity +[\d,]+ +[\d.]+ .* [\d.]+x ",
    r"^approval: draft +[\d,]+ +[\d.]+ .* [\d.]+x ",
    r"^approval: order +[\d,]+ +[\d.]+ .* [\d.]+x ",
    r"^== the folder path on this daemon: 100 handoffs renamed into inbox/ at once, 1 rounds, the three",
    r"^alone +[\d,]+/s +[\d.]+ ms +-$",
    r"^viewed 1/s +[\d,]+/s +[\d.]+ ms +[\d.]+/s$",
    r"^viewed flat out +[\d,]+/s +[\d.]+ ms +[\d.]+/s$",
    r"^ratio viewed flat out/alone: throughput [\d.]+x$",
    r"^== the Approvals view \+ template in this process, 5 builds each way, alternating \(ms\)$",
    r"^with the shelf +60 +[\d.]+ ",
    r"^without +0 +[\d.]+ ",
    r"^== cProfile of 5 builds with the shelf$",
)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_console_quick_prints_every_page_beside_its_floor(tmp_path: Path) -> None:
    """`console.py --quick --profile` exits 0 and prints the hub it made (every archived envelope
    answered: the daemon made it), a row per page with its floor, the folder path alone and viewed
    (every handoff answered, or the script fails), and the in-process table."""
    raw = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "console.py"), "--quick", "--profile", "--json", str(raw)],
        capture_output=True,
        text=True,
        timeout=160,
        cwd=ROOT,
        env=dict(os.environ, BENCH_TMP=str(tmp_path / "scratch")),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for pattern in LINES:
        assert re.search(pattern, result.stdout, re.MULTILINE), f"no {pattern!r}:\n{result.stdout}"
    assert "!!" not in result.stdout, result.stdout
    figures = json.loads(raw.read_text())
    assert (figures["hub"]["inputs"], figures["hub"]["done"]) == (300, 300)
    assert figures["hub"]["replies"] >= 300
    for label in ("approvals", "activity", "approval: draft", "approval: order"):
        page = figures["pages"][label]
        assert page["bytes"] > 1000, label
        assert page["slopd"]["median"] > 0, label
        assert page["floor"]["median"] > 0, label
    assert figures["pages"]["approvals"]["bytes"] > figures["pages"]["approval: draft"]["bytes"]
    for mode in ("alone", "viewed 1/s", "viewed flat out"):
        assert figures["folder_path"][mode]["throughput"][0] > 0, mode
    assert figures["folder_path"]["viewed flat out"]["renders_per_s"][0] > 0
