"""Lease state: SQLite in slopd's state dir, never in the hub (SPEC §11).

Rules:
1. Every operation is one `BEGIN IMMEDIATE` transaction: the write lock is taken before the
   lease row is read, so two processes never both see "no live lease" (a second one waits on
   the lock, up to `BUSY_TIMEOUT`, then reads what the first wrote).
2. `commit` admits the lease (`baton.leases.admit`) and runs the caller's write of the
   generation inside that same transaction, then releases the lease: a lease cannot expire
   or be taken over while its commit is being written, and a refused commit writes nothing.
3. The vessel's GENERATION is read inside the transaction too (the caller passes a reader).
4. The registry of boots (the seed's BATON_RECEIVED): each `slopd baton boot` that is not
   refused records which generation was booted and when; `boots` gives each vessel's last
   bootable one (a refused boot recorded by an older slopd is not a boot).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from slopd.baton import leases
from slopd.baton.leases import Held, Lease, Refused

FILE = "batons.sqlite"
BUSY_TIMEOUT = 30.0
DDL = """
CREATE TABLE IF NOT EXISTS leases (
    vessel TEXT PRIMARY KEY,
    lease_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires REAL NOT NULL,
    generation INTEGER NOT NULL,
    released INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS boots (
    vessel TEXT NOT NULL, generation INTEGER NOT NULL, booted_at REAL NOT NULL, bootable INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS boots_by_vessel ON boots (vessel, booted_at);
"""
_UPSERT = """
INSERT INTO leases (vessel, lease_id, holder, expires, generation, released) VALUES (?, ?, ?, ?, ?, 0)
ON CONFLICT (vessel) DO UPDATE SET lease_id = excluded.lease_id, holder = excluded.holder,
    expires = excluded.expires, generation = excluded.generation, released = 0
"""
T = TypeVar("T")


class Store:
    def __init__(self, state: Path, *, clock: Callable[[], float] = time.time) -> None:
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path, self.clock = state / FILE, clock

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.executescript(DDL)
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        finally:
            connection.close()

    @staticmethod
    def _lease(connection: sqlite3.Connection, vessel: str) -> Lease | None:
        row = connection.execute(
            "SELECT lease_id, holder, expires, generation, released FROM leases WHERE vessel = ?", (vessel,)
        ).fetchone()
        if row is None:
            return None
        return Lease(vessel, row[0], row[1], row[2], row[3], bool(row[4]))

    def get(self, vessel: str) -> Lease | None:
        with self._transaction() as connection:
            return self._lease(connection, vessel)

    def take(self, vessel: str, holder: str, ttl: float, generation: Callable[[], int]) -> Lease | Held:
        """Rule 1: a new lease for `vessel`, or who holds the live one."""
        with self._transaction() as connection:
            current = self._lease(connection, vessel)
            decided = leases.take(
                current,
                vessel=vessel,
                holder=holder,
                ttl=ttl,
                generation=generation(),
                now=self.clock(),
                random=os.urandom(32),
            )
            if isinstance(decided, Lease):
                connection.execute(
                    _UPSERT, (vessel, decided.lease_id, holder, decided.expires, decided.generation)
                )
            return decided

    def commit(
        self, vessel: str, lease_id: str, generation: int, marker: Callable[[], int], write: Callable[[], T]
    ) -> T | Refused:
        """Rule 2: `write()`'s result once admitted (the lease is then released), else the refusal."""
        with self._transaction() as connection:
            admitted = leases.admit(
                self._lease(connection, vessel),
                lease_id=lease_id,
                generation=generation,
                marker=marker(),
                now=self.clock(),
            )
            if isinstance(admitted, Refused):
                return admitted
            result = write()
            connection.execute("UPDATE leases SET released = 1 WHERE vessel = ?", (vessel,))
            return result

    def release(self, vessel: str, lease_id: str) -> bool:
        """Give up a lease early; only its own id releases it."""
        with self._transaction() as connection:
            done = connection.execute(
                "UPDATE leases SET released = 1 WHERE vessel = ? AND lease_id = ? AND released = 0",
                (vessel, lease_id),
            )
            return done.rowcount == 1

    def record_boot(self, vessel: str, generation: int, *, bootable: bool) -> None:
        """Rule 4."""
        with self._transaction() as connection:
            connection.execute(
                "INSERT INTO boots (vessel, generation, booted_at, bootable) VALUES (?, ?, ?, ?)",
                (vessel, generation, self.clock(), int(bootable)),
            )

    def boots(self) -> dict[str, Boot]:
        """Each vessel's last boot."""
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT vessel, generation, max(booted_at), bootable FROM boots"
                " WHERE bootable = 1 GROUP BY vessel"
            ).fetchall()
        return {row[0]: Boot(row[1], row[2], bool(row[3])) for row in rows}

    def leases(self) -> dict[str, Lease]:
        with self._transaction() as connection:
            names = [row[0] for row in connection.execute("SELECT vessel FROM leases")]
            found = {name: self._lease(connection, name) for name in names}
        return {name: lease for name, lease in found.items() if lease is not None}


@dataclass(frozen=True, slots=True)
class Boot:
    generation: int
    at: float
    bootable: bool
