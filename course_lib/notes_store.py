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
    execution = await executor.execute("call_1", "apply_note_update", arguments_text, Session("alice"))

`NotesStore` is the data side:

- versions: every note has a version number, starting at 1 the first time the store sees it and
  going up by one with each write; a change made behind the store's back (the file's content
  hash differs from the last one seen) also counts as a newer version;
- `write(path, content, expected_version)` is conditional: a stale version is a CONFLICT, so a
  writer that read an old version can never overwrite newer data;
- `apply(..., key=...)` runs the write through `approval.IdempotencyStore`: the same key with the
  same arguments writes once and returns the stored result; the same key with different
  arguments is a CONFLICT and writes nothing;
- `audit`: an `AuditLog` of `AuditRecord`s — who (the session's user), what (tool and exact
  arguments), when (from the injectable `clock`) and the result ("ok" or the error code).

The audit covers refusals too. The `Executor` knows nothing about auditing, so `AuditedExecutor`
(an `Executor`) records one `AuditRecord` after every call to a registered side-effect tool,
whatever stopped it (INVALID_INPUT, FORBIDDEN, APPROVAL_REQUIRED, CONFLICT, TIMEOUT...), and its
`AuditedApprovals` records every rejection by a person (also the ones `guarded_loop.resume` makes).

Paths are checked by `fs_server.Workspace.resolve` (logical `/workspace/...` or relative paths,
no way out by `..` or a symbolic link, regular files only); only notes that already exist can be
updated. Every message names logical paths only, never where the folder really is.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from course_lib.approval import Approvals, IdempotencyConflict, IdempotencyStore, PendingAction, action_id
from course_lib.execution import CallContext, Execution, Executor, ServerLog, Session, Tool, ToolError
from course_lib.fs_server import LOGICAL_ROOT, ToolFailure, Workspace

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


@dataclass
class AuditLog:
    """The append-only record of side effects. `clock` gives the time (seconds since the epoch)."""

    clock: Clock = time.time
    records: list[AuditRecord] = field(default_factory=list)

    def record(self, who: str, tool: str, arguments: Any, result: str, *, action_id: str | None = None,
               detail: str = "") -> AuditRecord:  # fmt: skip
        """Append one record, stamped with the clock's time, and return it."""
        entry = AuditRecord(self.clock(), who, tool, arguments, result, action_id, detail)
        self.records.append(entry)
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
        arguments (it is their hash, with the tool and user); `records[i].arguments` holds them."""
        if not self.records:
            return "(no side effects recorded)"
        rows = [("when", "who", "tool", "action", "target", "result", "detail")]
        for r in self.records:
            target = r.arguments.get("path") if isinstance(r.arguments, dict) else None
            rows.append((r.time, r.who, r.tool, r.action_id or "-", str(target or "-"), r.result, r.detail))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in rows)

    def show(self) -> None:
        """Print `table()`."""
        print(self.table())


# ---- the store ----------------------------------------------------------------------------------


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class NotesStore:
    """Versioned notes in a folder, shown to the model as `/workspace`."""

    def __init__(self, root: Path, *, logical_root: str = LOGICAL_ROOT, clock: Clock = time.time) -> None:
        """Raises:
        FileNotFoundError, NotADirectoryError, ValueError: as `fs_server.Workspace`.
        """
        self.workspace = Workspace(root, logical_root)
        self.audit = AuditLog(clock)
        self.idempotency = IdempotencyStore()
        self.writes = 0  # real writes that happened: the number of effects
        self._versions: dict[str, tuple[int, str]] = {}  # logical path → (version, content hash)
        self._lock = threading.Lock()  # check-then-write must not interleave

    def _resolve(self, path: str) -> Path:
        try:
            return self.workspace.resolve(path)
        except ToolFailure as refusal:
            raise ToolError(refusal.code, refusal.message, retryable=False) from None

    def _current(self, real: Path) -> tuple[str, str, int]:
        """(logical path, text, version) of a resolved note, noticing changes made elsewhere."""
        shown = self.workspace.logical(real)
        try:
            text = real.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("INVALID_INPUT", f"{shown}: not a UTF-8 text file", retryable=False) from None
        digest = _digest(text)
        known = self._versions.get(shown)
        version = 1 if known is None else known[0] if known[1] == digest else known[0] + 1
        self._versions[shown] = (version, digest)
        return shown, text, version

    def read(self, path: str) -> tuple[str, int]:
        """The note's text and its current version.

        Raises:
            ToolError: INVALID_INPUT, FORBIDDEN or NOT_FOUND from the path checks; INVALID_INPUT
                for a file that is not UTF-8 text.
        """
        with self._lock:
            _, text, version = self._current(self._resolve(path))
        return text, version

    def preview(self, path: str, content: str) -> dict[str, Any]:
        """What replacing the note's text with `content` would change. Writes nothing.

        Returns the logical path, the current version, the exact `apply_note_update` arguments
        to approve (with `expected_version` = the current version) and a unified diff.

        Raises:
            ToolError: as `read`.
        """
        with self._lock:
            shown, text, version = self._current(self._resolve(path))
        diff = difflib.unified_diff(text.splitlines(keepends=True), content.splitlines(keepends=True),
                                    f"{shown} (version {version})", f"{shown} (after the update)")  # fmt: skip
        diff_text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        return {
            "path": shown,
            "current_version": version,
            "arguments": {"path": shown, "content": content, "expected_version": version},
            "diff": diff_text or "(no change)\n",
        }

    def write(self, path: str, content: str, expected_version: int) -> dict[str, Any]:
        """Replace the note's text, only if it is still at `expected_version`.

        Returns `{"path": logical path, "version": new version}`.

        Raises:
            ToolError: CONFLICT (the note is at another version: nothing is written), or as `read`.
        """
        with self._lock:
            real = self._resolve(path)
            shown, _, version = self._current(real)
            if version != expected_version:
                raise ToolError("CONFLICT", f"{shown} is at version {version}, not {expected_version}: nothing was "
                                "written; read it again, then decide", retryable=False)  # fmt: skip
            _replace_text(real, content)
            self._versions[shown] = (version + 1, _digest(content))
            self.writes += 1
        return {"path": shown, "version": version + 1}

    async def apply(self, path: str, content: str, expected_version: int, *, key: str) -> tuple[dict[str, Any], bool]:
        """`write` once per idempotency `key`; returns (result, replayed).

        A repeat with the same key and arguments returns the stored result and writes nothing.

        Raises:
            ToolError: CONFLICT (the key was used with other arguments, or a stale version), or as `read`.
        """
        arguments = {"path": path, "content": content, "expected_version": expected_version}

        async def write() -> dict[str, Any]:
            return self.write(path, content, expected_version)

        try:
            return await self.idempotency.run(key, arguments, write)
        except IdempotencyConflict:
            raise ToolError("CONFLICT", f"idempotency key {key} was already used with different arguments; "
                            "nothing was written", retryable=False) from None  # fmt: skip

    def inside(self, path: str) -> bool:
        """False only when the path points outside the notes root (by `..`, an absolute path
        elsewhere or a symbolic link); other problems (missing file...) are reported later."""
        try:
            self.workspace.resolve(path)
        except ToolFailure as refusal:
            return refusal.code != "FORBIDDEN"
        return True


def _replace_text(real: Path, content: str) -> None:
    """Write `content` to a temporary file beside `real`, then swap it in: readers never see half."""
    handle, temporary = tempfile.mkstemp(dir=real.parent, prefix=".writing-")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(content.encode("utf-8"))
        os.replace(temporary, real)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
