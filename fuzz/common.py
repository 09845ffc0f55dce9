"""What the fuzz harnesses and the corpus builder share (no atheris import here).

The SSHSIG harness verifies every input against `MESSAGE`; the corpus builder signs `MESSAGE`
with the key derived from `KEY_SEED`, so the seed corpus holds signatures that really verify and
the fuzzer starts from the deepest path (a good signature) rather than from the armor checks.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

FUZZ_DIR = Path(__file__).resolve().parent
CORPUS_DIR = FUZZ_DIR / "corpus"
REPO_DIR = FUZZ_DIR.parent

MESSAGE = (
    b"---\n"
    b"protocol: slop.v1\n"
    b"id: 20260704t080000z-fuzz-order\n"
    b"type: instigate\n"
    b"from: alice@example.com\n"
    b"to: watcher\n"
    b"in_reply_to: null\n"
    b"created_at: 2026-07-04T08:00:00Z\n"
    b"auth: signed:fuzz-order.md.sig\n"
    b"action: hello\n"
    b"---\n"
    b"Run the hello action.\n"
)
KEY_SEED = hashlib.sha256(b"slopd fuzz corpus key (never use it for anything real)").digest()
PRINCIPAL = "alice@example.com"


def libfuzzer_argv(argv: list[str], harness: str) -> list[str]:
    """`argv` for `atheris.Setup`: with no corpus directory given, a fresh work directory
    (where libFuzzer writes the inputs it finds; printed) and the read-only seed corpus."""
    if any(not arg.startswith("-") for arg in argv[1:]):
        return argv
    work = tempfile.mkdtemp(prefix=f"slopd-fuzz-{harness}-")
    print(f"new inputs go to {work}; seed corpus {CORPUS_DIR / harness}", flush=True)
    return [*argv, work, str(CORPUS_DIR / harness)]
