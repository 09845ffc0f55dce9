"""Without `shared/corpus`, the tests that read it skip, and each says how to enable it (issue 29)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests import ROOT

READERS = [  # every test module that reads the corpus (they use tests/corpus.py)
    "tests/handoff/test_corpus.py",
    "tests/baton/test_score.py",
    "tests/e2e/baton/test_baton_boot.py",
    "tests/e2e/handoff/test_handoff_git.py",
    "tests/e2e/docs/test_score_compare.py",
]


def test_every_corpus_test_skips_naming_slopd_corpus_when_the_corpus_is_absent(tmp_path: Path) -> None:
    """With SLOPD_CORPUS at an empty folder, pytest's skip summary has a line per skipped corpus
    test, and every one says `SLOPD_CORPUS=` and where to read more."""
    env = dict(os.environ, SLOPD_CORPUS=str(tmp_path / "no-corpus"))
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-m",
            "corpus",
            *READERS,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    skips = re.findall(r"^SKIPPED \[(\d+)\] (.*)$", ran.stdout, flags=re.MULTILINE)
    assert sum(int(count) for count, _ in skips) >= 20, ran.stdout[-3000:]
    for _count, line in skips:
        assert "SLOPD_CORPUS=" in line, line
        assert "docs/development.md" in line, line


def test_every_module_that_reads_the_corpus_is_in_the_list() -> None:
    """A new test reading `shared/corpus` must go through tests/corpus.py, be marked `corpus` and
    be listed above."""
    readers = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if re.search(r"^from tests import (.+, )?corpus\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    )
    assert readers == sorted(READERS)
