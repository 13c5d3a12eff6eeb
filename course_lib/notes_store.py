"""Writing notes safely: versions, conditional writes, idempotency, an audit log — and two tools.

A read that goes wrong spoils an answer; a write that goes wrong changes the user's data. So the
write side keeps reading and writing apart, as two execution-layer tools (`notes_tools(store)`):

    preview_note_update   read-only    the target, its current version, the exact arguments to
                                       approve and a unified diff of the effect; changes nothing
    apply_note_update     side effect  runs only with an approval of this exact action; uses the
                                       action id (`CallContext.action_id`) as its idempotency key;
                                       writes only if the note is still at `expected_version`

    store = NotesStore(scratch_workspace(), clock=ManualClock())
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    preview = await executor.execute("call_1", "preview_note_update", preview_text, Session("alice"))
    show_diff(preview.result["data"]["diff"])   # the effect, as the learner reads it
    execution = await executor.execute("call_2", "apply_note_update", arguments_text, Session("alice"))

Tool results are what the model reads, so they are English in both editions; `show_diff`
prints a preview's diff with its two header labels in the edition's language.

`NotesStore` is the data side:

- versions: every note has a version number, starting at 1 the first time any store sees it and
  going up by one with each write; a change made behind the store's back (the hash of the text on
  disk differs from the last one recorded) also counts as a newer version;
- `write(path, content, expected_version)` is conditional: a stale version is a CONFLICT, so a
  writer that read an old version can never overwrite newer data;
- `apply(..., key=...)` writes once per idempotency key: the same key with the same arguments
  writes once and returns the stored result; the same key with different arguments is a
  CONFLICT and writes nothing;
- `audit`: an `AuditLog` of `AuditRecord`s — who (the session's user), what (tool and exact
  arguments), when (from the injectable `clock`) and the result ("ok" or the error code).

Nothing is lost across processes or crashes: versions, idempotency records and the audit log
are rows in one SQLite file beside the folder (`records.Database`), and a write is a
compare-and-swap under the database's write lock — read the note, hash it, compare with the
version the caller expects, write a temporary file, rename it over the note, record the new
version, commit. So two stores on one folder (two kernels, two servers) agree on every version,
and a process killed mid-write leaves either the old note or the new one, never half; its
temporary file is made outside the notes folder (`SCRATCH_SUFFIX`), so no server over the folder
can serve it, and it is removed when a store next opens.

The audit covers refusals too. The `Executor` knows nothing about auditing, so `AuditedExecutor`
(an `Executor`) records one `AuditRecord` after every call to a registered side-effect tool,
whatever stopped it (INVALID_INPUT, FORBIDDEN, APPROVAL_REQUIRED, CONFLICT, TIMEOUT...), and its
`AuditedApprovals` records every rejection by a person (also the ones `guarded_loop.resume` makes).

Paths are checked by `fs_server.Workspace.resolve` (logical `/workspace/...` or relative paths,
no way out by `..` or a symbolic link, regular files only); only notes that already exist can be
updated. Writes are as safe as reads (`nofollow`): the store reads and writes exactly the path
named — never through a symbolic link, not even one inside the root, and never a file with more
than one hard link — so a link swapped in after an approval fails the write instead of changing
another note. Every message names logical paths only, never where the folder really is.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import json
import os
import posixpath
import re
import secrets
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, field_validator

from course_lib.approval import Approvals, PendingAction, action_id, canonical_arguments
from course_lib.arguments import quote
from course_lib.execution import (STEP_LABELS_ZH, CallContext, Execution, Executor, ServerLog, Session, Tool, ToolError,
                                  outcome_label)
from course_lib.fs_server import LOGICAL_ROOT, MAX_WHOLE_FILE_BYTES, ToolFailure, Workspace, hidden_character
from course_lib.lang import display_width, language, pad, say
from course_lib.nofollow import open_folder, read_inside, refusal
from course_lib.records import Database

MAX_NOTE_CHARS = 20_000
"""Longest note text `apply_note_update` accepts."""

Clock = Callable[[], float]


# ---- the clock and the audit log ----------------------------------------------------------------


@dataclass
class ManualClock:
    """A clock that moves only when read (by `step` seconds) or told to (`advance`): audit times
    and approval expiry become deterministic. Starts at 2026-01-01 09:00:00 UTC."""

    now: float = 1767258000.0
    step: float = 1.0

    def __call__(self) -> float:
        reading, self.now = self.now, self.now + self.step
        return reading

    def advance(self, seconds: float) -> None:
        """Move the clock on, e.g. past an approval's time to live."""
        self.now += seconds


