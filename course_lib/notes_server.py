"""The notes MCP server: the capstone's three tools over a folder of Markdown notes.

    search_notes       read-only   query + limit (1–20, null → 5) → hits: title, path, summary, score
    read_note          read-only   path → text, title, updated; only notes inside the knowledge base
    save_learning_gap  write       topic, evidence, suggestion, idempotency_key → record id

Like `fs_server`, it is built on the low-level `mcp.server.Server`: each handler checks the raw
`params.arguments` with the strict pydantic model that also generates the published
`inputSchema`, so the declared rule and the check are one.

Search is a plain BM25 ranking over each note's title (counted twice) and text, written out
below in a few lines: deterministic, no network, ties broken by path. The index is a snapshot
built when the server starts, as a real search service's index is. When `read_note` finds that
a note has gone (NOT_FOUND), the snapshot is marked stale and the next search rebuilds it — so
"the hit no longer exists" is a recoverable error: search again, read the new path.

`read_note` reuses `fs_server.Workspace` for every path check (logical root `/notes`; no way out
by `..`, an absolute path elsewhere or a symbolic link) and reads only `.md` files, opened without
following links and never one with more than one hard link (`nofollow`), and never a hidden one (a
name starting with "."): what it reads is exactly what the index lists (`resolve_note`).
The gap fields refuse NUL, control, bidi and other invisible characters, as paths do.

`save_learning_gap` writes to a `GapStore`: in memory, or `gaps.sqlite3` in a folder you give it,
shared safely by every server process on that folder (`records.Database`).
It takes an `idempotency_key`: the same key with the same fields returns the first record
(`replayed: true`) and writes nothing; the same key with other fields is a CONFLICT. The key is
the *host's* business, never the model's: the assistant (`course_lib.assistant`) declares the
tool to the model without that field and fills it from the execution layer's action id
(`CallContext.action_id`), after a person approved the exact action. Approval is not this
server's job either: a server cannot know who clicked what in the app.

Run over stdio:  python -m course_lib.notes_server --root DIR [--gaps DIR] [--name notes]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import sqlite3
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from course_lib.arguments import ArgumentsError, JsonIntOrNone, quote, validate_arguments
from course_lib.fs_server import (MAX_WHOLE_FILE_BYTES, ToolFailure, Workspace, check_path_text, error_result,
                                  hidden_character, without_tracing)  # fmt: skip
from course_lib.nofollow import read_inside, refusal
from course_lib.records import Database, StoreError
from course_lib.stdio import serve_stdio
from course_lib.words import tokens

logger = logging.getLogger(__name__)

LOGICAL_ROOT = "/notes"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20


def notes_dir() -> Path:
    """The course's knowledge base: `fixtures/notes`."""
    from course_lib.paths import fixtures_dir

    return fixtures_dir() / "notes"


# ---- the rules (argument models) ---------------------------------------------------------------
# Comments, not docstrings: a class docstring would become the schema's description.


def _text(field: str, value: str, longest: int, *, lines: bool = False) -> str:
    # Length checks as validators, not minLength/maxLength: strict mode on the model API does not
    # accept every JSON Schema keyword, and these models also generate the model-side declaration.
    # Hidden characters are refused as paths are: a stored gap is shown to people (the approval
    # panel, the records), and a bidi override or a NUL would make them read something else.
    if not value.strip():
        raise ValueError(f"{field}: must not be empty")
    if len(value) > longest:
        raise ValueError(f"{field}: at most {longest} characters (got {len(value)})")
    if problem := hidden_character(value, lines=lines):
        raise ValueError(f"{field}: {problem}")
    return value


class SearchNotesArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    query: str = Field(description="The technical question or keywords to search for")
    # JsonIntOrNone: 20.0 is an integer to JSON Schema, so the check accepts it as the rule does.
    limit: JsonIntOrNone = Field(default=None, ge=1, le=MAX_LIMIT,
                              description=f"At most this many results, 1 to {MAX_LIMIT}; null means {DEFAULT_LIMIT}")  # fmt: skip

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        return _text("query", value, 200)


class ReadNoteArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    path: str = Field(description="Path of a note exactly as search_notes returned it, e.g. /notes/retries.md")


class LearningGapArgs(BaseModel):
    # What the model fills in. The host adds the idempotency key (see SaveLearningGapArgs).
    model_config = ConfigDict(strict=True, extra="forbid")

    topic: str = Field(description="The concept the learner has not mastered yet, in a few words")
    evidence: str = Field(description="What in the notes shows the gap: quote or name the note")
    suggestion: str = Field(description="One concrete next step to close the gap")

    @field_validator("topic")
    @classmethod
    def _topic(cls, value: str) -> str:
        return _text("topic", value, 120)

    @field_validator("evidence", "suggestion")
    @classmethod
    def _long(cls, value: str, info: Any) -> str:
        return _text(info.field_name, value, 1000, lines=True)  # a quote may span lines


class SaveLearningGapArgs(LearningGapArgs):
    # The server's full rule: the model's fields plus the key the host sets.
    idempotency_key: str = Field(description="Set by the host application, not by the model: the same key "
                                 "returns the first record instead of writing again")  # fmt: skip

    @field_validator("idempotency_key")
    @classmethod
    def _key(cls, value: str) -> str:
        if not 8 <= len(value) <= 128 or not value.isprintable() or value.strip() != value:
            raise ValueError("idempotency_key: 8 to 128 printable characters, no surrounding spaces")
        return value


# ---- the results (output models) ---------------------------------------------------------------


class Hit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    path: str
    summary: str
    score: float


class SearchResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    hits: list[Hit]


