"""argparse as `slopd` uses it: help as wide as the terminal, examples as written, `--version`.

Rules:
1. Nothing here imports more than argparse does without its help: the width is read from
   $COLUMNS or the terminal directly, not through `shutil` (argparse imports it, with bz2 and
   lzma, for the width, at every `add_argument`: ~4 ms a command).
2. An epilog that starts with `example:` is printed as written (a command line is not prose).
3. `--version` reads the package metadata only when asked, and prints on stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any


class Version(argparse.Action):
    """`--version`, reading the package metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        from slopd.shell.version import version  # noqa: PLC0415  # argparse alone for other commands

        print(f"slopd {version()}")  # on stdout, as argparse's own version action prints
        parser.exit()


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with the example epilog's lines kept as written (a command line is not prose)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """argparse's parser, its help as wide as the terminal without importing `shutil` (argparse
    imports it, with bz2 and lzma, for the width, at every `add_argument`: ~4 ms a command)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return _Formatter(prog=self.prog, width=_columns() - 2)


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else the terminal's, else 80."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    stream = sys.__stdout__
    try:
        return (os.get_terminal_size(stream.fileno()).columns if stream else 0) or 80
    except (AttributeError, ValueError, OSError):
        return 80
