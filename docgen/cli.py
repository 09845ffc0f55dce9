"""The CLI reference: every command of `slopd`, its options and its example, from the parser.

The tree is the one `slopd` builds (`slopd.cli.parser.build`); the examples are the ones its
`--help` shows (`slopd.cli.examples`). Usage lines are formatted at a fixed width, so the page
does not depend on the terminal it was made in.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from docgen.markdown import anchor, cell, code, table
from slopd.cli import parser as parser_module
from slopd.cli.examples import EXAMPLES

_WIDTH = 100


def _tree(
    parser: argparse.ArgumentParser, path: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser, dict[str, str]]]:
    """Every parser, by the command typed after `slopd`, with its subcommands' one-line help."""
    subcommands: dict[str, str] = {}
    children: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                subcommands[name] = helps.get(name, "")
                children.append((f"{path} {name}".strip(), sub))
    yield path, parser, subcommands
    for child_path, child in children:
        yield from _tree(child, child_path)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "—"
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return " \\| ".join(code(str(choice)) for choice in action.choices)
    name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    return code(name + (" …" if action.nargs in ("+", "*") else ""))


def _notes(action: argparse.Action, groups: dict[int, argparse._MutuallyExclusiveGroup]) -> str:
    notes = []
    if action.help and action.help != argparse.SUPPRESS:
        notes.append(cell(action.help.replace("%%", "%")))
    group = groups.get(id(action))
    if group is not None:
        others = ", ".join(code(other.option_strings[0]) for other in group._group_actions)
        notes.append(f"one of {others}" + (", required" if group.required else ""))
    elif action.required and action.option_strings:
        notes.append("required")
    if action.nargs in ("+", "*") and not action.option_strings:
        notes.append("one or more" if action.nargs == "+" else "any number")
    if action.nargs == "?":
        notes.append("optional")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    default = action.default
    said = "default" in (action.help or "")
    if (
        action.nargs != 0
        and default not in (None, [], argparse.SUPPRESS)
        and not action.required
        and not said
    ):
        notes.append(f"default {code(str(default))}")
    return "; ".join(notes) or "—"


def _options(parser: argparse.ArgumentParser) -> str:
    groups = {
        id(action): group for group in parser._mutually_exclusive_groups for action in group._group_actions
    }
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.option_strings:
            names = ", ".join(code(option) for option in action.option_strings)
        else:
            names = code(action.metavar if isinstance(action.metavar, str) else action.dest.upper())
        rows.append((names, _value(action), _notes(action, groups)))
    return table(("argument", "value", "what it is"), rows) if rows else ""


def reference() -> str:
    """Every command, in the parser's order: a heading, what it does, usage, arguments, example."""
    root = parser_module.build()
    parts = []
    for path, parser, subcommands in _tree(root):
        title = f"slopd {path}".strip()
        parts.append(f"## {title}\n")
        if parser.description:
            text = parser.description[0].upper() + parser.description[1:]
            parts.append(text + ("" if text.endswith(".") else ".") + "\n")
        parts.append(f"```\n{_usage(parser)}\n```\n")
        if subcommands:
            rows = [
                (f"[{code(name)}](#{anchor(f'{title} {name}')})", cell(text))
                for name, text in subcommands.items()
            ]
            parts.append(table(("command", "what it does"), rows))
        options = _options(parser)
        if options:
            parts.append(options)
        if path in EXAMPLES:
            parts.append(f"Example:\n\n```sh\n{EXAMPLES[path]}\n```\n")
    return "\n".join(parts)
