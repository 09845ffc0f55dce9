"""The atheris harnesses under fuzz/, run as CI runs them: a short bounded pass each, as a subprocess.

Each harness asserts its parser's invariant on every input (fuzz/README.md); a pass exits 0 only
when no input broke it. The seed corpus is read, never written. In the default run each harness
replays just its seeds once, so a harness that no longer starts (an API it calls moved) fails there,
not only in the slow pass.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

FUZZ = ROOT / "fuzz"
HARNESSES = ["envelope", "sshsig", "allowed_signers", "handoff_lint"]
RUNS = 3000


def digest_tree(directory: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(directory.iterdir())}


def run_harness(harness: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(cwd)}
    return subprocess.run(
        [sys.executable, str(FUZZ / f"fuzz_{harness}.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )


@pytest.mark.parametrize("harness", HARNESSES)
def test_each_harness_replays_its_seed_corpus_without_a_finding(harness: str, tmp_path: Path) -> None:
    """`python fuzz/fuzz_X.py -runs=0` runs every seed through the harness once and exits 0."""
    seeds = len(list((FUZZ / "corpus" / harness).iterdir()))

    result = run_harness(harness, "-runs=0", f"-artifact_prefix={tmp_path}/", cwd=tmp_path)

    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    done = re.search(r"Done (\d+) runs", output)
    assert done, output[-3000:]
    assert int(done.group(1)) >= seeds, f"only {done.group(1)} of {seeds} seeds ran"
    assert not list(tmp_path.glob("crash-*")), "a crash artifact was written"


@pytest.mark.slow
@pytest.mark.parametrize("harness", HARNESSES)
def test_a_bounded_fuzz_pass_finds_no_invariant_violation(harness: str, tmp_path: Path) -> None:
    """`python fuzz/fuzz_X.py -runs=N` loads the seed corpus, runs N inputs and exits 0 without a crash."""
    seeds = FUZZ / "corpus" / harness
    before = digest_tree(seeds)
    assert len(before) >= 15, f"the seed corpus {seeds} is missing or thin"

    result = run_harness(harness, f"-runs={RUNS}", "-seed=1", f"-artifact_prefix={tmp_path}/", cwd=tmp_path)

    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    done = re.search(r"Done (\d+) runs", output)  # libFuzzer may run a few past -runs (reducing a new input)
    assert done, output[-3000:]
    assert int(done.group(1)) >= RUNS, output[-3000:]
    inited = re.search(r"INITED cov: (\d+) ft: \d+ corp: (\d+)/", output)
    assert inited, output[-3000:]
    assert int(inited.group(1)) > 50, "no coverage feedback: the parser was not instrumented"
    assert int(inited.group(2)) >= 10, "the seed corpus was not loaded"
    assert not list(tmp_path.glob("crash-*")), "a crash artifact was written"
    work = re.search(r"new inputs go to (\S+);", output)
    assert work, "the default command names where new inputs go"
    assert Path(work.group(1)).parent == tmp_path
    assert digest_tree(seeds) == before, "the seed corpus was written to"
