"""What each exercise check said: kept for the learner, and on a workshop hub for the instructor.

Every `check_…` records its outcome — the exercise, passed or the mistake it named, the time — in
one small SQLite file in the learner's home, `~/.tool-calling-course/progress.sqlite3`. Nothing
leaves the machine: no network, no account; on a workshop hub the instructor's room view
(`workshop/room.py`) reads the file where it lies. `COURSE_PROGRESS=off` turns recording off;
`COURSE_PROGRESS_FILE` puts the file elsewhere.

    python -m course_lib.progress     # your own table, in the edition's language

Recording never gets in a check's way: a home that cannot be written, a file that is damaged,
locked by another process (it waits `LOCK_WAIT` seconds, no more), read-only or another program's
— the outcome is then not recorded, and the check prints and returns exactly what it would have.
A file that is not ours is never written to. The store follows `course_lib.records`: WAL (the
room view reads while a learner writes), one short transaction per outcome, constraints in the
schema.

A failure is grouped by its *mistake*: the message the check printed, with the learner's own
values blanked (quoted text, numbers, object reprs, paths — `template()`), and a short hash of
that template (`mistake_key()`). Two learners who make the same mistake with different values
get the same key, so the room view can count "stuck on which mistake". The template keeps the
words of the edition the learner ran: a room of both editions shows a mistake once per language.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import sqlite3
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

SWITCH = "COURSE_PROGRESS"
"""Set to off (or 0, false, no) and nothing is recorded."""
FILE = "COURSE_PROGRESS_FILE"
"""Where the file is, instead of `~/.tool-calling-course/progress.sqlite3`."""
IN_HOME = Path(".tool-calling-course") / "progress.sqlite3"
OUTCOMES = ("passed", "failed", "unanswered")
LOCK_WAIT = 0.25
"""Seconds a check waits for another process's write before it gives up recording."""
MESSAGE_LIMIT = 2000
APPLICATION_ID = 0x0C0C5E13  # records.py's stores are 0x0C0C5E12: a progress file is told apart
_HEADER = b"SQLite format 3\x00"
_UNANSWERED = ("Not answered yet", "还没有作答")
"""How every check's message begins while the starter (`...`) is still there, in both editions."""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,                              -- UTC, ISO 8601
    exercise TEXT NOT NULL CHECK (exercise <> ''), -- nbXX.check_name
    outcome TEXT NOT NULL CHECK (outcome IN {OUTCOMES}),
    mistake TEXT CHECK ((outcome = 'failed') = (mistake IS NOT NULL)),
    template TEXT CHECK ((outcome = 'failed') = (template IS NOT NULL)),
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_exercise ON attempts (exercise, id)
"""


def enabled() -> bool:
    """False when `COURSE_PROGRESS` is off, 0, false or no."""
    return os.environ.get(SWITCH, "").strip().lower() not in {"off", "0", "false", "no"}


def progress_file() -> Path:
    """The learner's file: `$COURSE_PROGRESS_FILE`, else `~/.tool-calling-course/progress.sqlite3`."""
    chosen = os.environ.get(FILE, "").strip()
    return Path(chosen).expanduser() if chosen else Path.home() / IN_HOME


# ---- the mistake a failure names ----------------------------------------------------------------

_BLANKS = [  # (pattern, replacement), applied in order
    (re.compile(r"<[^<>\n]*>"), "<…>"),  # <function f at 0x…>, <object …>
    (re.compile(r"(?<![\w'])'(?:[^'\\\n]|\\.)*'(?![\w])"), "'…'"),  # 'text' (not the ' of don't)
    (re.compile(r'"(?:[^"\\\n]|\\.)*"'), '"…"'),
    (re.compile(r"[“‘「『][^”’」』\n]*[”’」』]"), "“…”"),
    (re.compile(r"(?<![\w/])(?:/[\w.@~-]+){2,}/?"), "/…"),  # absolute paths (homes differ)
    (re.compile(r"\d+(?:\.\d+)?"), "N"),
    (re.compile(r"\{[^{}\n]*\}"), "{…}"),  # dict reprs, once their contents are blanked
    (re.compile(r"\[[^\[\]\n]*(?:'…'|\"…\"|N|\{…\})[^\[\]\n]*\]"), "[…]"),  # list reprs
    (re.compile(r"\s+"), " "),
]