class NoteText(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    title: str
    updated: str | None
    text: str


class SavedGap(BaseModel):
    model_config = ConfigDict(extra="forbid")
    record_id: str
    replayed: bool


# ---- notes and the index -----------------------------------------------------------------------

_UPDATED = re.compile(r"^Updated:\s*(\d{4}-\d{2}-\d{2})\s*$", re.M)


@dataclass(frozen=True)
class Note:
    """One note as the index knows it."""

    path: str  # logical, e.g. /notes/retries.md
    title: str
    summary: str
    updated: str | None
    text: str


def parse_note(path: str, text: str) -> Note:
    """Title from the first `# ` line (else the file name), summary from the first other line,
    `updated` from a line `Updated: YYYY-MM-DD` (else None)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), Path(path).stem)
    rest = [line for line in lines if not line.startswith("# ") and not _UPDATED.match(line)]
    summary = rest[0] if rest else ""
    if len(summary) > 200:
        summary = summary[:199] + "…"
    updated = _UPDATED.search(text)
    return Note(path, title, summary, updated.group(1) if updated else None, text)


def read_note_text(workspace: Workspace, real: Path) -> str:
    """The text of a note `workspace.resolve` returned, opened without following any link and
    refused if it has more than one hard link (one naming a file outside the notes would read it).

    Raises:
        ToolFailure: FORBIDDEN, NOT_FOUND (changed since the check), INVALID_INPUT (not a regular
            file, too large, not UTF-8).
    """
    shown = quote(workspace.logical(real))
    try:
        data, _ = read_inside(workspace.root, real.relative_to(workspace.root).parts, MAX_WHOLE_FILE_BYTES)
    except OSError as error:
        reason = refusal(error)
        if reason is None:
            raise
        raise ToolFailure(reason[0], f"{shown}: {reason[1]}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure("INVALID_INPUT", f"{shown}: not a UTF-8 text file") from None


def resolve_note(workspace: Workspace, path: str) -> Path:
    """The real file of the note at `path`, checked as `read_note` and the index both check it:
    inside the notes (`Workspace.resolve`), a `.md` file, and nothing hidden on the way — no file
    or folder whose name starts with "." (`.git/`, `.env.md`, a store's temporary file), neither
    in the path given nor where a link inside the notes leads.

    Raises:
        ToolFailure: as `Workspace.resolve`; FORBIDDEN for a hidden name (refused before anything
            says whether it exists); INVALID_INPUT for a file that is not a `.md` note.
    """
    check_path_text(path)  # NUL, invisible characters...: refused first, as `resolve` would
    if hidden := _hidden(PurePosixPath(path).parts):
        raise ToolFailure("FORBIDDEN", f"{quote(hidden)}: hidden files and folders (a name starting with '.') "
                          "are not notes")  # fmt: skip
    real = workspace.resolve(path)
    if hidden := _hidden(real.relative_to(workspace.root).parts):
        raise ToolFailure("FORBIDDEN", f"{quote(path)}: leads to a hidden file or folder "
                          f"({quote(hidden)}); hidden files are not notes")  # fmt: skip
    if real.suffix != ".md":
        raise ToolFailure("INVALID_INPUT", f"{workspace.logical(real)}: not a note (only .md files)")
    return real


def _hidden(parts: tuple[str, ...]) -> str | None:
    return next((part for part in parts if part.startswith(".") and part not in (".", "..")), None)


class NotesIndex:
    """BM25 over a snapshot of the notes; `stale` makes the next search rebuild it."""

    K1, B = 1.2, 0.75

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.stale = False
        self.builds = 0
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the snapshot from the folder (only `.md` files the workspace lets us read)."""
        notes, counts = [], []
        for folder, dirs, files in os.walk(self.workspace.root):  # followlinks=False: no way out
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if not name.endswith(".md") or name.startswith("."):
                    continue
                logical = self.workspace.logical(Path(folder) / name)
                try:
                    # resolve_note refuses a link that leads outside or to a hidden file; read_note_text a hard link
                    note = parse_note(logical, read_note_text(self.workspace, resolve_note(self.workspace, logical)))
                except (ToolFailure, OSError):
                    continue
                notes.append(note)
                counts.append(Counter(tokens(f"{note.title}\n{note.title}\n{note.text}")))
        self.notes, self._counts = notes, counts
        self._lengths = [sum(c.values()) for c in counts]
        self._average = sum(self._lengths) / len(counts) if counts else 0.0
        documents = Counter(term for c in counts for term in c)
        n = len(counts)
        self._idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in documents.items()}
        self.stale = False
        self.builds += 1

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[Hit]:
        """The best `limit` notes for `query` with a score above 0; ties by path."""
        if self.stale:
            self.refresh()
        terms = set(tokens(query))
        scored = []
        for note, count, length in zip(self.notes, self._counts, self._lengths):
            score = 0.0
            for term in terms & count.keys():
                tf = count[term]
                score += self._idf[term] * tf * (self.K1 + 1) / (tf + self.K1 * (1 - self.B + self.B * length / self._average))
            if score > 0:
                scored.append((round(score, 3), note))
        scored.sort(key=lambda pair: (-pair[0], pair[1].path))
        return [Hit(title=n.title, path=n.path, summary=n.summary, score=s) for s, n in scored[:limit]]


# ---- the gaps store ----------------------------------------------------------------------------


GAPS_SCHEMA = """
CREATE TABLE IF NOT EXISTS gaps (
    id              INTEGER PRIMARY KEY,  -- the record id is gap-<id>: SQLite hands out each once
    idempotency_key TEXT NOT NULL UNIQUE CHECK (length(idempotency_key) BETWEEN 8 AND 128),
    topic           TEXT NOT NULL CHECK (trim(topic) <> '' AND length(topic) <= 120),
    evidence        TEXT NOT NULL CHECK (trim(evidence) <> '' AND length(evidence) <= 1000),
    suggestion      TEXT NOT NULL CHECK (trim(suggestion) <> '' AND length(suggestion) <= 1000)
)
"""
"""One row per learning gap; `UNIQUE` makes a second record under the same key impossible."""


class GapStore:
    """Learning gaps, in memory or in `<folder>/gaps.sqlite3`, one record per idempotency key.

    In a folder, every process that opens it (two servers, two kernels) shares the records:
    none acknowledged is lost, no record id is handed out twice, and a crash loses nothing
    committed. A `gaps.json` left by an older version of the course is imported once.
    """

    def __init__(self, folder: Path | None = None) -> None:
        """Raises:
        NotADirectoryError: `folder` is given but is not a directory.
        records.StoreError: `gaps.sqlite3` (or an old `gaps.json`) is damaged; it is left untouched.
        """
        if folder is not None and not Path(folder).is_dir():
            raise NotADirectoryError(f"gaps folder is not a directory: {folder}")
        self.file = Path(folder) / "gaps.sqlite3" if folder is not None else None
        legacy = _legacy_gaps(Path(folder)) if self.file is not None and not self.file.exists() else []
        self.database = Database(self.file, GAPS_SCHEMA)
        with self.database.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO gaps VALUES (?, ?, ?, ?, ?)", legacy)

    @property
    def records(self) -> list[dict[str, str]]:
        """Every stored gap, oldest first: id, topic, evidence, suggestion, idempotency_key."""
        rows = self.database.rows("SELECT id, topic, evidence, suggestion, idempotency_key FROM gaps ORDER BY id")
        return [{"id": _record_id(number), "topic": topic, "evidence": evidence, "suggestion": suggestion,
                 "idempotency_key": key} for number, topic, evidence, suggestion, key in rows]  # fmt: skip

    @property
    def writes(self) -> int:
        """Records really created (a replay creates none)."""
        return self.database.rows("SELECT count(*) FROM gaps")[0][0]

    def save(self, topic: str, evidence: str, suggestion: str, key: str) -> SavedGap:
        """Store one gap under `key`, or return the record already stored under it.

        Raises:
            ToolFailure: CONFLICT if `key` was used with other fields (nothing is written);
                INVALID_INPUT if a field breaks the store's rules (empty, too long, a hidden
                character: the same rule as the arguments model, for a caller that bypassed it).
        """
        fields = (topic, evidence, suggestion)
        for name, value in zip(("topic", "evidence", "suggestion"), fields):
            if problem := hidden_character(value, lines=name != "topic"):
                raise ToolFailure("INVALID_INPUT", f"{name}: {problem}")
        try:
            return self._save(fields, key)
        except sqlite3.IntegrityError as refused:  # a CHECK: the arguments model was bypassed
            raise ToolFailure("INVALID_INPUT", f"the gap breaks a rule of the store ({refused})") from None

    def _save(self, fields: tuple[str, str, str], key: str) -> SavedGap:
        with self.database.transaction() as db:
            # The UNIQUE key decides, in one statement: a new row, or none and the stored one.
            created = db.execute("INSERT INTO gaps (idempotency_key, topic, evidence, suggestion) VALUES (?, ?, ?, ?) "
                                 "ON CONFLICT (idempotency_key) DO NOTHING", (key, *fields))  # fmt: skip
            if created.rowcount == 1:
                return SavedGap(record_id=_record_id(created.lastrowid), replayed=False)
            number, *stored = db.execute("SELECT id, topic, evidence, suggestion FROM gaps WHERE idempotency_key = ?",
                                         (key,)).fetchone()  # fmt: skip
        if tuple(stored) != fields:
            raise ToolFailure("CONFLICT", f"idempotency key {key[:40]} was already used for another gap; "
                              "nothing was written")  # fmt: skip
        return SavedGap(record_id=_record_id(number), replayed=True)

    def close(self) -> None:
        """Close the database (everything saved stays)."""
        self.database.close()


def _record_id(number: int) -> str:
    return f"gap-{number:04d}"


def _legacy_gaps(folder: Path) -> list[tuple[int, str, str, str, str]]:
    """The records of a `gaps.json` written by an older version of the course, as rows.

    Raises:
        StoreError: the file is not that format (it is left untouched).
    """
    old = folder / "gaps.json"
    if not old.exists():
        return []
    try:
        records = json.loads(old.read_text(encoding="utf-8"))["records"]
        return [(int(r["id"].removeprefix("gap-")), r["idempotency_key"], r["topic"], r["evidence"], r["suggestion"])
                for r in records]  # fmt: skip
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise StoreError(f"{old}: cannot be read as saved gaps ({type(error).__name__}); left untouched — "
                         "move it aside to start an empty store") from None


class KnowledgeBase:
    """The data side of the server: the notes (read through a `Workspace`), their index, the gaps."""

    def __init__(self, root: Path | None = None, gaps_dir: Path | None = None) -> None:
        """Raises:
        FileNotFoundError, NotADirectoryError: `root` or `gaps_dir` is not an existing folder.
        records.StoreError: the gaps store is damaged (it is left untouched).
        """
        self.workspace = Workspace(root or notes_dir(), LOGICAL_ROOT)
        self.index = NotesIndex(self.workspace)
        self.gaps = GapStore(gaps_dir)

    def search(self, args: SearchNotesArgs) -> SearchResult:
        return SearchResult(query=args.query, hits=self.index.search(args.query, args.limit or DEFAULT_LIMIT))

    def read(self, args: ReadNoteArgs) -> NoteText:
        """Raises:
        ToolFailure: INVALID_INPUT, FORBIDDEN, NOT_FOUND from the path checks (a file with more
            than one hard link, or a hidden one, is FORBIDDEN); INVALID_INPUT for a file that is
            not a `.md` note (see `resolve_note`).
        """
        try:
            real = resolve_note(self.workspace, args.path)
        except ToolFailure as failure:
            if failure.code == "NOT_FOUND":
                self.index.stale = True  # the snapshot promised a note that is gone
            raise
        shown, text = self.workspace.logical(real), read_note_text(self.workspace, real)
        note = parse_note(shown, text)
        return NoteText(path=shown, title=note.title, updated=note.updated, text=text)

    def save(self, args: SaveLearningGapArgs) -> SavedGap:
        return self.gaps.save(args.topic, args.evidence, args.suggestion, args.idempotency_key)


# ---- the MCP server ----------------------------------------------------------------------------

SEARCH_DESCRIPTION = (
    "Search the current user's personal technical notes by question or keywords. Only existing notes, "
    "never the internet. Returns title, path, summary and a match score for each hit, best first. "
    "To read a whole note, search first, then call read_note with a returned path."
)
READ_DESCRIPTION = (
    "Read one note of the user's knowledge base in full: its text, title and last update date. "
    "Give a path exactly as search_notes returned it; nothing outside /notes can be read. Read-only."
)
SAVE_DESCRIPTION = (
    "Save one learning gap (a concept the user has not mastered yet) with the evidence from the notes "
    "and a suggestion. Changes data. The host application must have the user approve this exact gap "
    "first, and sets idempotency_key itself: the same key returns the first record instead of writing again."
)


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON Schema without pydantic's `title` keywords (property names are kept)."""

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        return {k: ({n: clean(s) for n, s in v.items()} if k == "properties" else clean(v))
                for k, v in node.items() if k != "title"}  # fmt: skip

    return clean(model.model_json_schema())


def _output_schema(model: type[BaseModel]) -> dict[str, Any]:
    # The success shape only: an error is `isError` with the text "CODE: message" and no
    # structured content (see fs_server.OUTPUT_SCHEMA for why one shape).
    return _schema(model)


@dataclass(frozen=True)
class _Spec:
    args: type[BaseModel]
    out: type[BaseModel]
    description: str
    annotations: types.ToolAnnotations


SPECS: dict[str, _Spec] = {
    "search_notes": _Spec(SearchNotesArgs, SearchResult, SEARCH_DESCRIPTION,
                          types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
    "read_note": _Spec(ReadNoteArgs, NoteText, READ_DESCRIPTION,
                       types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
    "save_learning_gap": _Spec(SaveLearningGapArgs, SavedGap, SAVE_DESCRIPTION,
                               types.ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                     idempotent_hint=True, open_world_hint=False)),
}  # fmt: skip
"""The three tools: rule, result shape, description and hints, by name."""


def notes_server(kb: KnowledgeBase, name: str = "notes") -> Server:
    """A low-level MCP server exposing the three tools over `kb`."""
    tools = [
        types.Tool(name=tool, description=spec.description, input_schema=_schema(spec.args),
                   output_schema=_output_schema(spec.out), annotations=spec.annotations)
        for tool, spec in SPECS.items()
    ]  # fmt: skip
    run = {"search_notes": kb.search, "read_note": kb.read, "save_learning_gap": kb.save}

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = SPECS.get(params.name)
        if spec is None:  # the request names nothing this server offers: a protocol error
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name[:64]}")
        try:
            args = validate_arguments(spec.args, params.arguments if params.arguments is not None else {})
            result = await anyio.to_thread.run_sync(run[params.name], args)
        except (ArgumentsError, ToolFailure) as failure:
            return error_result(failure.code, failure.message)
        except Exception:
            logger.exception("%s failed unexpectedly", params.name)  # detail to stderr, not to the client
            return error_result("UPSTREAM_ERROR", f"{params.name} failed (internal error)")
        data = result.model_dump(mode="json")
        # The same JSON as text, for clients that do not read structuredContent.
        text = json.dumps(data, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)

    return without_tracing(Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool))


