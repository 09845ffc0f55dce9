"""The ledger has one owner: its SQL lives in `shell/ledger/sql.py` alone (import-linter holds
`sqlite3` to that module and the Baton's own store; this holds the SQL text)."""

from __future__ import annotations

import ast
import re

import pytest

from slopd.shell.ledger import sql
from tests import ROOT

SLOPD = ROOT / "slopd"
OWNERS = {
    "shell/ledger/sql.py",  # STATE/ledger.sqlite3
    "baton/store.py",  # STATE/batons.sqlite: the Baton's leases, a database of its own
}
SQL = re.compile(
    r"\s*(SELECT\s.+\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX)|"
    r"ALTER\s+TABLE\s|PRAGMA\s|BEGIN(\s+IMMEDIATE)?\s*$|COMMIT\s*$|ROLLBACK\s*$)",
    re.DOTALL,
)


def sql_strings(source: str) -> list[str]:
    """The string constants of `source` (f-string parts too) that read as SQL."""
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.match(node.value)
    ]


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('x = "SELECT * FROM inputs WHERE key = ?"', 1),
        ('db.execute(f"UPDATE receipts SET state = {s}")', 1),
        ('db.execute("ROLLBACK")', 1),
        ('db.execute("PRAGMA journal_mode=WAL")', 1),
        ('"""Select what to show from the feed."""', 0),
        ('print("Updated: the receipt is written")', 0),
    ],
)
def test_the_detector_tells_sql_from_prose(source: str, found: int) -> None:
    """The check sees statements (the house writes SQL keywords in capitals), in f-strings too, and
    not English sentences."""
    assert len(sql_strings(source)) == found


def test_no_module_but_the_owners_holds_sql() -> None:
    """Every SQL string of slopd is in the ledger's `sql` module or the Baton's store."""
    holders = {
        path.relative_to(SLOPD).as_posix()
        for path in SLOPD.rglob("*.py")
        if sql_strings(path.read_text(encoding="utf-8"))
    }
    assert holders == OWNERS


def test_the_owner_names_every_statement_the_package_runs() -> None:
    """The ledger's statements are named constants of `sql` (a sample of each table's users)."""
    for name in ("RECORD", "ADVANCE", "ADD_REPLY", "CLAIM", "FEED_AFTER", "MAKE_CURSOR", "HISTORY_INPUTS"):
        assert SQL.match(getattr(sql, name)), name
