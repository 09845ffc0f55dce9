"""Run `slopd.cli.main` in this process with its exit status and output captured."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from slopd.cli import main


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run(*argv: str) -> Result:
    """`main(argv)` in this process, with its exit status and output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return Result(code, out.getvalue(), err.getvalue())
