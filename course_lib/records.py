"""Records that hold across processes and crashes: one SQLite file per store.

A list in memory loses everything when the process ends, and two processes each holding their
own list hand out the same record id and overwrite each other's file. The course's stores
(learning gaps, idempotency records, the audit log, note versions) therefore keep their records
in SQLite, from the standard library:

- WAL mode: readers never wait for the writer, and a process killed mid-write leaves the last
  committed state (the unfinished transaction is simply not there);
- one short transaction per operation, `BEGIN IMMEDIATE`: it takes the write lock first, so two
  processes doing check-then-write take turns instead of interleaving;
- constraints do the work a lock and an `if` would do: `UNIQUE` on an idempotency key makes a
  second record under the same key impossible, `PRIMARY KEY (path, version)` makes two writers
  of the same next version impossible, `CHECK` refuses a record that makes no sense.

A file that is not a SQLite database, is damaged, or belongs to another program is refused with
`StoreError` naming it, and is never written to: the records in it may still be rescued.

    database = Database(folder / "gaps.sqlite3", schema)
    with database.transaction() as db:
        db.execute("INSERT INTO ...", (...))
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

APPLICATION_ID = 0x0C0C5E12
"""Written into every store's header (`PRAGMA application_id`): a file without it is not ours."""

BUSY_TIMEOUT = 10.0
"""Seconds an operation waits for another process's transaction before it fails."""

_HEADER = b"SQLite format 3\x00"


class StoreError(Exception):
    """A store's file cannot be used: not a SQLite database, damaged, or another program's.
    The message names the file; the file is left exactly as it was."""


class Database:
    """One SQLite store: a file (shared by every process that opens it) or, with `file=None`,
    memory (this process only). `schema` is run when the store is created, and again (it must
    use `IF NOT EXISTS`) each time it is opened.

    One connection per `Database`, shared by threads under a lock. Open a new `Database` in each
    process (a connection must not cross a `fork`).
    """

    def __init__(self, file: Path | None, schema: str) -> None:
        """Raises:
        StoreError: `file` exists but is not a usable store (see the module docstring).
        """
        self.file = None if file is None else Path(file)
        self._lock = threading.Lock()
        self._connection = _open(self.file, schema)
        weakref.finalize(self, self._connection.close)  # closed even if nobody calls close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction that holds the write lock from its start: commits if the block ends,
        rolls back (nothing happened) if it raises.

        Raises:
            sqlite3.OperationalError: another process held the lock for over `BUSY_TIMEOUT` s.
        """
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.rollback()
                raise
            self._connection.commit()

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only query (it sees the last committed state)."""
        with self._lock:
            return self._connection.execute(sql, parameters).fetchall()

    def close(self) -> None:
        """Close the connection (committed records stay in the file)."""
        with self._lock:
            self._connection.close()


def _open(file: Path | None, schema: str) -> sqlite3.Connection:
    if file is None:
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        connection.executescript(schema)
        return connection
    _check_header(file)  # before SQLite touches it
    try:
        connection = sqlite3.connect(file, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as error:
        raise StoreError(f"{file}: cannot be opened as a store ({error})") from None
    try:
        _check_contents(connection, file)  # reads only: nothing is written before the checks pass
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")  # each commit reaches the disk before it returns
        connection.execute("BEGIN IMMEDIATE")  # two processes creating the store take turns
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for statement in _statements(schema):
            connection.execute(statement)
        connection.commit()
    except StoreError:
        connection.close()
        raise
    except sqlite3.Error as error:
        connection.close()
        raise StoreError(f"{file}: not a usable store ({error}); left untouched") from None
    return connection


def _check_header(file: Path) -> None:
    if not file.exists():
        return
    if not file.is_file():
        raise StoreError(f"{file}: not a file")
    try:
        with file.open("rb") as handle:
            header = handle.read(len(_HEADER))
    except OSError as error:
        raise StoreError(f"{file}: cannot be read ({error.strerror})") from None
    if header and header != _HEADER:
        raise StoreError(f"{file}: not a SQLite database (damaged or another kind of file); left untouched — "
                         "move it aside to start an empty store")  # fmt: skip


def _check_contents(connection: sqlite3.Connection, file: Path) -> None:
    problems = [row[0] for row in connection.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise StoreError(f"{file}: damaged ({'; '.join(problems)[:200]}); left untouched — "
                         "move it aside to start an empty store")  # fmt: skip
    (identity,) = connection.execute("PRAGMA application_id").fetchone()
    (tables,) = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if identity != APPLICATION_ID and tables:
        raise StoreError(f"{file}: a SQLite database of another program, not a course store; left untouched")


def _statements(schema: str) -> list[str]:
    return [statement.strip() for statement in schema.split(";") if statement.strip()]
