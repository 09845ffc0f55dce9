"""What the ledger remembers, read for the console's Activity pages: read-only, its own connection.

Rules:
1. The ledger is opened read-only (`mode=ro`): the console never writes it (`daemon.notices`).
2. Lists are newest first and bounded; one envelope's page is its input row and every reply
   answering it, oldest first.
3. What one page shows is read in one read transaction on one connection: its lists agree with
   each other (no reply listed whose input a later commit added), and the file is opened once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slopd.shell.ledger import sql


class History:
    def __init__(self, ledger: Path) -> None:
        self.path = ledger

    def _read(self, *queries: tuple[str, tuple[Any, ...]]) -> list[list[dict[str, Any]]]:
        """Rule 3: each query's rows, all read on one connection in one read transaction."""
        if not self.path.exists():
            return [[] for _ in queries]
        connection = sql.connect(self.path, timeout=5.0, read_only=True)
        try:
            connection.execute(sql.BEGIN_READ)
            found = [[dict(row) for row in connection.execute(*query)] for query in queries]
            connection.execute(sql.COMMIT)
            return found
        finally:
            connection.close()

    def recent(self, limit: int = 100) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Rule 2: the newest inputs and the newest replies."""
        inputs, replies = self._read((sql.HISTORY_INPUTS, (limit,)), (sql.HISTORY_REPLIES, (limit,)))
        return inputs, replies

    def envelope(self, key: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """Rule 2: the input row (None if never seen) and its replies."""
        found, answers = self._read((sql.HISTORY_INPUT, (key,)), (sql.HISTORY_ANSWERS, (key,)))
        return (found[0] if found else None), answers
