"""The Baton score comparison (issue 25, item 6) never drifts from what it claims: the tables in
docs/baton.md are what `bench/score_compare.py --markdown` prints on the corpus letters (read in
place), and the README says no more than the measurement does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT, corpus

CORPUS = corpus.CORPUS
SCRIPT = ROOT / "bench" / "score_compare.py"


def run(*args: str, where: Path = CORPUS) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SLOPD_CORPUS=str(where))
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


@pytest.mark.corpus
def test_the_docs_tables_are_the_commands_output_on_the_corpus() -> None:
    """Every row the command prints (letters, elements, the summary) is in docs/baton.md as is."""
    if not (CORPUS / "baton" / "EXPECTED_SCORES.json").is_file():
        pytest.skip(corpus.missing(CORPUS / "baton" / "EXPECTED_SCORES.json"))
    printed = run("--markdown")
    assert printed.returncode == 0, printed.stderr
    rows = [line for line in printed.stdout.splitlines() if line.startswith("| ")]
    assert len(rows) == 3 + 12 * 2 + 9  # three headers, twelve letters twice, eight elements and the gate
    docs = (ROOT / "docs" / "baton.md").read_text(encoding="utf-8")
    missing = [row for row in rows if row not in docs.splitlines()]
    assert missing == [], "docs/baton.md is stale: run bench/score_compare.py --markdown"
    assert "| GOOD_HANDOFF" not in docs  # the letters keep their source names
    good = r"^\| test_flux_baton\.py L26-57 GOOD_HANDOFF \| 197 \| 7\.14 pass \| 7\.4 pass \|"
    assert re.search(good, docs, re.MULTILINE)


def test_without_the_corpus_the_command_says_how_to_point_at_it(tmp_path: Path) -> None:
    missing = run(where=tmp_path)
    assert missing.returncode == 2
    assert f"no {tmp_path}/baton/EXPECTED_SCORES.json; set SLOPD_CORPUS" in missing.stderr


def test_the_docs_no_longer_claim_only_a_marker_and_rounding() -> None:
    """The choices page says what was measured and links to the tables."""
    choices = (ROOT / "docs" / "choices.md").read_text(encoding="utf-8")
    assert "honesty marker and round" not in choices
    assert "baton.md#scores-beside-flux-baton-and-lighthouse-keeper" in choices