def template(message: str) -> str:
    """`message` with the learner's own values blanked: the words of the mistake only.

        >>> template("#3 '{\\"head\\": 20}': you predicted 'ok', the real outcome is INVALID")
        "#N '…': you predicted '…', the real outcome is INVALID"
    """
    text = message
    for pattern, blank in _BLANKS:
        text = pattern.sub(blank, text)
    return text.strip()[:300]


def mistake_key(exercise: str, message: str) -> str:
    """A short stable name for the mistake `message` names in `exercise` (same for every learner)."""
    return hashlib.sha256(f"{exercise}\n{template(message)}".encode()).hexdigest()[:12]


def outcome_of(is_right: bool, message: str, *, starter_left: bool = False) -> str:
    """"passed", "failed", or "unanswered": the starter (`...`) left as it is (`starter_left`, or a
    message that begins "Not answered yet") is not a mistake."""
    if is_right:
        return "passed"
    return "unanswered" if starter_left or message.startswith(_UNANSWERED) else "failed"


# ---- writing: one outcome, never in the way ------------------------------------------------------


def record(exercise: str, outcome: str, message: str, *, file: Path | None = None) -> bool:
    """Add one outcome to the learner's file; True if it was written.

    Never raises: when recording is off, or the file cannot take the outcome (see the module
    docstring), it returns False and leaves the file as it was.
    """
    if not enabled() or outcome not in OUTCOMES or not exercise:
        return False
    try:
        target = Path(file) if file is not None else progress_file()
        failed = outcome == "failed"
        row = (datetime.now(timezone.utc).isoformat(timespec="seconds"), exercise, outcome,
               mistake_key(exercise, message) if failed else None, template(message) if failed else None,
               message[:MESSAGE_LIMIT])  # fmt: skip
        return _write(target, row)
    except Exception:  # noqa: BLE001 — a check must print and return whatever happens to its record
        return False


def _write(file: Path, row: tuple) -> bool:
    if file.exists() and not _ours_by_header(file):
        return False  # not a SQLite file: someone's data, or damaged; never overwritten
    file.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(file, timeout=LOCK_WAIT, isolation_level=None)
    try:
        (identity,) = connection.execute("PRAGMA application_id").fetchone()
        (tables,) = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if tables and identity != APPLICATION_ID:
            return False  # another program's database
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            if not tables:
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                for statement in SCHEMA.split(";"):
                    connection.execute(statement)
            connection.execute("INSERT INTO attempts (at, exercise, outcome, mistake, template, message) "
                               "VALUES (?, ?, ?, ?, ?, ?)", row)  # fmt: skip
        except BaseException:
            connection.rollback()
            raise
        connection.commit()
        return True
    finally:
        connection.close()


def _ours_by_header(file: Path) -> bool:
    with file.open("rb") as handle:
        header = handle.read(len(_HEADER))
    return header in (b"", _HEADER)


# ---- reading: the learner's table and the room ---------------------------------------------------


class ProgressUnreadable(Exception):
    """A progress file exists but cannot be read (damaged, another program's, no permission)."""


@dataclass(frozen=True)
class Attempt:
    at: str
    exercise: str
    outcome: str
    mistake: str | None
    template: str | None
    message: str