def build_notes_server(root: Path | None = None, gaps_dir: Path | None = None, *, name: str = "notes") -> Server:
    """The notes server over `root` (default: the course's `fixtures/notes`); gaps go to
    `gaps_dir/gaps.sqlite3`, or stay in memory when `gaps_dir` is None.

    Raises:
        FileNotFoundError, NotADirectoryError, records.StoreError: see `KnowledgeBase`.
    """
    return notes_server(KnowledgeBase(root, gaps_dir), name)


def main(argv: list[str] | None = None) -> None:
    """Serve the notes over stdio until stdin closes; stdout carries only the protocol.

    Raises:
        SystemExit: with status 2 if the arguments are wrong, a folder does not exist or the gaps
            store is damaged.
    """
    parser = argparse.ArgumentParser(prog="python -m course_lib.notes_server", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=None, help="folder of .md notes shown as /notes (default: fixtures/notes)")
    parser.add_argument("--gaps", type=Path, default=None, help="folder for gaps.sqlite3 (default: in memory)")
    parser.add_argument("--name", default="notes", help="server name reported to clients")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    from course_lib import http_transport  # here, so stdio never imports uvicorn

    http_transport.add_http_arguments(parser)
    options = parser.parse_args(argv)
    for flag, folder in (("--root", options.root), ("--gaps", options.gaps)):
        if folder is not None and not folder.is_dir():
            parser.error(f"{flag} must be an existing directory: {folder}")
    if options.gaps is not None:
        try:
            GapStore(options.gaps).close()  # a damaged store: an error naming the file, which stays as it is
        except StoreError as damaged:
            parser.error(str(damaged))
    logging.basicConfig(level=options.log_level, stream=sys.stderr)
    if options.http is not None:  # Streamable HTTP instead of stdio (see http_transport.py)
        return http_transport.run_from_arguments(build_notes_server(options.root, options.gaps, name=options.name), parser, options)
    anyio.run(serve_stdio, build_notes_server(options.root, options.gaps, name=options.name))


if __name__ == "__main__":
    main()
