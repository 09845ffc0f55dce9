"""The side-by-side benchmark harness (bench/compare.py) must not rot: a --quick pass runs every
workload for slopd, the floor and the naive peer and prints their ratios. No timing is asserted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import ROOT

# One ratio line per workload, each with a measured number (a quick pass is too short for the
# idle-CPU ratio, whose floor can read 0, so f is checked on RSS).
RATIO_LINES = {
    "a": r"^ratio a slopd/floor: median latency \d",
    "b": r"^ratio b slopd/floor: median latency \d",
    "c": r"^ratio c slopd/floor: throughput \d",
    "d": r"^ratio d slopd/floor: drain time \d",
    "e-verify": r"^ratio e-verify slopd/floor: throughput \d",
    "e-action": r"^ratio e-action slopd/floor: throughput \d",
    "f": r"^ratio f slopd/floor inotify: RSS \d",
    "g": r"^ratio g slopd/floor at 0: throughput \d",
}
PEER_LINES = ("a", "b", "c", "d", "e-verify")


def run_quick(script: str, tmp_path: Path, timeout: float) -> tuple[str, dict[str, Any]]:
    """`bench/SCRIPT --quick --json F` in a scratch dir; its stdout (it must exit 0) and figures."""
    raw = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--quick", "--json", str(raw)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=dict(os.environ, BENCH_TMP=str(tmp_path / "scratch")),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    figures: dict[str, Any] = json.loads(raw.read_text())
    return result.stdout, figures


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_compare_quick_prints_a_ratio_for_every_workload(tmp_path: Path) -> None:
    """`compare.py --quick` exits 0 and prints a slopd/floor ratio per workload (and slopd/peer)."""
    stdout, figures = run_quick("compare.py", tmp_path, timeout=540)
    for workload, pattern in RATIO_LINES.items():
        assert re.search(pattern, stdout, re.MULTILINE), f"no ratio line for {workload}:\n{stdout}"
    for workload in PEER_LINES:
        assert re.search(rf"^ratio {workload} slopd/peer: \S+ .*\d", stdout, re.MULTILINE), workload
    assert "== targets" in stdout
    for key in ("a", "b", "c", "d", "e-verify", "e-action", "f", "g 0"):
        assert figures["results"][key], key
    for key in ("a", "c", "d"):
        for who in ("slopd", "floor", "peer"):
            assert figures["results"][key][0][who]["missing"] == 0, (key, who)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_compare_runs_slopd_variants_beside_slopd_and_prints_their_ratios(tmp_path: Path) -> None:
    """`--contenders slopd,floor,slopd+http,slopd@HEAD` runs the HTTP-serving daemon and the committed
    tree's (from `git archive`) in the same rounds, each answering every envelope, each with a ratio
    over slopd; the peer, not named, does not run."""
    raw = tmp_path / "figures.json"
    command = [
        sys.executable, str(ROOT / "bench" / "compare.py"), "--quick", "--workloads", "c,d",
        "--contenders", "slopd,floor,slopd+http,slopd@HEAD", "--json", str(raw),
    ]  # fmt: skip
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
        env=dict(os.environ, BENCH_TMP=str(tmp_path / "scratch")),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for pattern in (
        r"^# slopd\+http: slopd run … --http 127\.0\.0\.1:0, from this tree$",
        r"^# slopd@HEAD: slopd run …, from \S+ \(git archive\)$",
        r"^ratio c slopd\+http/slopd: throughput \d",
        r"^ratio c slopd@HEAD/slopd: throughput \d",
        r"^ratio d slopd\+http/slopd: drain time \d",
        r"^ratio d slopd@HEAD/slopd: peak RSS \d",
        r"^ratio d slopd/peer: the peer did not run",
    ):
        assert re.search(pattern, result.stdout, re.MULTILINE), f"no {pattern!r}:\n{result.stdout}"
    figures = json.loads(raw.read_text())
    for key in ("c", "d"):
        (row,) = figures["results"][key]
        assert sorted(row) == ["floor", "slopd", "slopd+http", "slopd@HEAD"], key
        assert all(run["missing"] == 0 for run in row.values()), (key, row)


STARTUP_TARGETS = (
    r"^target slopd send median <= 60 ms: (MET|MISSED) \(\d",
    r"^target slopd validate median <= 60 ms: (MET|MISSED) \(\d",
    r"^target slopd status median <= 60 ms: (MET|MISSED) \(\d",
    r"^target \(a\) waiting at spawn: start-up to first reply <= 2x the floor's: (MET|MISSED) \(\d",
    r"^target \(b\) serving: start-up to first reply <= 2x the floor's: (MET|MISSED) \(\d",
)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_startup_quick_prints_both_parts_targets(tmp_path: Path) -> None:
    """`startup.py --quick` exits 0 and prints the per-call and the daemon start-up target lines."""
    stdout, figures = run_quick("startup.py", tmp_path, timeout=100)
    for pattern in STARTUP_TARGETS:
        assert re.search(pattern, stdout, re.MULTILINE), f"no {pattern!r}:\n{stdout}"
    assert all(figures["part1"].values()), figures["part1"]
    for key in ("a", "b"):
        assert figures["part2"][key][0]["slopd"]["ms"] > 0, key


VERIFY_FIGURES = ("plain", "sk-ed25519", "sk-ecdsa", "quorum 2-of-3")


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_verify_quick_prints_a_ratio_for_every_order_figure(tmp_path: Path) -> None:
    """`verify.py --quick` exits 0 and prints each order figure's slopd/floor ratio and its median."""
    stdout, figures = run_quick("verify.py", tmp_path, timeout=100)
    for label in VERIFY_FIGURES:
        pattern = rf"^ratio {re.escape(label)} slopd/floor: median per call \d"
        assert re.search(pattern, stdout, re.MULTILINE), f"no ratio line for {label}:\n{stdout}"
        assert figures["figures"][label]["median_us"] > 0, label
        assert figures["figures"][label]["floor"].startswith("floor "), label


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_handoff_quick_prints_lint_and_merge_figures_per_size(tmp_path: Path) -> None:
    """`handoff.py --quick` exits 0 and prints a row per log size and the growth line; every
    generated log linted clean and merged without conflict (the script checks before timing)."""
    stdout, figures = run_quick("handoff.py", tmp_path, timeout=100)
    for size in ("100", "1,000"):
        assert re.search(rf"^{size} +\S+ KiB +\d", stdout, re.MULTILINE), f"no row for {size}:\n{stdout}"
    assert re.search(r"^growth 100 -> 1,000 entries \(10x\): lint \d", stdout, re.MULTILINE), stdout
    assert [row["entries"] for row in figures["figures"]] == [100, 1000]
    for row in figures["figures"]:
        assert min(row["lint_s"], row["merge_s"], row["lint_peak_mib"], row["merge_peak_mib"]) > 0, row


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_notes_quick_prints_both_ways_per_size(tmp_path: Path) -> None:
    """`notes.py --quick` exits 0 and prints, per size, the paged index beside the re-render."""
    stdout, figures = run_quick("notes.py", tmp_path, timeout=100)
    for size in ("10", "1,000"):
        assert re.search(rf"^{size} +[\d.]+ ms", stdout, re.MULTILINE), f"no row for {size}:\n{stdout}"
    assert re.search(r"^growth 10 -> 1,000 notes, paged: [\d.]+x time", stdout, re.MULTILINE), stdout
    assert sorted((row["notes"], row["way"]) for row in figures["figures"]) == [
        (10, "paged"), (10, "re-render"), (1000, "paged"), (1000, "re-render"),
    ]  # fmt: skip
    for row in figures["figures"]:
        assert min(row["median_s"], row["cpu_median_s"], row["bytes_per_note"]) > 0, row
