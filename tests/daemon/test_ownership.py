"""The daemon's modules share a frozen snapshot (`daemon.parts`) and write only their own fields."""

from __future__ import annotations

import ast
import dataclasses

import pytest

from slopd.daemon.parts import Health, Parts
from tests import ROOT

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