@dataclass(frozen=True)
class AuditRecord:
    """One side effect, executed or refused: who, what, when, and how it ended."""

    when: float
    who: str
    tool: str
    arguments: Any  # the exact arguments object, or the raw text when it did not parse
    result: str  # "ok", or the error code that stopped it
    action_id: str | None = None
    detail: str = ""

    @property
    def time(self) -> str:
        """`when` as an ISO 8601 UTC time."""
        return datetime.fromtimestamp(self.when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id        INTEGER PRIMARY KEY,
    at        REAL NOT NULL,
    who       TEXT NOT NULL,
    tool      TEXT NOT NULL,
    arguments TEXT NOT NULL CHECK (json_valid(arguments)),
    result    TEXT NOT NULL CHECK (result <> ''),
    action_id TEXT,
    detail    TEXT NOT NULL
)
"""
"""The audit log as a table: append-only, one row per side effect executed or refused."""


class AuditLog:
    """The append-only record of side effects. `clock` gives the time (seconds since the epoch).

    In memory (`records` to start from), or in a store's database (`database`): then every
    process that opens the store sees every record, and a crash loses none that was recorded.
    """

    def __init__(self, clock: Clock = time.time, records: Iterable[AuditRecord] = (), *,
                 database: Database | None = None) -> None:  # fmt: skip
        self.clock = clock
        self.database = database
        self._records = list(records)

    @property
    def records(self) -> list[AuditRecord]:
        """Every record, oldest first (a new list: append with `record`)."""
        if self.database is None:
            return list(self._records)
        rows = self.database.rows("SELECT at, who, tool, arguments, result, action_id, detail FROM audit ORDER BY id")
        return [AuditRecord(at, who, tool, json.loads(arguments), result, action, detail)
                for at, who, tool, arguments, result, action, detail in rows]  # fmt: skip

    def record(self, who: str, tool: str, arguments: Any, result: str, *, action_id: str | None = None,
               detail: str = "") -> AuditRecord:  # fmt: skip
        """Append one record, stamped with the clock's time, and return it."""
        entry = AuditRecord(self.clock(), who, tool, arguments, result, action_id, detail)
        if self.database is None:
            self._records.append(entry)
            return entry
        with self.database.transaction() as db:
            db.execute("INSERT INTO audit (at, who, tool, arguments, result, action_id, detail) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (entry.when, who, tool, _json(arguments), result, action_id,
                                                       detail))  # fmt: skip
        return entry

    def record_execution(self, execution: Execution, session: Session) -> AuditRecord:
        """Append the record of one executed or refused call made for `session`."""
        arguments = execution.arguments if execution.arguments is not None else execution.arguments_text
        error = execution.result.get("error") or {}
        the_action = error.get("action_id")
        if the_action is None and isinstance(arguments, dict):
            the_action = action_id(execution.tool, arguments, session.user_id)
        if execution.ok:
            data = execution.result.get("data")
            detail = "replayed: stored result returned" if isinstance(data, dict) and data.get("replayed") else "executed"
        else:
            detail = f"stopped at {execution.steps[-1].name}" if execution.steps else "refused"
        result = "ok" if execution.ok else str(execution.error_code)
        return self.record(session.user_id, execution.tool, arguments, result, action_id=the_action,
                           detail=f"{execution.trace_id} {detail}")  # fmt: skip

    def table(self) -> str:
        """The records as a plain-text table, one row each. The action id stands for the exact
        arguments (it is their hash, with the tool and user); `records[i].arguments` holds them.
        Headers and details are in the edition's language; the records themselves stay English."""
        records = self.records
        if not records:
            return say("(no side effects recorded)", "（没有记录到副作用）")
        rows = [AUDIT_HEADERS_ZH if language() == "zh-CN" else AUDIT_HEADERS]
        for r in records:
            target = r.arguments.get("path") if isinstance(r.arguments, dict) else None
            rows.append((r.time, r.who, r.tool, r.action_id or "-", str(target or "-"), outcome_label(r.result),
                         detail_text(r.detail)))  # fmt: skip
        widths = [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
        return "\n".join("  ".join(pad(cell, w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in rows)

    def show(self) -> None:
        """Print `table()`."""
        print(self.table())


AUDIT_HEADERS = ("when", "who", "tool", "action", "target", "result", "detail")
AUDIT_HEADERS_ZH = ("时间", "谁", "工具", "动作", "目标", "结果", "详情")
_DETAILS_ZH = {"executed": "已执行", "refused": "被拒绝", "rejected by a person": "被人拒绝",
               "replayed: stored result returned": "重放：返回了存下的结果"}  # fmt: skip


def detail_text(detail: str) -> str:
    """A record's detail (`"<trace id> stopped at approval"`...) as the edition shows it."""
    if language() != "zh-CN":
        return detail
    trace, space, rest = detail.partition(" ")
    if not trace.startswith("trace-"):  # a person's rejection has no trace id
        trace, space, rest = "", "", detail
    if rest.startswith("stopped at "):
        step = STEP_LABELS_ZH.get(rest.removeprefix("stopped at "), rest.removeprefix("stopped at "))
        return f"{trace}{space}停在 {step} 这一步" if step.isascii() else f"{trace}{space}停在{step}这一步"
    return trace + space + _DETAILS_ZH.get(rest, rest)


def _json(arguments: Any) -> str:
    # Raw arguments text that did not parse is stored as a JSON string; anything else odd by repr.
    return json.dumps(arguments, ensure_ascii=False, default=repr)


# ---- the preview's diff, as a learner reads it -------------------------------------------------

NO_CHANGE = "(no change)\n"
"""The preview's `diff` when the new text equals the note's."""

_DIFF_HEADERS = (re.compile(r"^--- (?P<shown>.+) \(version (?P<version>\d+)\)$"),
                 re.compile(r"^\+\+\+ (?P<shown>.+) \(after the update\)$"))  # fmt: skip


def diff_for_edition(diff: str) -> str:
    """A preview's `diff` for printing to the learner: in the zh-CN edition its two header labels
    (and "(no change)") in Chinese; the changed lines, the note's text, are never touched. The
    English edition gets `diff` unchanged. The tool result keeps the English (see `preview`)."""
    if language() != "zh-CN":
        return diff
    if diff == NO_CHANGE:
        return "（没有变化）\n"
    lines = diff.split("\n")
    old, new = (pattern.match(line) for pattern, line in zip(_DIFF_HEADERS, lines[:2]))
    if old is None or new is None:  # not a preview's diff: shown as it is
        return diff
    lines[:2] = [f"--- {old['shown']}（版本 {old['version']}）", f"+++ {new['shown']}（更新之后）"]
    return "\n".join(lines)


def show_diff(diff: str) -> None:
    """Print a preview's `diff` for the learner (`diff_for_edition`)."""
    print(diff_for_edition(diff))


# ---- the store ----------------------------------------------------------------------------------

STORE_SCHEMA = AUDIT_SCHEMA + """;
CREATE TABLE IF NOT EXISTS versions (
    note    TEXT NOT NULL CHECK (note <> ''),  -- its path below the root, e.g. docs/plan.md
    version INTEGER NOT NULL CHECK (version >= 1),
    sha256  TEXT NOT NULL CHECK (length(sha256) = 64),  -- of the text on disk at that version
    source  TEXT NOT NULL CHECK (source IN ('seen', 'written')),  -- found on disk, or written here
    PRIMARY KEY (note, version)  -- two writers of the same next version: only one row can exist
);
CREATE TABLE IF NOT EXISTS idempotency (
    key         TEXT PRIMARY KEY,  -- one result per key, whatever the process
    fingerprint TEXT NOT NULL,     -- the canonical arguments it was first used with
    result      TEXT NOT NULL CHECK (json_valid(result))
)
"""
"""Note versions, idempotency records and the audit log: one file, shared by every process."""

DATABASE_SUFFIX = ".notes.sqlite3"
"""The store's records live beside the notes folder, in `<folder>.notes.sqlite3`: not inside it,
where the model (or a files server over the folder) could read the audit log."""

SCRATCH_SUFFIX = ".notes-tmp"
"""A write's temporary file is made in `<folder>.notes-tmp`, beside the notes folder (as the
database is), then renamed over the note: a process killed mid-write leaves the full new text
there, outside the folder, where no server over the folder can serve or index it (the next store
to open removes it). Only where that folder cannot be on the notes' filesystem (a rename cannot
cross filesystems: the notes folder is a mount point) or cannot be made (a read-only parent) is
it `.notes-store/` inside the folder: hidden, so the notes server refuses it and its index skips
it, though a files server over the same folder would list it until the next open."""

_TEMPORARY = re.compile(r"^\.notes-store-[0-9a-f]{16}\.tmp$")
_INSIDE_SCRATCH = ".notes-store"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class _Note:
    """One note as read from disk, under the write lock."""

    key: str  # path below the root, e.g. "todo.md": the same in every process
    shown: str  # logical path
    parts: tuple[str, ...]
    text: str
    digest: str
    info: os.stat_result  # of the file read: a write checks it is still this file


class NotesStore:
    """Versioned notes in a folder, shown to the model as `/workspace`.

    Versions, idempotency records and the audit log are kept in `database` (default:
    `<root>.notes.sqlite3`, beside the folder), so every store on the folder, in any process,
    sees the same versions and no acknowledged write is lost. Temporary files left by a process
    killed mid-write are removed when a store opens.
    """

    def __init__(self, root: Path, *, logical_root: str = LOGICAL_ROOT, clock: Clock = time.time,
                 database: Path | None = None) -> None:  # fmt: skip
        """Raises:
        FileNotFoundError, NotADirectoryError, ValueError: as `fs_server.Workspace`.
        records.StoreError: the database file is damaged or not a store (it is left untouched).
        """
        self.workspace = Workspace(root, logical_root)
        root = self.workspace.root
        self.database = Database(database or root.with_name(root.name + DATABASE_SUFFIX), STORE_SCHEMA)
        self.audit = AuditLog(clock, database=self.database)
        self.scratch = _scratch_folder(root)  # where a write's temporary file is made (SCRATCH_SUFFIX)
        self.removed_temporary_files = self._remove_temporary_files()

    @property
    def writes(self) -> int:
        """Real writes that happened (the number of effects), by every store on this folder."""
        return self.database.rows("SELECT count(*) FROM versions WHERE source = 'written'")[0][0]

    def close(self) -> None:
        """Close the database (everything committed stays)."""
        self.database.close()

    def _remove_temporary_files(self) -> int:
        # Under the write lock: every write holds it while its temporary file exists, so any
        # temporary file seen now belongs to a process that died mid-write. The notes folder is
        # searched too: older versions of the course made them beside each note.
        removed = 0
        with self.database.transaction():
            for top in dict.fromkeys([self.scratch, self.workspace.root]):
                for folder, dirs, files in os.walk(top):  # followlinks=False
                    for name in files:
                        if _TEMPORARY.match(name):
                            Path(folder, name).unlink(missing_ok=True)
                            removed += 1
        return removed

    def _load(self, path: str) -> _Note:
        """Check `path`, then read the note opened without following any link.

        Raises:
            ToolError: INVALID_INPUT, FORBIDDEN, NOT_FOUND from `Workspace.resolve`; FORBIDDEN if a
                symbolic link is on the way (even one inside the root: the store reads and writes
                only the exact path named) or the file has more than one hard link; INVALID_INPUT
                for a file that is not UTF-8 text or is too large.
        """
        try:
            real = self.workspace.resolve(path)
        except ToolFailure as refusal:
            raise ToolError(refusal.code, refusal.message, retryable=False) from None
        shown = self.workspace.logical(real)
        named = posixpath.normpath(posixpath.join(str(self.workspace.logical_root), path))
        if named != shown:
            raise ToolError("FORBIDDEN", f"{quote(named)}: a symbolic link is on the way (to {quote(shown)}); the "
                            "store reads and writes only the exact path named", retryable=False)  # fmt: skip
        parts = real.relative_to(self.workspace.root).parts
        try:
            data, info = read_inside(self.workspace.root, parts, MAX_WHOLE_FILE_BYTES)
        except OSError as error:
            raise _refused(error, shown) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("INVALID_INPUT", f"{shown}: not a UTF-8 text file", retryable=False) from None
        return _Note("/".join(parts), shown, parts, text, _digest(data), info)

    def _last(self, db: sqlite3.Connection, note: _Note) -> tuple[int, str] | None:
        """The last (version, sha256) recorded for the note, if any store has seen it."""
        return db.execute("SELECT version, sha256 FROM versions WHERE note = ? ORDER BY version DESC LIMIT 1",
                          (note.key,)).fetchone()  # fmt: skip

    def _version(self, db: sqlite3.Connection, note: _Note) -> int:
        """The note's version: the last one recorded if the text on disk is still that one, else a
        new version (a change made elsewhere, or the first time any store sees it)."""
        last = self._last(db, note)
        if last is not None and last[1] == note.digest:
            return last[0]
        version = 1 if last is None else last[0] + 1
        db.execute("INSERT INTO versions VALUES (?, ?, ?, 'seen')", (note.key, version, note.digest))
        return version

    def _current(self, path: str) -> tuple[_Note, int]:
        with self.database.transaction() as db:
            note = self._load(path)
            return note, self._version(db, note)

    def read(self, path: str) -> tuple[str, int]:
        """The note's text and its current version.

        Raises:
            ToolError: INVALID_INPUT, FORBIDDEN or NOT_FOUND from the path checks (a symbolic link
                or a file with more than one hard link is FORBIDDEN); INVALID_INPUT for a file that
                is not UTF-8 text.
        """
        note, version = self._current(path)
        return note.text, version

    def preview(self, path: str, content: str) -> dict[str, Any]:
        """What replacing the note's text with `content` would change. Writes nothing.

        Returns the logical path, the current version, the exact `apply_note_update` arguments
        to approve (with `expected_version` = the current version) and a unified diff. This is
        the `preview_note_update` tool result, so it is English in both editions (what the model
        reads does not depend on the learner's language); `show_diff` / `diff_for_edition` put
        the diff's two header labels in the edition's language where a learner reads it.

        Raises:
            ToolError: as `read`; INVALID_INPUT for content with a hidden character (see
                `fs_server.hidden_character`).
        """
        _check_content(content)
        note, version = self._current(path)
        shown, text = note.shown, note.text
        diff = difflib.unified_diff(text.splitlines(keepends=True), content.splitlines(keepends=True),
                                    f"{shown} (version {version})", f"{shown} (after the update)")  # fmt: skip
        diff_text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        return {
            "path": shown,
            "current_version": version,
            "arguments": {"path": shown, "content": content, "expected_version": version},
            "diff": diff_text or NO_CHANGE,
        }

    def write(self, path: str, content: str, expected_version: int) -> dict[str, Any]:
        """Replace the note's text, only if it is still at `expected_version`: compare-and-swap
        against the hash of the text on disk, under the database's write lock.

        Returns `{"path": logical path, "version": new version}`.

        Raises:
            ToolError: CONFLICT (the note is at another version, or changed during the write:
                nothing is written), INVALID_INPUT (content with a hidden character), or as `read`.
        """
        _check_content(content)
        with self.database.transaction() as db:
            return self._write(db, path, content, expected_version)

    def _write(self, db: sqlite3.Connection, path: str, content: str, expected_version: int) -> dict[str, Any]:
        note = self._load(path)
        data = content.encode("utf-8")
        last = self._last(db, note)
        if last is not None and last[0] == expected_version and note.digest == _digest(data) != last[1]:
            # The note already holds exactly this text, unrecorded: a write of it renamed into place
            # by a process that died before its commit. Record it; writing it again changes nothing.
            version = expected_version + 1
            db.execute("INSERT INTO versions VALUES (?, ?, ?, 'written')", (note.key, version, note.digest))
            return {"path": note.shown, "version": version}
        version = self._version(db, note)
        if version != expected_version:
            raise ToolError("CONFLICT", f"{note.shown} is at version {version}, not {expected_version}: nothing was "
                            "written; read it again, then decide", retryable=False)  # fmt: skip
        try:
            _swap_in(self.workspace.root, self.scratch, note, data)
        except OSError as error:
            raise _refused(error, note.shown) from None
        db.execute("INSERT INTO versions VALUES (?, ?, ?, 'written')", (note.key, version + 1, _digest(data)))
        return {"path": note.shown, "version": version + 1}

    async def apply(self, path: str, content: str, expected_version: int, *, key: str) -> tuple[dict[str, Any], bool]:
        """`write` once per idempotency `key`; returns (result, replayed).

        A repeat with the same key and arguments returns the stored result and writes nothing.
        The key's record and the write commit in one transaction: both happen, or neither.

        Raises:
            ToolError: CONFLICT (the key was used with other arguments, or a stale version), or as `read`.
        """
        _check_content(content)
        fingerprint = canonical_arguments({"path": path, "content": content, "expected_version": expected_version})

        def once() -> tuple[dict[str, Any], bool]:
            with self.database.transaction() as db:
                stored = db.execute("SELECT fingerprint, result FROM idempotency WHERE key = ?", (key,)).fetchone()
                if stored is not None:
                    if stored[0] != fingerprint:
                        raise ToolError("CONFLICT", f"idempotency key {key} was already used with different "
                                        "arguments; nothing was written", retryable=False)  # fmt: skip
                    return json.loads(stored[1]), True
                result = self._write(db, path, content, expected_version)
                db.execute("INSERT INTO idempotency VALUES (?, ?, ?)", (key, fingerprint, json.dumps(result)))
                return result, False

        return await anyio.to_thread.run_sync(once)  # the lock may be held by another process

    def inside(self, path: str) -> bool:
        """False only when the path points outside the notes root (by `..`, an absolute path
        elsewhere or a symbolic link); other problems (missing file...) are reported later."""
        try:
            self.workspace.resolve(path)
        except ToolFailure as refusal:
            return refusal.code != "FORBIDDEN"
        return True


def _scratch_folder(root: Path) -> Path:
    """The folder for temporary files (see SCRATCH_SUFFIX): `<root>.notes-tmp`, made if needed,
    if it is a real folder (not a link someone put there) on the notes' filesystem; else
    `.notes-store` inside the root.

    Raises:
        OSError: neither can be made.
    """
    beside = root.with_name(root.name + SCRATCH_SUFFIX)
    try:
        beside.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(beside)
        if stat.S_ISDIR(info.st_mode) and info.st_dev == os.stat(root).st_dev:
            return beside
    except OSError:
        pass  # a read-only parent: inside, then
    inside = root / _INSIDE_SCRATCH
    inside.mkdir(mode=0o700, exist_ok=True)
    if not stat.S_ISDIR(os.lstat(inside).st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder for temporary files", _INSIDE_SCRATCH)
    return inside


def _swap_in(root: Path, scratch: Path, note: _Note, data: bytes) -> None:
    """Write `data` to a temporary file in `scratch`, then rename it over the note's entry in its
    folder (both folders opened without following links): readers never see half a note, exactly
    that entry changes, and a crash before the rename leaves the text outside the notes. Refuses
    (CONFLICT) if the note changed since it was read.

    Raises:
        OSError: from the opens (see `nofollow`); ToolError: CONFLICT.
    """
    folder = open_folder(root, note.parts[:-1])
    try:
        spare = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except BaseException:
        os.close(folder)
        raise
    name, temporary = note.parts[-1], f".notes-store-{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=spare)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                os.fchmod(file.fileno(), stat.S_IMODE(note.info.st_mode))
                os.fsync(file.fileno())  # the text is on disk before its name is
            now, then = os.stat(name, dir_fd=folder, follow_symlinks=False), note.info
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (then.st_ino, then.st_size, then.st_mtime_ns):
                raise ToolError("CONFLICT", f"{note.shown} changed while it was being written: nothing was "
                                "written; read it again, then decide", retryable=False)  # fmt: skip
            os.replace(temporary, name, src_dir_fd=spare, dst_dir_fd=folder)
        except BaseException:
            os.unlink(temporary, dir_fd=spare)
            raise
        os.fsync(folder)  # the rename itself reaches the disk
    finally:
        os.close(spare)
        os.close(folder)


def _check_content(content: str) -> None:
    """Raises:
    ToolError: INVALID_INPUT if `content` holds a character a reader would not see.
    """
    if problem := hidden_character(content, lines=True):
        raise ToolError("INVALID_INPUT", f"content: {problem}", retryable=False)


def _refused(error: OSError, shown: str) -> ToolError:
    """An OSError from opening a note, as the ToolError the model sees (logical path only).

    Raises:
        OSError: `error` itself when it is not a refusal (a real failure).
    """
    reason = refusal(error)
    if reason is None:
        raise error
    return ToolError(reason[0], f"{quote(shown)}: {reason[1]}", retryable=False)


_SCRATCH_PREFIX = "course-notes-"


def scratch_workspace(source: Path | None = None) -> Path:
    """A throwaway copy of the course workspace (or of `source`) in a new temporary folder.

    Write demos use it so the repository's fixtures never change. Never print the path it returns.
    """
    from course_lib.paths import workspace_dir

    target = Path(tempfile.mkdtemp(prefix=_SCRATCH_PREFIX)) / "workspace"
    shutil.copytree(source or workspace_dir(), target)
    return target


def remove_scratch_workspace(path: Path) -> None:
    """Delete a copy made by `scratch_workspace()`, with its temporary folder.

    Raises:
        ValueError: `path` was not made by `scratch_workspace()` (nothing is deleted).
    """
    folder = Path(path).parent
    made_here = folder.parent == Path(tempfile.gettempdir()) and folder.name.startswith(_SCRATCH_PREFIX)
    if Path(path).name != "workspace" or not made_here:
        raise ValueError("not a scratch workspace: refusing to delete it")
    shutil.rmtree(folder)


# ---- the two tools ------------------------------------------------------------------------------


class PreviewNoteArgs(BaseModel):
    # The rule for preview_note_update. (Comments, not a docstring: a docstring would be sent to
    # the model as the schema's description.)
    model_config = ConfigDict(strict=True, extra="forbid")

    path: str = Field(min_length=1, description="Path of an existing note, e.g. /workspace/todo.md")
    content: str = Field(max_length=MAX_NOTE_CHARS, description="The complete new text of the note")

    @field_validator("content")
    @classmethod
    def _visible(cls, value: str) -> str:
        # A person approves this text in a panel: what it hides (a bidi override, a NUL), they
        # would approve unseen. Tab, newline and CRLF are text; the path is checked by resolve.
        if problem := hidden_character(value, lines=True):
            raise ValueError(f"content: {problem}")
        return value


class ApplyNoteArgs(PreviewNoteArgs):
    # The rule for apply_note_update: the preview's arguments plus the version they were made at.
    expected_version: int = Field(ge=1, description="The version the preview showed; a newer note is not overwritten")


class PreviewOut(BaseModel):
    path: str
    current_version: int
    arguments: dict[str, Any]
    diff: str


class ApplyOut(BaseModel):
    path: str
    version: int
    replayed: bool


PREVIEW_DESCRIPTION = (
    "Preview replacing the text of one existing note with new content. Changes nothing: returns the "
    "target path, its current version, the exact arguments to pass to apply_note_update and a unified "
    "diff of the change. Call it before apply_note_update and show the diff to the user."
)
APPLY_DESCRIPTION = (
    "Replace the text of one existing note. Changes data: it runs only after the user approved this "
    "exact action (same path, content and expected_version). It writes only if the note is still at "
    "expected_version (else CONFLICT: preview again). Repeating an approved call returns the first result."
)


def notes_tools(store: NotesStore) -> list[Tool]:
    """The execution-layer tools over `store`: `preview_note_update` (read-only) and
    `apply_note_update` (side effect, idempotent). Both refuse, as FORBIDDEN and before any
    approval is asked for, a path that leads outside the notes root."""

    def confined(session: Session, arguments: PreviewNoteArgs) -> bool:
        return store.inside(arguments.path)

    async def preview(arguments: PreviewNoteArgs, context: CallContext) -> dict[str, Any]:
        return store.preview(arguments.path, arguments.content)

    async def apply(arguments: ApplyNoteArgs, context: CallContext) -> dict[str, Any]:
        result, replayed = await store.apply(arguments.path, arguments.content, arguments.expected_version,
                                             key=context.action_id)  # fmt: skip
        return {**result, "replayed": replayed}

    return [
        Tool("preview_note_update", PREVIEW_DESCRIPTION, PreviewNoteArgs, preview, output_model=PreviewOut,
             permission=confined, max_output_chars=4 * MAX_NOTE_CHARS),  # fmt: skip
        Tool("apply_note_update", APPLY_DESCRIPTION, ApplyNoteArgs, apply, output_model=ApplyOut,
             side_effect=True, idempotent=True, permission=confined),  # fmt: skip
    ]


# ---- auditing refusals too ----------------------------------------------------------------------


@dataclass
class AuditedApprovals(Approvals):
    """`Approvals` that also write each rejection by a person to `audit` (result FORBIDDEN)."""

    audit: AuditLog | None = None

    def reject(self, action_id: str) -> PendingAction:
        """A person rejected this pending action; recorded in the audit log.

        Raises:
            KeyError: no such pending action.
        """
        action = super().reject(action_id)
        if self.audit is not None:
            self.audit.record(action.user_id, action.tool, action.arguments, "FORBIDDEN",
                              action_id=action.action_id, detail="rejected by a person")  # fmt: skip
        return action


class AuditedExecutor(Executor):
    """An `Executor` that writes an `AuditRecord` after every call to a registered side-effect
    tool, executed or refused. By default its approvals are `AuditedApprovals` on the audit's
    clock (pass `approvals=` to replace them; then rejections are audited only if they are too).
    """

    def __init__(self, tools: Iterable[Tool], *, audit: AuditLog, approvals: Approvals | None = None,
                 ttl: float = 300.0, log: ServerLog | None = None) -> None:  # fmt: skip
        if approvals is None:
            approvals = AuditedApprovals(ttl=ttl, clock=audit.clock, audit=audit)
        super().__init__(tools, approvals=approvals, log=log)
        self.audit = audit

    async def execute(self, call_id: str, name: str, arguments_text: Any, session: Session, *,
                      allowed: Iterable[str] | None = None) -> Execution:  # fmt: skip
        """As `Executor.execute`, then audit the call if `name` is a registered side-effect tool."""
        execution = await super().execute(call_id, name, arguments_text, session, allowed=allowed)
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is not None and tool.side_effect:
            self.audit.record_execution(execution, session)
        return execution
