"""The daemon's modules share a frozen snapshot (`daemon.parts`) and write only their own fields."""

from __future__ import annotations

import ast
import dataclasses

import pytest

from slopd import app
from slopd.daemon.parts import Health, Parts
from tests import ROOT
from tests.conftest import HubDir

SLOPD = ROOT / "slopd"
SCOPE = [*sorted((SLOPD / "daemon").glob("*.py")), SLOPD / "app.py", SLOPD / "cli" / "daemon.py"]


def foreign_writes(source: str) -> list[str]:
    """Assignments to a field of an object that is not `self` (or `cls`): `a.b = …`, `a.b.c += …`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for one in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(one, ast.Attribute) and not (
                    isinstance(one.value, ast.Name) and one.value.id in ("self", "cls")
                ):
                    found.append(f"{node.lineno}: {ast.unparse(one)}")
    return found


@pytest.mark.parametrize(
    ("source", "writes"),
    [
        ("self.parts = parts", []),
        ("parts.config = config", ["1: parts.config"]),
        ("self.parts.intake.settle = 1", ["1: self.parts.intake.settle"]),
        ("a, self.b = 1, 2\nx.y += 1", ["2: x.y"]),
        ("value: int = 1\nself.x: int = 2", []),
    ],
)
def test_the_check_finds_writes_into_other_objects(source: str, writes: list[str]) -> None:
    """Writing one's own field is fine; writing through another object (or a chain) is found."""
    assert foreign_writes(source) == writes


def test_no_daemon_module_writes_another_objects_fields() -> None:
    """`parts.config = …`, `parts.intake.settle = …`, `job.result = …` and the like are gone: each
    module changes what it owns, through its own methods."""
    found = {
        path.relative_to(SLOPD).as_posix(): writes
        for path in SCOPE
        if (writes := foreign_writes(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_parts_is_a_frozen_snapshot() -> None:
    """A reload replaces `Parts` (`dataclasses.replace`); nothing assigns into one."""
    assert dataclasses.fields(Parts)
    assert Parts.__dataclass_params__.frozen  # type: ignore[attr-defined]
    names = {field.name for field in dataclasses.fields(Parts)}
    assert not names & {"intake", "gate", "policy", "in_flight", "last_error", "recheck_homes"}


def test_health_keeps_the_last_error_behind_a_method() -> None:
    """The last error is reported by whoever met it, and read by the loop's STATUS line."""
    health = Health()
    assert health.last_error is None
    health.failed("lane inbox/ unreadable")
    health.failed("a batch of 3 inputs failed")
    assert health.last_error == "a batch of 3 inputs failed"


def test_a_reload_hands_the_new_snapshot_to_every_module_that_keeps_one(hub: HubDir) -> None:
    """Rule 1 of `daemon.parts`: after a reload no module of the daemon still holds the old `Parts`
    (a module left out would go on with the config of before)."""
    hub.write_config("settle = 0.1\n")
    with app.start(hub.root, config_path=hub.config, state=hub.state, log_stream=None) as opened:
        daemon = opened.daemon()
        before = daemon.parts
        hub.write_config("settle = 0.2\n")
        daemon._reload()  # what the loop does at SIGHUP
        assert daemon.parts is not before
        assert daemon.parts.config.settle == 0.2
        holders = {name: module for name, module in vars(daemon).items() if hasattr(module, "parts")}
        assert {"arrivals", "homing", "runs", "gathering", "interpreter", "approvals"} <= set(holders)
        stale = [name for name, module in holders.items() if module.parts is not daemon.parts]
        assert stale == []
