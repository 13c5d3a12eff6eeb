"""The notes-and-interview assistant: the capstone, wired from the pieces the course built.

    with NotesAssistant() as assistant:                  # the course's notes, gaps kept in memory
        result = assistant.ask("Where is my understanding of workflows and agents incomplete?")
        result.reason                                     # "approval_required": a gap waits for a person
        assistant.panel(result)                           # the ApprovalPanel for that exact action
        result = assistant.approve(result)                # or .reject(result); then the loop goes on
        result.answer, assistant.gaps                     # the final answer, the stored records

What is wired to what:

- the notes MCP server (`notes_server`) runs in-process under the prefix `notes`, so the model
  sees `notes__search_notes`, `notes__read_note` and `notes__save_learning_gap`;
- every call goes through the execution layer (`RecordingExecutor`, an `Executor` that also keeps
  each execution and its measured duration for the evaluation's traces):
  search and read are MCP-backed read-only tools (`host.executor_tool`), checked against the same
  strict argument models the server uses, and their results against the output models;
- `save_learning_gap` is a side effect: `side_effect=True` (it stops at APPROVAL_REQUIRED until a
  person approves this exact action) and `idempotent=True` (a retry is allowed, because it
  carries an idempotency key). The model declares only topic/evidence/suggestion
  (`LearningGapArgs`); the app adds `idempotency_key` = the action id (`CallContext.action_id`:
  tool + the model's arguments + the user). So approval and key name the same action, a retried
  save returns the first record, and the model can neither choose nor forge a key;
- `run_guarded_loop` drives the model: search → read the hits (two reads in one turn run
  concurrently) → answer with the sources it read → propose a gap → stop for approval →
  `resume` saves only what was approved;
- note text is data, and some of it is not the user's own: notes under `OUTSIDE_NOTES` (an
  `inbox/` of forwarded emails, clipped pages, a study group's shared notes) came from outside.
  Every read of one — and every search whose hits include one, since a hit's summary is its text
  — carries its provenance (`GuardedResult.untrusted`, the note's path as the source), and the
  loop narrows after it: the next requests offer only the reads, so text planted in such a note
  cannot get a gap proposed (and the panel of anything proposed names the note). Which folders
  count is the app's decision, made from where the notes came from, never from what they say:
  `NotesAssistant(outside=...)`; `outside=("/notes",)` distrusts every note (then no gap can be
  proposed after a read: the price of narrowing).

The model gets short instructions as a developer message: answer only from notes it read, cite
them, say when the evidence is missing. The offline model follows the same rules by construction
(see `offline_model`); a real model is steered by the instructions and checked by the evaluation.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from openai import OpenAI
from pydantic import BaseModel

from course_lib.approval import Approvals
from course_lib.approval_widget import ApprovalPanel
from course_lib.backend import make_client
from course_lib.execution import CallContext, Execution, Executor, ServerLog, Session, Tool
from course_lib.guarded_loop import GuardedResult, resume, run_guarded_loop
from course_lib.host import McpHost
from course_lib.notes_server import (KnowledgeBase, LearningGapArgs, NoteText, ReadNoteArgs, SavedGap,
                                     SaveLearningGapArgs, SearchNotesArgs, SearchResult, notes_server)  # fmt: skip

PREFIX = "notes"
SEARCH, READ, SAVE = (f"{PREFIX}__{name}" for name in ("search_notes", "read_note", "save_learning_gap"))
"""The model-side names (aliases) of the three tools."""

SAVE_FOR_MODEL = (
    "Save one learning gap: a concept the user has not mastered yet, the evidence for it from the notes "
    "(name the note) and one concrete suggestion. Changes data: the app asks the user to approve this "
    "exact gap before anything is stored, so propose it and wait; never claim it was saved before the "
    "result says so."
)
"""The save tool's description as the model sees it (the server's also tells hosts about the key)."""

INSTRUCTIONS = (
    f"You answer questions about the user's own technical notes. Search with {SEARCH} first, then read "
    f"the best hits with {READ}. Answer only from the notes you read: quote or paraphrase them, cite after "
    "each statement the note and the line it rests on, as [/notes/retries.md:3] or [/notes/retries.md:3-4] "
    "(line 1 is the note's first line), and end with a line 'Sources: ' listing the paths you read and used. "
    "If a note you read does not mention something the user asked about, say 'Your notes do not mention: X.' "
    "If no note supports an answer, say that the "
    "evidence is missing; never answer from memory. When the user asks where their understanding is "
    f"incomplete, propose one gap with {SAVE}; the app asks the user to approve it. For greetings and "
    "thanks, answer briefly without tools."
)
"""Sent as a developer message before each question."""

LEARNER = Session("learner")

OUTSIDE_NOTES = ("/notes/inbox",)
"""Folders of the knowledge base whose notes came from outside the user (forwarded emails,
clipped pages, shared notes): their text is untrusted, and reading it narrows the loop."""


@dataclass(frozen=True)
class Timed:
    """One execution and how long it took (measured, in seconds)."""

    execution: Execution
    seconds: float


class RecordingExecutor(Executor):
    """An `Executor` that keeps every execution it runs — refusals and approval stops included —
    in `history`, with its measured duration.

    Each entry is a snapshot taken when the execution ended: `guarded_loop.resume` later rewrites
    a rejected pending execution's result in place (APPROVAL_REQUIRED → FORBIDDEN), and the
    history must still show what the executor actually returned.
    """

    def __init__(self, tools: list[Tool], *, approvals: Approvals | None = None, log: ServerLog | None = None):
        super().__init__(tools, approvals=approvals, log=log)
        self.history: list[Timed] = []

    async def execute(self, call_id: str, name: str, arguments_text: Any, session: Session, *,
                      allowed: Any = None) -> Execution:  # fmt: skip
        """As `Executor.execute`, then record the execution and its duration."""
        start = time.perf_counter()
        execution = await super().execute(call_id, name, arguments_text, session, allowed=allowed)
        seconds = time.perf_counter() - start
        snapshot = replace(execution, result=copy.deepcopy(execution.result), steps=list(execution.steps),
                           notes=dict(execution.notes))  # fmt: skip
        self.history.append(Timed(snapshot, seconds))
        return execution


def save_gap_tool(host: McpHost, alias: str = SAVE) -> Tool:
    """The MCP-backed `save_learning_gap` as a side-effect, idempotent `Tool`.

    The model-side rule is `LearningGapArgs` (no key). The handler adds `idempotency_key` =
    `context.action_id` and sends the server's full `SaveLearningGapArgs`.
    """
    wire = host.executor_tool(alias, SaveLearningGapArgs, side_effect=True, idempotent=True, output_model=SavedGap)

    async def handler(arguments: BaseModel, context: CallContext) -> Any:
        full = SaveLearningGapArgs(**arguments.model_dump(), idempotency_key=context.action_id)
        return await wire.handler(full, context)

    return replace(wire, input_model=LearningGapArgs, handler=handler, description=SAVE_FOR_MODEL)


def assistant_tools(host: McpHost) -> list[Tool]:
    """The three execution-layer tools over the notes server connected to `host` under `notes`."""
    return [
        host.executor_tool(SEARCH, SearchNotesArgs, output_model=SearchResult),
        host.executor_tool(READ, ReadNoteArgs, output_model=NoteText),
        save_gap_tool(host),
    ]


class NotesAssistant:
    """The capstone assistant: a notes server, an executor with approvals, the guarded loop.

    `root`: the notes folder (default `fixtures/notes`); `gaps_dir`: where `gaps.json` goes
    (default: in memory); `client`: an `openai.OpenAI` (default: `backend.make_client()`, the
    offline model unless OPENAI_API_KEY is set); `outside`: the folders (logical paths) whose
    notes came from outside the user, untrusted (default `OUTSIDE_NOTES`). Close it, or use it
    as a context manager (a script that does neither still exits: see `host`).
    """

    def __init__(self, root: Path | None = None, *, gaps_dir: Path | None = None, client: OpenAI | None = None,
                 session: Session = LEARNER, max_steps: int = 8, approvals: Approvals | None = None,
                 outside: tuple[str, ...] = OUTSIDE_NOTES) -> None:  # fmt: skip
        """Raises:
        FileNotFoundError, NotADirectoryError: `root` or `gaps_dir` is not an existing folder.
        ValueError: a folder in `outside` is not under `/notes`.
        """
        if bad := [folder for folder in outside if not (folder.rstrip("/") + "/").startswith("/notes/")]:
            raise ValueError(f"outside: folders are logical paths under /notes, e.g. /notes/inbox (got {bad[0]!r})")
        self.outside = tuple(folder.rstrip("/") + "/" for folder in outside)
        self.kb = KnowledgeBase(root, gaps_dir)
        self.host = McpHost()
        self.host.add_server(PREFIX, notes_server(self.kb))
        self.executor = RecordingExecutor(assistant_tools(self.host), approvals=approvals)
        self._own_client = client is None
        self.client = client if client is not None else make_client()
        self.session = session
        self.max_steps = max_steps

    def __enter__(self) -> NotesAssistant:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def gaps(self) -> list[dict[str, str]]:
        """The learning gaps the server has stored (its records, idempotency keys included)."""
        return self.kb.gaps.records

    def ask(self, question: str, *, request: dict[str, Any] | None = None) -> GuardedResult:
        """Run one question through the guarded loop; it may stop at `approval_required`.
        `request`: further fields for every model request (e.g. `metadata`), as in `run_guarded_loop`.
        A note from outside the user (`outside`) that the model reads narrows the loop to the reads."""
        task = [{"role": "developer", "content": INSTRUCTIONS}, {"role": "user", "content": question}]
        return run_guarded_loop(self.client, self.host, self.executor, self.session, task, max_steps=self.max_steps,
                                request=request, untrusted=self.from_outside)  # fmt: skip

    def from_outside(self, execution: Execution) -> str | None:
        """The notes from outside the user (`outside`) whose text this execution fed the model —
        the note read, or the hits of a search — as their paths, or None when there is none."""
        data = execution.result.get("data") if isinstance(execution.result, dict) else None
        if not isinstance(data, dict):
            return None
        if execution.tool == READ:
            paths = [data.get("path")]
        elif execution.tool == SEARCH:
            paths = [hit.get("path") for hit in data.get("hits") or [] if isinstance(hit, dict)]
        else:
            return None
        found = [path for path in paths if isinstance(path, str) and path.startswith(self.outside)]
        return ", ".join(found) if found else None

    def approve(self, result: GuardedResult, action_ids: set[str] | None = None) -> GuardedResult:
        """Approve the pending actions of `result` (all of them, or those in `action_ids`; any
        other is rejected) and continue the loop. An action a person already decided in a panel
        keeps that decision. With nothing pending (e.g. a notebook cell run twice), `result` is
        returned as it is: the model is not asked again."""
        if not result.pending:
            return result
        pending = {execution.result["error"]["action_id"] for execution in result.pending}
        chosen = pending if action_ids is None else set(action_ids)
        return resume(self.client, self.host, self.executor, self.session, result, approved=chosen,
                      max_steps=self.max_steps)  # fmt: skip

    def reject(self, result: GuardedResult) -> GuardedResult:
        """Reject every pending action of `result` and continue: the model is told it was refused."""
        return self.approve(result, set())

    def resume(self, result: GuardedResult) -> GuardedResult:
        """Continue after a person decided in an `ApprovalPanel`; anything still undecided is rejected."""
        return self.approve(result, set())

    def record_for(self, pending: Execution) -> dict[str, str] | None:
        """The gap record stored for the action `pending` stopped at (its idempotency key is that
        action id), or None: nothing was stored — rejected, or not decided yet."""
        action_id = (pending.result.get("error") or {}).get("action_id")
        return next((r for r in self.gaps if action_id and r.get("idempotency_key") == action_id), None)

    def panel(self, result: GuardedResult) -> ApprovalPanel:
        """The Approve / Reject panel for the first pending action of `result`.

        Raises:
            ValueError: nothing is waiting for approval.
        """
        if not result.pending:
            raise ValueError(f"nothing is waiting for approval (status {result.status}, reason {result.reason})")
        return ApprovalPanel(self.executor, result.pending[0])

    def close(self) -> None:
        self.host.close()
        if self._own_client:
            self.client.close()
