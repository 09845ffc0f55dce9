"""The references of the documentation are what the code makes now (`docgen`, `make docs-refs`),
and each lists everything its source holds: every command and option, every config key, every
MCP tool, every HTTP operation, every log event."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import anyio
import pytest

from docgen import blocks, config, events, http, mcp, modules
from docgen.__main__ import main
from slopd.cli import parser as parser_module
from slopd.cli.examples import EXAMPLES
from slopd.shell.config import parse
from tests import ROOT


def page(name: str) -> str:
    return (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("path", blocks.pages())
def test_every_generated_page_is_what_the_code_makes_now(path: str) -> None:
    """A change to the code without regenerating fails here, saying the one command that mends it."""
    current = (ROOT / path).read_text(encoding="utf-8")
    assert current == blocks.rendered(path), f"{path} is stale: run `make docs-refs` (python -m docgen)"


def test_a_change_to_the_code_makes_its_page_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not vacuous: an example changed in the code (and not regenerated) is caught,
    and `python -m docgen --check` exits 1 naming the page."""
    assert blocks.stale() == []
    assert main(["--check"]) == 0
    monkeypatch.setitem(EXAMPLES, "init", "slopd init ~/elsewhere")
    assert blocks.stale() == ["docs/reference/cli.md"]
    assert main(["--check"]) == 1


