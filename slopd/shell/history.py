"""What the ledger remembers, read for the console's Activity pages: read-only, its own connection.

Rules:
1. The ledger is opened read-only (`mode=ro`): the console never writes it (`daemon.notices`).
2. Lists are newest first and bounded; one envelope's page is its input row and every reply
   answering it, oldest first.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

_INPUTS = (
    "SELECT key, id, lane, file, sha256, type, sender, mode, decision, status, archive, received_at,"
    " updated_at FROM inputs"
)
_REPLIES = "SELECT rowid AS seq, id, in_reply_to, type, class, path, written_at, recipient FROM replies"


class History:
    def __init__(self, ledger: Path) -> None:
        self.path = ledger

    def _query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5.0)
        try:
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute(sql, parameters)]
        finally:
            connection.close()

    def inputs(self, limit: int = 100) -> list[dict[str, Any]]:
        return self._query(f"{_INPUTS} ORDER BY received_at DESC, key DESC LIMIT ?", (limit,))

    def replies(self, limit: int = 100) -> list[dict[str, Any]]:
        return self._query(f"{_REPLIES} ORDER BY rowid DESC LIMIT ?", (limit,))

    def envelope(self, key: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """Rule 2: the input row (None if never seen) and its replies."""
        found = self._query(f"{_INPUTS} WHERE key = ?", (key,))
        answers = self._query(f"{_REPLIES} WHERE lower(in_reply_to) = ? ORDER BY rowid", (key,))
        return (found[0] if found else None), answers
