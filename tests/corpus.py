"""Where the real third-party files of `shared/corpus/` are, for the tests that read them.

Rules:
1. They are read in place, never copied into the repository (their licences vary).
2. `SLOPD_CORPUS` names the corpus folder; by default it is `shared/corpus` beside the
   repository (`../shared/corpus`).
3. A test whose corpus file is not there skips, and its message says how to enable it.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests import ROOT

SHARED = ROOT.parent / "shared"  # beside the checkout
CORPUS = Path(os.environ.get("SLOPD_CORPUS", SHARED / "corpus"))
ENABLE = "set SLOPD_CORPUS=/path/to/shared/corpus to run it (docs/development.md)"


def missing(what: Path) -> str:
    """The skip message for a corpus file or folder that is not on this machine (rule 3)."""
    return f"no corpus at {what}: {ENABLE}"
