"""`python -m docgen` (`make docs-refs`) rewrites the generated references; `--check`: exit 1 if stale."""

from __future__ import annotations

import sys

from docgen.blocks import REGENERATE, stale, write


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = stale()
        for page in found:
            print(f"{page}: stale; run `{REGENERATE}`", file=sys.stderr)
        return 1 if found else 0
    if argv:
        print("usage: python -m docgen [--check]", file=sys.stderr)
        return 2
    for page in write():
        print(f"rewrote {page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
