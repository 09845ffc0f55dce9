"""What the ledger remembers, read for the console's Activity pages: read-only, its own connection.

Rules:
1. The ledger is opened read-only (`mode=ro`): the console never writes it (`daemon.notices`).
2. Lists are newest first and bounded; one envelope's page is its input row and every reply
   answering it, oldest first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slopd.shell.ledger import sql


class History:
    def __init__(self, ledger: Path) -> None:
        self.path = ledger

    def _query(self, statement: str, parameters: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        connection = sql.connect(self.path, timeout=5.0, read_only=True)
        try:
            return [dict(row) for row in connection.execute(statement, parameters)]
        finally:
            connection.close()

    def inputs(self, limit: int = 100) -> list[dict[str, Any]]:
        return self._query(sql.HISTORY_INPUTS, (limit,))

    def replies(self, limit: int = 100) -> list[dict[str, Any]]:
        return self._query(sql.HISTORY_REPLIES, (limit,))

    def envelope(self, key: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """Rule 2: the input row (None if never seen) and its replies."""
        found = self._query(sql.HISTORY_INPUT, (key,))
        answers = self._query(sql.HISTORY_ANSWERS, (key,))
        return (found[0] if found else None), answers