def attempts(file: Path) -> list[Attempt]:
    """Every recorded outcome in `file`, oldest first; [] when there is no file yet.

    Raises:
        ProgressUnreadable: the file exists but is not a readable progress file (the message says why).
    """
    file = Path(file)
    if not file.exists():
        return []
    try:
        if not _ours_by_header(file):
            raise ProgressUnreadable(f"{file}: not a SQLite file (damaged or another kind of file)")
        connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, timeout=LOCK_WAIT)
    except OSError as error:
        raise ProgressUnreadable(f"{file}: cannot be read ({error.strerror or error})") from None
    except sqlite3.Error as error:
        raise ProgressUnreadable(f"{file}: cannot be opened ({error})") from None
    try:
        (identity,) = connection.execute("PRAGMA application_id").fetchone()
        (tables,) = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if not tables:
            return []
        if identity != APPLICATION_ID:
            raise ProgressUnreadable(f"{file}: a SQLite database of another program, not a progress file")
        rows = connection.execute("SELECT at, exercise, outcome, mistake, template, message FROM attempts "
                                  "ORDER BY id").fetchall()  # fmt: skip
    except sqlite3.Error as error:
        raise ProgressUnreadable(f"{file}: cannot be read ({error})") from None
    finally:
        connection.close()
    return [Attempt(*row) for row in rows]


@functools.lru_cache(maxsize=4)
def _exercises_in(root: Path, stamp: tuple[float, ...]) -> tuple[str, ...]:
    """The exercises of the modules under `root`; `stamp` (their mtimes) makes an edit show up."""
    return tuple(_scan(root))


def course_exercises(root: Path | None = None) -> list[str]:
    """Every exercise of the course, in course order: `nbXX.check_name` from each module's SOLUTIONS.

    Read from the sources (no import), so the room view needs neither the SDKs nor the course's
    dependencies: only this file and the exercises' sources beside it.
    """
    root = Path(root) if root is not None else Path(__file__).resolve().parent / "exercises"
    return list(_exercises_in(root, tuple(p.stat().st_mtime for p in _modules(root))))


def _modules(root: Path) -> list[Path]:
    return sorted([*root.glob("nb*.py"), *root.glob("nb*/__init__.py")],
                  key=lambda p: p.stem if p.stem != "__init__" else p.parent.name)  # fmt: skip


def _scan(root: Path) -> list[str]:
    modules = _modules(root)
    found = []
    for path in modules:
        notebook = path.stem if path.stem != "__init__" else path.parent.name
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id == "SOLUTIONS" and isinstance(node.value, ast.Dict):
                found += [f"{notebook}.{key.value}" for key in node.value.keys
                          if isinstance(key, ast.Constant) and isinstance(key.value, str)]  # fmt: skip
    return found


def _order(exercises: Iterable[str]) -> list[str]:
    known = course_exercises()
    return known + sorted(set(exercises) - set(known))


@dataclass
class Line:
    """One exercise of one learner: how many answered tries, and where they stand."""

    exercise: str
    tries: int = 0  # answered tries (a starter left as it is does not count)
    passed_at: str | None = None
    last: Attempt | None = None  # the last answered try


def learner_lines(records: list[Attempt], order: list[str] | None = None) -> list[Line]:
    """One line per course exercise (and any other recorded one), in course order (or `order`'s)."""
    names = order if order is not None else _order(a.exercise for a in records)
    lines = {name: Line(name) for name in [*names, *sorted({a.exercise for a in records} - set(names))]}
    for attempt in records:
        if attempt.outcome == "unanswered":
            continue
        line = lines[attempt.exercise]
        line.tries += 1
        line.last = attempt
        if attempt.outcome == "passed" and line.passed_at is None:
            line.passed_at = attempt.at
    return list(lines.values())


@dataclass
class Stuck:
    """Learners whose last try of an exercise failed on one mistake (and who never passed it)."""

    mistake: str
    template: str
    learners: list[str] = field(default_factory=list)


@dataclass
class RoomRow:
    exercise: str
    passed: list[str] = field(default_factory=list)
    stuck: list[Stuck] = field(default_factory=list)  # most learners first
    not_started: list[str] = field(default_factory=list)


@dataclass
class Room:
    rows: list[RoomRow]
    learners: list[str]
    unreadable: dict[str, str]  # learner → why their file could not be read