def test_the_cli_reference_has_every_command_and_every_option() -> None:
    """Each parser of the tree has its heading, each of its option strings and its example."""
    text = page("cli.md")
    stack: list[tuple[str, argparse.ArgumentParser]] = [("", parser_module.build())]
    while stack:
        path, parser = stack.pop()
        section = text.split(f"\n## {f'slopd {path}'.strip()}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [(f"{path} {name}".strip(), sub) for name, sub in action.choices.items()]
            elif not isinstance(action, argparse._HelpAction):
                for option in action.option_strings:
                    assert f"`{option}`" in section, (path, option)
        assert f"```sh\n{EXAMPLES[path]}\n```" in section


def test_the_config_reference_lists_every_key_the_parser_takes_and_each_default_is_accepted() -> None:
    """Every key is in its table's section, and setting a key to the default the reference shows
    is a config `parse` accepts (so the reference names real keys, in the right tables)."""
    text = page("config.md")
    for key in config.keys(config.PROBE):
        table_name, _, name = key.name.rpartition(".")
        heading = f"### `[{table_name}]`" if table_name else "### Top level"
        section = text.split(f"\n{heading}\n", 1)[1].split("\n### ", 1)[0]
        assert f"| `{name}` |" in section, key.name
        if key.default is None or key.default in ((), {}):
            continue
        line = f"{name} = {json.dumps(list(key.default) if isinstance(key.default, tuple) else key.default)}"
        if table_name:
            document = config.PROBE.replace(f"[{table_name}]\n", f"[{table_name}]\n{line}\n", 1)
        else:
            document = f"{line}\n{config.PROBE}"
        assert line in document, key.name
        parse(document)


def test_a_table_the_probe_misses_or_a_check_without_a_docstring_stops_the_generator() -> None:
    """The config reference cannot silently lose a table's keys, or show a type it does not know."""
    without_auth = config.PROBE.replace("[auth]\n", "")
    with pytest.raises(config.SchemaError, match=r"\[auth\] is not in docgen/config.py's PROBE"):
        config.keys(without_auth)
    found = config.keys()
    undocumented = next(key for key in found if key.name == "auth.namespace")

    def check(value: object, key: str) -> object:
        return value

    with pytest.raises(config.SchemaError, match=r"auth.namespace: its check .*check has no docstring"):
        config._type(check, undocumented.name)


def test_the_mcp_reference_has_every_tool_with_every_argument_and_result_field() -> None:
    """The server's own `tools/list`: each tool's section names each argument and result field."""
    text = page("mcp.md")
    for tool in anyio.run(mcp._server().list_tools):
        section = text.split(f"\n## {tool.name}\n", 1)[1].split("\n## ", 1)[0]
        for name in tool.input_schema.get("properties", {}):
            assert f"| `{name}` |" in section, (tool.name, name)
        for name in (tool.output_schema or {}).get("properties", {}):
            assert f"| `{name}` |" in section, (tool.name, name)
        assert f"[`{tool.name}`](#{tool.name})" in text


def test_the_http_reference_has_every_operation_of_the_openapi_document() -> None:
    text = page("http.md")
    for path, item in http.document()["paths"].items():
        for method in item:
            if method in ("get", "head", "post", "put", "patch", "delete"):
                assert f"\n### {method.upper()} {path}\n" in text


def test_the_log_reference_has_every_event_including_forwarded_ones() -> None:
    """Events logged directly and those handed to the group commit to log once moved."""
    text = page("log-events.md")
    listed = set(re.findall(r"^\| `([a-z_.]+)` \|", text, flags=re.MULTILINE))
    assert {"envelope.received", "reply.written", "envelope.archived", "sidecar.archived", "notify"} <= listed
    assert listed == set(events.collect())


def test_an_event_the_generator_cannot_read_stops_it(tmp_path: Path) -> None:
    """A log call whose event is computed, outside the known forwarders, is an error naming its
    line; literal events, forwarded ones and other `.error(...)` calls are read as they are."""
    package = tmp_path / "slopd"
    package.mkdir()
    (package / "fine.py").write_text(
        "log.info('thing.done', count=1)\n"
        "self.log.bind(id=1).warning('thing.odd')\n"
        "commits.move(batch, move, input.log, 'thing.moved')\n"
        "parser.error(message)\n"
        "replies.error(answering=1)\n",
        encoding="utf-8",
    )
    found = events.collect(package)
    assert sorted(found) == ["thing.done", "thing.moved", "thing.odd"]
    assert found["thing.done"].fields == {"count"}
    (package / "bad.py").write_text("event = 'x.y'\nlogger.info(event)\n", encoding="utf-8")
    with pytest.raises(events.EventError, match=r"slopd/bad.py:2: a log call whose event is not a literal"):
        events.collect(package)


def test_events_the_handler_plans_as_data_are_listed(tmp_path: Path) -> None:
    """Rule 4 of `docgen.events`: `log("LEVEL", "event", …)` and `Move(…, "event", pairs)` of
    `core.plans` are events too, at their level, with their fields."""
    package = tmp_path / "slopd"
    package.mkdir()
    (package / "core.py").write_text(
        "effects = [log('warning', 'thing.held', reason=why),\n"
        "    Move(lane, name, None, 'thing.moved', (('sidecar', name), ('resumed', True))),\n"
        "    log(level, 'not.a.level.literal'), Move(lane, name)]\n",
        encoding="utf-8",
    )
    found = events.collect(package)
    assert sorted(found) == ["thing.held", "thing.moved"]
    assert (found["thing.held"].levels, found["thing.held"].fields) == ({"warning"}, {"reason"})
    assert (found["thing.moved"].levels, found["thing.moved"].fields) == ({"info"}, {"sidecar", "resumed"})


def test_the_design_pages_module_map_lists_every_module_of_slopd() -> None:
    """`docgen.modules` rule 1: each module's file name appears under its package's heading."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = text.split("<!-- generated: module map -->", 1)[1].split("<!-- end generated -->", 1)[0]
    package = ROOT / "slopd"
    for path in package.rglob("*.py"):
        if path.name == "__init__.py":
            heading = path.parent.relative_to(package.parent).as_posix() + "/"
            assert f"\n{heading}" in block, heading
        elif path.parent == package:
            assert f"\nslopd/{path.name}" in block, path
        else:
            assert f"\n  {path.name} " in block, path
    assert "`slopd.core` may not import `sqlite3`" in text  # the contracts, listed from pyproject.toml


def test_a_module_without_a_docstring_stops_the_module_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`docgen.modules` rule 2: the map names the module that says nothing of itself."""
    folder = tmp_path / "slopd" / "core"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "good.py").write_text('"""Does one thing. Its rules follow."""\n', encoding="utf-8")
    monkeypatch.setattr(modules, "ROOT", tmp_path)
    assert modules._folder(folder) == ["slopd/core/", "  good.py                Does one thing."]
    (folder / "mute.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(modules.ModuleError, match=r"slopd/core/mute.py has no docstring"):
        modules._folder(folder)


def test_a_page_without_its_marker_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part that lost its place on its page is reported, not silently dropped."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "admission.md").write_text("# Admission\n", encoding="utf-8")
    monkeypatch.setattr(blocks, "ROOT", tmp_path)
    with pytest.raises(blocks.PageError, match=r"docs/admission.md holds the generated parts \[\]"):
        blocks.rendered("docs/admission.md")
