"""Where the class store is and how a call gets a connection, on either engine (classroom/store.py's SQL runs on both).

- SQLite (the default): one file (WAL mode) in the data folder, $ATTENTION_LAB_DATA, default ./data beside app.py.
  Several server processes on one machine (serve.py's replicas) share it safely: every call opens its own
  connection, writes are single short transactions, and a writer waits up to `busy_seconds` for the lock.
- PostgreSQL, when $ATTENTION_LAB_DATABASE_URL holds a DSN (`postgresql://user:password@host:5432/dbname`): for
  replicas on several machines (deploy/README.md). Each process keeps a few connections open (a new one forks a
  server process); a call waits up to `busy_seconds` for a free connection and for a row lock.
A write that still cannot get the lock (or a database that cannot be reached) raises StoreBusy, which the UI turns
into a message: an answer is stored or refused, never lost silently.

Every statement is written once, in SQL both engines accept (`INSERT ... ON CONFLICT DO NOTHING`, CASE, CAST),
with SQLite's `?` placeholders and `BEGIN IMMEDIATE`; `to_postgres` translates those two in one place, and
`postgres_ddl` turns SQLite's REAL (8 bytes there) into PostgreSQL's DOUBLE PRECISION (REAL is 4 bytes there: unix
seconds would be rounded to minutes).
"""
from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from classroom.errors import StoreBusy

DATA_ENV = "ATTENTION_LAB_DATA"  # folder of the database file
DATABASE_URL_ENV = "ATTENTION_LAB_DATABASE_URL"  # a PostgreSQL DSN: the store is that database instead of the file
DEFAULT_DATA = Path(__file__).resolve().parents[1] / "data"
DB_NAME = "classroom.sqlite3"
POOL_ENV = "ATTENTION_LAB_DATABASE_POOL"  # PostgreSQL connections per process (default 8)
POSTGRES_CONNECTIONS = 8  # per process: more script threads than this wait for one (a burst queues, never piles up)
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def data_folder() -> Path:
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


def store_location() -> str:
    """Where the class store is: the DSN in $ATTENTION_LAB_DATABASE_URL, else the SQLite file in the data folder."""
    return os.environ.get(DATABASE_URL_ENV) or str(data_folder() / DB_NAME)


def is_postgres(location: str | Path) -> bool:
    return str(location).startswith(POSTGRES_SCHEMES)


# SQLite-only words a statement must not use: the same statement runs on PostgreSQL (use ON CONFLICT DO NOTHING/UPDATE).
_SQLITE_ONLY = re.compile(r"\bINSERT\s+OR\s+(IGNORE|REPLACE)\b|\bPRAGMA\b|\bAUTOINCREMENT\b", re.IGNORECASE)


def to_postgres(sql: str) -> str:
    """A statement in the dialect this module writes -> PostgreSQL's: `?` -> `%s` (psycopg's placeholder; a literal
    `%` doubled), BEGIN IMMEDIATE -> BEGIN (PostgreSQL locks rows, not the file). Statements hold no `?` in text."""
    if _SQLITE_ONLY.search(sql):
        raise ValueError(f"SQLite-only SQL in a statement both engines run: {sql!r}")
    return re.sub(r"\bBEGIN IMMEDIATE\b", "BEGIN", sql).replace("%", "%%").replace("?", "%s")


def postgres_ddl(sql: str) -> str:
    """SQLite's REAL is 8 bytes, PostgreSQL's 4 (unix seconds would round to minutes): DOUBLE PRECISION there."""
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)


class Database:
    """One connection of either engine, taking statements in this module's dialect (see `to_postgres`)."""

    def __init__(self, connection: Any, postgres: bool):
        self.connection = connection
        self.postgres = postgres

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        """-> a cursor (fetchone, fetchall, rowcount, iteration: the same on both engines)."""
        if self.postgres:
            return self.connection.execute(to_postgres(sql), parameters or None)
        return self.connection.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        if self.postgres:
            self.connection.cursor().executemany(to_postgres(sql), list(rows))
        else:
            self.connection.executemany(sql, rows)


class _PostgresPool:
    """Open connections to one PostgreSQL database, shared by a process's script threads: at most `size` in use at
    once; a call past them waits up to `wait` seconds, then StoreBusy. Connections are in autocommit mode, so a
    statement outside BEGIN ... COMMIT is its own transaction, as with SQLite's isolation_level=None. A connection the
    server dropped (a restart, a failover) fails the one call that finds it (StoreBusy: "answer again") and is
    replaced on the next."""

    def __init__(self, dsn: str, size: int, wait: float):
        self.dsn, self.wait = dsn, wait
        self.idle: list[Any] = []
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(size)

    def _open(self) -> Any:
        import psycopg  # only a store on PostgreSQL needs it

        connection = psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(2, round(self.wait)))
        # A statement waits for a row lock at most `wait`, then fails (StoreBusy): the same promise as SQLite's timeout.
        milliseconds = int(self.wait * 1000)
        connection.execute(f"SET lock_timeout = {milliseconds}")
        connection.execute(f"SET statement_timeout = {2 * milliseconds}")
        return connection

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        import psycopg
        from psycopg.pq import TransactionStatus

        if not self.slots.acquire(timeout=self.wait):
            raise StoreBusy(f"no free database connection within {self.wait:g} s")
        connection = None
        try:
            with self.lock:
                connection = self.idle.pop() if self.idle else None
            if connection is None or connection.closed or connection.broken:
                connection = self._open()
            yield connection
        except psycopg.OperationalError as error:  # lock or statement timeout, server gone: nothing was written
            raise StoreBusy(str(error)) from error
        finally:
            if connection is not None and not (connection.closed or connection.broken):
                try:
                    if connection.info.transaction_status != TransactionStatus.IDLE:
                        connection.execute("ROLLBACK")  # a call that failed inside BEGIN: leave nothing half done
                    with self.lock:
                        self.idle.append(connection)
                except psycopg.Error:
                    connection.close()
            self.slots.release()

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for connection in idle:
            connection.close()



class Connections:
    """The connections of one store: `connection()` gives one for a call, in autocommit mode (a statement outside
    BEGIN ... COMMIT commits by itself). SQLite: a new connection each call (sessions run in many threads and
    processes); PostgreSQL: one from the process's pool."""

    def __init__(self, location: str, busy_seconds: float):
        self.postgres = is_postgres(location)
        self.path = None if self.postgres else Path(location)
        self.busy_seconds = busy_seconds
        if self.postgres:
            self._pool = _PostgresPool(location, int(os.environ.get(POOL_ENV) or POSTGRES_CONNECTIONS), busy_seconds)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Database]:
        if self.postgres:
            with self._pool.connection() as connection:
                yield Database(connection, postgres=True)
            return
        db = sqlite3.connect(self.path, timeout=self.busy_seconds, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a process crash, fast
            yield Database(db, postgres=False)
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise StoreBusy(str(error)) from error
            raise
        finally:
            db.close()

    def close(self) -> None:
        """Close the connections kept open (PostgreSQL); SQLite holds none between calls."""
        if self.postgres:
            self._pool.close()
