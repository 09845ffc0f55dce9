"""The console's reads of the ledger go through an index (`shell.ledger.sql`): SQLite's own query
plan says so, so an Activity page never sorts or scans every input or reply."""

from __future__ import annotations

from pathlib import Path

import pytest

from slopd.shell.ledger import Ledger, sql


@pytest.mark.parametrize(
    ("statement", "parameters", "through"),
    [
        (sql.HISTORY_INPUTS, (100,), "SCAN inputs USING INDEX inputs_by_time"),  # read backwards, LIMIT
        (sql.HISTORY_INPUT, ("20260704t071553z-q",), "SEARCH inputs USING PRIMARY KEY"),
        (sql.HISTORY_ANSWERS, ("20260704t071553z-q",), "SEARCH replies USING INDEX replies_answering"),
    ],
    ids=["newest inputs", "one input", "its replies"],
)
def test_each_activity_read_goes_through_an_index_and_sorts_nothing(
    tmp_path: Path, statement: str, parameters: tuple[object, ...], through: str
) -> None:
    """The plan reads the named index, and builds no temporary B-tree for its ORDER BY."""
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).close()  # the schema, its indexes included
    connection = sql.connect(path, timeout=5.0, read_only=True)
    try:
        plan = [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)]
    finally:
        connection.close()
    assert any(step.startswith(through) for step in plan), plan
    assert not [step for step in plan if "TEMP B-TREE" in step], plan