def room(files: Mapping[str, Path]) -> Room:
    """The room at a glance, from each learner's file: per exercise, who passed, who is stuck on
    which mistake (their last answered try failed and they never passed), who has not started."""
    records: dict[str, list[Attempt]] = {}
    unreadable = {}
    for learner, file in files.items():
        try:
            records[learner] = attempts(file)
        except ProgressUnreadable as why:
            unreadable[learner] = str(why)
            records[learner] = []
        except Exception as error:  # noqa: BLE001 — one learner's file must not hide the room
            unreadable[learner] = f"{file}: {type(error).__name__}: {error}"
            records[learner] = []
    order = _order(a.exercise for found in records.values() for a in found)
    lines = {learner: {line.exercise: line for line in learner_lines(found, order)} for learner, found in records.items()}
    rows = []
    for exercise in order:
        row = RoomRow(exercise)
        stuck: dict[str, Stuck] = {}
        for learner in files:
            line = lines[learner][exercise]
            if line.passed_at:
                row.passed.append(learner)
            elif line.last is None:
                row.not_started.append(learner)
            else:
                group = stuck.setdefault(line.last.mistake, Stuck(line.last.mistake, line.last.template))
                group.learners.append(learner)
        row.stuck = sorted(stuck.values(), key=lambda s: (-len(s.learners), s.template))
        rows.append(row)
    return Room(rows, list(files), unreadable)


# ---- python -m course_lib.progress ---------------------------------------------------------------


def _local(at: str) -> str:
    return datetime.fromisoformat(at).astimezone().strftime("%Y-%m-%d %H:%M")


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(file: Path | None = None) -> str:
    """The learner's own table, in the edition's language (what `python -m course_lib.progress` prints).

    Raises:
        ProgressUnreadable: see `attempts`.
    """
    from course_lib.lang import display_width, pad, say

    file = Path(file) if file is not None else progress_file()
    lines = learner_lines(attempts(file))
    head = [say("Your exercise checks, kept in {file} (on this machine only).",
                "你的练习检查结果，保存在 {file}（只在这台机器上）。", file=file)]  # fmt: skip
    if not enabled():
        head.append(say(f"Recording is off ({SWITCH}=off): nothing new is added.",
                        f"记录已关闭（{SWITCH}=off）：不会再添加新的结果。"))  # fmt: skip
    else:
        head.append(say(f"Set {SWITCH}=off to stop recording.", f"设置 {SWITCH}=off 即可停止记录。"))
    headers = (say("exercise", "练习"), say("tries", "次数"), say("result", "结果"))
    cells = []
    for line in lines:
        if line.passed_at:
            result = say("✓ passed {at}", "✓ {at} 通过", at=_local(line.passed_at))
        elif line.last is not None:
            result = say("✗ {at}: {message}", "✗ {at}：{message}", at=_local(line.last.at),
                         message=_short(line.last.message.lstrip("✗ ")))  # fmt: skip
        else:
            result = "—"
        cells.append((line.exercise, str(line.tries), result))
    widths = [max(display_width(h), *(display_width(c[i]) for c in cells)) for i, h in enumerate(headers[:2])]
    rows = [f"{pad(headers[0], widths[0])}  {pad(headers[1], widths[1])}  {headers[2]}"]
    rows += [f"{pad(e, widths[0])}  {pad(t, widths[1])}  {r}" for e, t, r in cells]
    done = sum(1 for line in lines if line.passed_at)
    tail = say("{done} of {total} exercises passed.", "{total} 个练习中通过了 {done} 个。", done=done, total=len(lines))
    return "\n".join([*head, "", *rows, "", tail])


def main(argv: list[str] | None = None) -> int:
    """Print the learner's table; exit 1 (with one line saying why) if the file cannot be read."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        print(table(Path(argv[0]) if argv else None))
    except ProgressUnreadable as why:
        print(why, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
