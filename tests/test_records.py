"""records.Database: one SQLite file per store; a damaged file is refused, named, and left alone."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.notes_server import GapStore
from course_lib.notes_store import NotesStore
from course_lib.records import Database, StoreError

REPO = Path(__file__).resolve().parent.parent
SCHEMA = "CREATE TABLE IF NOT EXISTS items (key TEXT PRIMARY KEY, n INTEGER NOT NULL CHECK (n >= 0))"


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_transaction_commits_or_leaves_nothing(tmp_path):
    database = Database(tmp_path / "s.sqlite3", SCHEMA)
    with database.transaction() as db:
        db.execute("INSERT INTO items VALUES ('a', 1)")
    with pytest.raises(sqlite3.IntegrityError), database.transaction() as db:
        db.execute("INSERT INTO items VALUES ('b', 2)")
        db.execute("INSERT INTO items VALUES ('a', 3)")  # UNIQUE: the whole transaction goes
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"), database.transaction() as db:
        db.execute("INSERT INTO items VALUES ('c', -1)")
    assert database.rows("SELECT key, n FROM items") == [("a", 1)]
    database.close()
    reopened = Database(tmp_path / "s.sqlite3", SCHEMA)
    assert reopened.rows("SELECT key FROM items") == [("a",)]
    assert reopened.rows("PRAGMA journal_mode") == [("wal",)]
    reopened.close()


def test_memory_needs_no_file(tmp_path):
    database = Database(None, SCHEMA)
    with database.transaction() as db:
        db.execute("INSERT INTO items VALUES ('a', 1)")
    assert database.rows("SELECT n FROM items") == [(1,)] and list(tmp_path.iterdir()) == []


def damaged_sqlite(path: Path) -> None:
    """A real store whose pages were overwritten after its header: SQLite calls it malformed."""
    database = Database(path, SCHEMA)
    with database.transaction() as db:
        db.executemany("INSERT INTO items VALUES (?, ?)", [(f"key {i}" * 20, i) for i in range(500)])
    database.close()
    data = bytearray(path.read_bytes())
    data[4096:12288] = b"\xff" * 8192
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"records": [', "not a SQLite database"),
        (b"SQLite format 2\x00" + b"\x00" * 100, "not a SQLite database"),
        (None, "damaged"),
    ],
)
def test_a_damaged_file_is_refused_by_name_and_left_untouched(tmp_path, content, message):
    path = tmp_path / "s.sqlite3"
    if content is None:
        damaged_sqlite(path)
    else:
        path.write_bytes(content)
    before = fingerprint(path)
    with pytest.raises(StoreError) as refused:
        Database(path, SCHEMA)
    assert str(path) in str(refused.value) and message in str(refused.value)
    assert "left untouched" in str(refused.value)
    assert fingerprint(path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite3"]


def test_another_programs_database_is_not_taken_over(tmp_path):
    path = tmp_path / "theirs.sqlite3"
    with sqlite3.connect(path) as theirs:
        theirs.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    theirs.close()
    before = fingerprint(path)
    with pytest.raises(StoreError, match="another program"):
        Database(path, SCHEMA)
    assert fingerprint(path) == before


def test_the_stores_refuse_a_damaged_file_and_name_it(tmp_path):
    (tmp_path / "gaps.sqlite3").write_bytes(b"garbage, not a database")
    with pytest.raises(StoreError, match="gaps.sqlite3: not a SQLite database"):
        GapStore(tmp_path)
    root = tmp_path / "workspace"
    root.mkdir()
    (tmp_path / "workspace.notes.sqlite3").write_bytes(b"garbage, not a database")
    with pytest.raises(StoreError, match="workspace.notes.sqlite3: not a SQLite database"):
        NotesStore(root)
    assert (tmp_path / "gaps.sqlite3").read_bytes() == (tmp_path / "workspace.notes.sqlite3").read_bytes()


@pytest.mark.parametrize("damage", ["gaps.sqlite3", "gaps.json"])
def test_the_server_stops_at_startup_naming_the_damaged_file(tmp_path, damage):
    (tmp_path / damage).write_text('{"records": [')  # not SQLite; and not a whole JSON document either
    before = fingerprint(tmp_path / damage)
    done = subprocess.run([sys.executable, "-m", "course_lib.notes_server", "--gaps", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert f"{tmp_path / damage}:" in done.stderr and "left untouched" in done.stderr
    assert "Traceback" not in done.stderr
    assert fingerprint(tmp_path / damage) == before and sorted(p.name for p in tmp_path.iterdir()) == [damage]
