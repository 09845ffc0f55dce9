"""The test suite; it mirrors the code (docs/development.md, "Tests").

`ROOT` is the repository's root, for a test that reads the checkout's own files: one place,
so a test module moved to another package still finds it (never count `parents[N]`).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
