"""Every command's `--help` ends with one example (`slopd/cli/examples.py`), and every example is
a command line the parser accepts, of the command it documents."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Iterator

import pytest

from slopd.cli import parser as parser_module
from slopd.cli.examples import EXAMPLES


def commands(
    parser: argparse.ArgumentParser, path: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the tree, by the command typed after `slopd` (`""` for slopd itself)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}".strip())


TREE = dict(commands(parser_module.build()))


def slopd_lines(example: str) -> list[list[str]]:
    """The `slopd …` command lines of a shell example (pipes, `&&` and redirections aside)."""
    words = shlex.split(example.replace("|", " | "), comments=True)
    lines: list[list[str]] = [[]]
    for word in words:
        if word in {"|", "&&", ">>", ">"}:
            lines.append([])
        else:
            lines[-1].append(word)
    return [line for line in lines if line and line[0] == "slopd"]


def test_every_command_has_an_example_and_every_example_a_command() -> None:
    """A command added without an example, or an example of a command that is gone, fails here."""
    assert sorted(TREE) == sorted(EXAMPLES)


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_the_example_parses_as_the_command_it_documents(command: str) -> None:
    """The example is accepted by the real parser, and it runs this command (or, for a group, one
    of its verbs)."""
    lines = slopd_lines(EXAMPLES[command])
    assert lines, EXAMPLES[command]
    for argv in lines:
        parsed = parser_module.build().parse_args(argv[1:])
        assert parsed.handler
    typed = lines[-1][1 : 1 + len(command.split())]
    assert " ".join(typed) == command or command == ""


@pytest.mark.parametrize("command", sorted(TREE))
def test_the_help_ends_with_the_example(command: str) -> None:
    """`--help` shows the example verbatim, unwrapped, after the options."""
    help_text = TREE[command].format_help()
    assert help_text.rstrip().endswith(f"example:\n  {EXAMPLES[command]}")


def test_a_real_slopd_prints_the_example() -> None:
    """The installed command shows it too (the parser the user meets, not a test's)."""
    shown = subprocess.run(
        [sys.executable, "-m", "slopd", "baton", "lease", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"COLUMNS": "40", "PATH": "/usr/bin:/bin"},
    )
    assert f"example:\n  {EXAMPLES['baton lease']}\n" in shown.stdout


@pytest.mark.parametrize("command", sorted(TREE))
def test_every_argument_says_what_it_is(command: str) -> None:
    """No argument of `--help` (or of the CLI reference made from it) is left unexplained."""
    unexplained = [
        action.option_strings or action.dest
        for action in TREE[command]._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert unexplained == []
