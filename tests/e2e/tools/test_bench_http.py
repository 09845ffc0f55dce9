"""The HTTP transport's bench (bench/http_transport.py) must not rot: a --quick pass runs slopd's server, the
floor and the file drop side by side and prints every table and goal line. No timing is asserted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

HEADERS = (
    r"^== 1\. POST -> 202 receipt, paced: \d+ per contender at 20/s \(ms\)$",
    r"^contender +n +p50 +p90 +p99 +max +errors$",
    r"^== 1\. saturation: \d+ keep-alive connections posting for ",
    r"^server +requests/s +202s +p50 ms +p99 ms +CPU ms/req +user +system +drain s +errors$",
    r"^== 2\. drop -> reply, \d+ each way, alternating \(ms\)$",
    r"^path +n +p50 +p90 +p99 +max$",
    r"^== 3\. feed long-poll wake-up: GET /v1/replies\?after=TAIL&wait=30, \d+ drops \(ms\)$",
    r"^reply committed +n +p50 +p90 +p99 +max$",
    r"^goals:$",
)
ROWS = (
    r"^slopd +\d+ +\d",  # paced receipts, then saturation
    r"^floor +\d+ +\d",
    r"^file drop +\d+ +\d",
    r"^over HTTP +\d+ +\d",
    r"^over the folder +\d+ +\d",
    r"^folder, renamed in +\d+ +\d",
    r"^from reply\.written \(log\) +\d+ +\d",
)
GOALS = (
    r"^  throughput slopd/floor: \d\S*x .*\(goal >= 0\.8x\): (MET|MISSED)$",
    r"^  p99 receipt slopd/floor at 20/s: \d\S*x .*goal <= 2x\): (MET|MISSED)$",
    r"^  feed wake-up after the reply's commit \(reply\.written\): p50 \d.* \(goal <= 5 ms, on the p99\): "
    r"(MET|MISSED)$",
)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_http_quick_prints_every_table_and_goal(tmp_path: Path) -> None:
    """`http.py --quick` exits 0, prints each table with a row per contender and the goals; every
    request got its 202 and every drop its reply (the script reports failures in the tables)."""
    raw = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "http_transport.py"), "--quick", "--json", str(raw)],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=ROOT,
        env=dict(os.environ, BENCH_TMP=str(tmp_path / "scratch")),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    stdout = result.stdout
    for pattern in HEADERS + ROWS + GOALS:
        assert re.search(pattern, stdout, re.MULTILINE), f"no {pattern!r}:\n{stdout}"
    assert "!!" not in stdout, stdout
    figures = json.loads(raw.read_text())
    for name in ("slopd", "floor", "file drop"):
        assert figures["paced"][name]["failures"] == "0", (name, figures["paced"][name])
    for name in ("slopd", "floor"):
        assert all(run["failures"] == "0" and run["completed"] > 0 for run in figures["saturation"][name])
    assert figures["wakeup"]["from reply.written (log)"]["median"] > 0
