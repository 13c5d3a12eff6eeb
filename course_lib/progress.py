"""What each exercise check said: kept for the learner, and on a workshop hub for the instructor.

Every `check_…` records its outcome — the exercise, passed or the mistake it named, the time — in
one small SQLite file in the learner's home, `~/.tool-calling-course/progress.sqlite3`. On their
own machine nothing leaves it: no network, no account. On a workshop hub the learner's own
Jupyter server (this module is also a server extension, `Relay`) sends a summary of that file to
the instructor's room view (`workshop/room.py`, a hub service) with the server's own hub token,
so the room knows who sent it; nothing else is sent, and nowhere else. `COURSE_PROGRESS=off` turns
recording (and so sending) off; `COURSE_PROGRESS_FILE` puts the file elsewhere.

    python -m course_lib.progress     # your own table, in the edition's language

Recording never gets in a check's way: a home that cannot be written, a file that is damaged,
locked by another process (it waits `LOCK_WAIT` seconds, no more), read-only or another program's
— the outcome is then not recorded, and the check prints and returns exactly what it would have.
A file that is not ours is never written to. The store follows `course_lib.records`: WAL (the
learner's server reads while a kernel writes), one short transaction per outcome, constraints in
the schema.

A failure is grouped by its *mistake*, the same in both editions: a check's message is made of
texts `course_lib.lang.say` gave in both languages, so the message is recorded in English and in
Chinese (`message_en`, `message_zh`, the learner's own values kept: they tell what went wrong), and
the mistake is named by the English texts as the course wrote them, the learner's values blanked
(`template()`, `mistake_key()`). Two learners who make the same mistake with other values, in
either edition, get the same key; the room view shows the mistake in the room's language.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import hashlib
import json
import os
import re
import sqlite3
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SWITCH = "COURSE_PROGRESS"
"""Set to off (or 0, false, no) and nothing is recorded."""
FILE = "COURSE_PROGRESS_FILE"
"""Where the file is, instead of `~/.tool-calling-course/progress.sqlite3`."""
ROOM_API = "WORKSHOP_ROOM_API"
"""On a workshop hub: the room view's URL that takes this learner's progress (set by the hub config)."""
IN_HOME = Path(".tool-calling-course") / "progress.sqlite3"
OUTCOMES = ("passed", "failed", "unanswered")
EDITIONS = ("en", "zh-CN")
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
    message TEXT NOT NULL,
    edition TEXT,                                  -- the edition the learner ran: en or zh-CN
    message_en TEXT,                               -- the message in each edition (a file of the
    message_zh TEXT                                -- first version has neither: read as `message`)
);
CREATE INDEX IF NOT EXISTS attempts_by_exercise ON attempts (exercise, id)
"""
_ADDED = ("edition", "message_en", "message_zh")
"""Columns a file written by the first version lacks: added when it is next written."""


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


def mistake_key(exercise: str, message: str, parts: Iterable[str] | None = None) -> str:
    """A short stable name for a mistake of `exercise` (the same for every learner and edition):
    from `parts`, the English texts the message was made of as the course wrote them, else from
    `message` with its values blanked."""
    words = [template(part) for part in parts] if parts is not None else [template(message)]
    return hashlib.sha256("\n".join([exercise, *words]).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Said:
    """A check's message in both editions, and the English parts that name its mistake."""

    en: str
    zh: str
    parts: tuple[str, ...]


def bilingual(message: str, edition: str, heard: Iterable[Any]) -> Said:
    """`message` (in `edition`) in both editions, from `heard`: the (template, en, zh) texts
    `course_lib.lang.say` gave while the check ran. The longest texts found in the message are its
    parts, left to right; text between them that `say` did not give (an exception's words, a value)
    is the same in both editions and is a part of its own.

    A text said inside another's f-string (`say(f"… {label} …", f"… {label} …")` with `label` said
    just before) is in the learner's words in both of the outer text's editions: it is put in the
    other edition's words too. Into English, any Chinese text said is such a text. Into Chinese, an
    English text is taken for one only when it is a phrase (a space in it): a single English word in
    a Chinese text is more likely a wire value the course writes the same in both (`replayed`).
    """
    mine = 2 if edition == "zh-CN" else 1  # index of the edition's text in a Heard
    other = 3 - mine
    # The longest first; of two alike, the later: `say(…, name=say(…))` says the inner text first,
    # and the outer one may be the inner one's words in one edition.
    usable = [(i, h) for i, h in enumerate(heard) if len(h[mine].strip()) >= 2 and h[mine].strip() in message]
    found = [h for _, h in sorted(usable, key=lambda ih: (-len(ih[1][mine].strip()), -ih[0]))]
    covered: list[tuple[int, int, Any]] = []
    for said in found:
        text = said[mine].strip()
        start = message.find(text)
        while start >= 0 and any(a < start + len(text) and start < b for a, b, _ in covered):
            start = message.find(text, start + 1)
        if start >= 0:
            covered.append((start, start + len(text), said))
    spans = sorted(covered, key=lambda c: c[0])

    def nested(text: str, into_: int) -> str:
        for said in found:
            inner, words = said[3 - into_].strip(), said[into_].strip()
            if inner in text and (into_ == 1 or " " in inner):
                text = text.replace(inner, words)
        return text

    def translated(into_: int) -> str:
        out, at = "", 0
        for start, end, said in spans:
            out += message[at:start]
            words = nested(said[into_].strip(), into_)
            # Each edition's spacing between sentences: "zero. Look" in English, "zero。读取" in Chinese.
            if into_ == 1 and out[-1:] in tuple(".?!:;,)") and out and words[:1].isalnum():
                out += " "
            elif into_ == 2 and out.endswith(" ") and out.rstrip()[-1:] in tuple("。：；，）？！"):
                out = out.rstrip()
            out += words
            at = end
        return out + message[at:]

    parts, at = [], 0
    for start, end, said in spans:
        if message[at:start].strip():
            parts.append(message[at:start].strip())
        parts.append(said[0] if mine == 1 else nested(said[0], 1))  # the English as the course wrote it
        at = end
    if message[at:].strip():
        parts.append(message[at:].strip())
    translation = translated(other)
    en, zh = (message, translation) if mine == 1 else (translation, message)
    return Said(en, zh, tuple(parts) if covered else (message,))


def outcome_of(is_right: bool, message: str, *, starter_left: bool = False) -> str:
    """"passed", "failed", or "unanswered": the starter (`...`) left as it is (`starter_left`, or a
    message that begins "Not answered yet") is not a mistake."""
    if is_right:
        return "passed"
    return "unanswered" if starter_left or message.startswith(_UNANSWERED) else "failed"


# ---- writing: one outcome, never in the way ------------------------------------------------------


def record(exercise: str, outcome: str, message: str, *, file: Path | None = None) -> bool:
    """Add one outcome to the learner's file; True if it was written.

    The message is kept in both editions (`bilingual`, from what `course_lib.lang.say` gave since
    the last record). Never raises: when recording is off, or the file cannot take the outcome (see
    the module docstring), it returns False and leaves the file as it was.
    """
    try:
        from course_lib import lang

        heard = lang.heard(forget=True)
        if not enabled() or outcome not in OUTCOMES or not exercise:
            return False
        target = Path(file) if file is not None else progress_file()
        edition = lang.language()
        said = bilingual(message, edition, heard)
        failed = outcome == "failed"
        row = (datetime.now(timezone.utc).isoformat(timespec="seconds"), exercise, outcome,
               mistake_key(exercise, message, said.parts) if failed else None,
               template(said.en) if failed else None, message[:MESSAGE_LIMIT], edition,
               said.en[:MESSAGE_LIMIT], said.zh[:MESSAGE_LIMIT])  # fmt: skip
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
            columns = {info[1] for info in connection.execute("PRAGMA table_info(attempts)")}
            for name in _ADDED:
                if name not in columns:  # a file of the first version: the same table, three columns more
                    connection.execute(f"ALTER TABLE attempts ADD COLUMN {name} TEXT")
            connection.execute("INSERT INTO attempts (at, exercise, outcome, mistake, template, message, edition, "
                               "message_en, message_zh) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)  # fmt: skip
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


# ---- reading: the learner's table, and the summary their server sends to the room ----------------


class ProgressUnreadable(Exception):
    """A progress file exists but cannot be read (damaged, another program's, no permission)."""


@dataclass(frozen=True)
class Attempt:
    at: str
    exercise: str
    outcome: str
    mistake: str | None
    template: str | None  # the English message, values blanked (failures only)
    message: str  # as the learner saw it
    edition: str = "en"
    message_en: str = ""
    message_zh: str = ""

    def said(self, edition: str) -> str:
        """The message in `edition` (the one the learner saw when the file predates both)."""
        return (self.message_zh if edition == "zh-CN" else self.message_en) or self.message


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
        columns = {info[1] for info in connection.execute("PRAGMA table_info(attempts)")}
        added = ", ".join(name if name in columns else f"NULL AS {name}" for name in _ADDED)
        rows = connection.execute(f"SELECT at, exercise, outcome, mistake, template, message, {added} "
                                  "FROM attempts ORDER BY id").fetchall()  # fmt: skip
    except sqlite3.Error as error:
        raise ProgressUnreadable(f"{file}: cannot be read ({error})") from None
    finally:
        connection.close()
    return [Attempt(*row[:6], row[6] or "en", row[7] or "", row[8] or "") for row in rows]


@functools.lru_cache(maxsize=4)
def _exercises_in(root: Path, stamp: tuple[float, ...]) -> tuple[str, ...]:
    """The exercises of the modules under `root`; `stamp` (their mtimes) makes an edit show up."""
    return tuple(_scan(root))


def course_exercises(root: Path | None = None) -> list[str]:
    """Every exercise of the course, in course order: `nbXX.check_name` from each module's SOLUTIONS.

    Read from the sources (no import), so it needs neither the SDKs nor the course's dependencies.
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
    seen_at: str | None = None  # the first outcome of any kind, the starter's included
    first_try_at: str | None = None
    passed_at: str | None = None
    last: Attempt | None = None  # the last answered try


def learner_lines(records: list[Attempt], order: list[str] | None = None) -> list[Line]:
    """One line per course exercise (and any other recorded one), in course order (or `order`'s)."""
    names = order if order is not None else _order(a.exercise for a in records)
    lines = {name: Line(name) for name in [*names, *sorted({a.exercise for a in records} - set(names))]}
    for attempt in records:
        line = lines[attempt.exercise]
        line.seen_at = line.seen_at or attempt.at
        if attempt.outcome == "unanswered":
            continue
        line.tries += 1
        line.first_try_at = line.first_try_at or attempt.at
        line.last = attempt
        if attempt.outcome == "passed" and line.passed_at is None:
            line.passed_at = attempt.at
    return list(lines.values())


SUMMARY_MESSAGE_LIMIT = 500


def summary(file: Path | None = None) -> dict[str, Any]:
    """What the learner's server sends to the room view: per exercise they touched, the number of
    answered tries, when they first saw it, first tried it and passed it, and their last answered
    try (the mistake and its message in both editions). The room keeps only the last summary.

    Raises:
        ProgressUnreadable: see `attempts`.
    """
    exercises = {}
    for line in learner_lines(attempts(Path(file) if file is not None else progress_file()), order=[]):
        last = line.last
        exercises[line.exercise] = {
            "tries": line.tries, "seen_at": line.seen_at, "first_try_at": line.first_try_at,
            "passed_at": line.passed_at,
            "last": None if last is None else {
                "at": last.at, "outcome": last.outcome, "mistake": last.mistake,
                "template": {edition: template(last.said(edition)) if last.mistake else None for edition in EDITIONS},
                "message": {edition: last.said(edition)[:SUMMARY_MESSAGE_LIMIT] for edition in EDITIONS},
                "edition": last.edition},
        }  # fmt: skip
    return {"version": 1, "exercises": exercises}


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
    from course_lib.lang import display_width, language, pad, say

    file = Path(file) if file is not None else progress_file()
    lines = learner_lines(attempts(file))
    head = [say("Your exercise checks, kept in {file} (on this machine only).",
                "你的练习检查结果，保存在 {file}（只在这台机器上）。", file=file)]  # fmt: skip
    if os.environ.get(ROOM_API):
        head[0] = say("Your exercise checks, kept in {file}; on this workshop hub your server also sends a "
                      "summary of them to the instructor's room view.",
                      "你的练习检查结果，保存在 {file}；在这个工作坊的 hub 上，你的服务器还会把它的摘要"
                      "发给讲师的课堂视图。", file=file)  # fmt: skip
    if not enabled():
        head.append(say(f"Recording is off ({SWITCH}=off): nothing new is added.",
                        f"记录已关闭（{SWITCH}=off）：不会再添加新的结果。"))  # fmt: skip
    else:
        head.append(say(f"Set {SWITCH}=off to stop recording.", f"设置 {SWITCH}=off 即可停止记录。"))
    headers = (say("exercise", "练习"), say("tries", "次数"), say("result", "结果"))
    edition = language()
    cells = []
    for line in lines:
        if line.passed_at:
            result = say("✓ passed {at}", "✓ {at} 通过", at=_local(line.passed_at))
        elif line.last is not None:
            result = say("✗ {at}: {message}", "✗ {at}：{message}", at=_local(line.last.at),
                         message=_short(line.last.said(edition).lstrip("✗ ")))  # fmt: skip
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


# ---- on a workshop hub: the learner's server sends the summary to the room view -------------------

_COURSE_NOTEBOOK = re.compile(r"(?:^|/)notebooks/(?:(zh-CN)/)?(\d\d[a-z]?)_[^/]*\.ipynb$")


def open_notebooks(paths: Iterable[str]) -> list[dict[str, str]]:
    """The course notebooks among `paths` (the learner's open sessions), as {notebook, edition}:
    nothing of any other file is sent."""
    found = []
    for path in paths:
        match = _COURSE_NOTEBOOK.search(path or "")
        if match:
            found.append({"notebook": match[2], "edition": match[1] or "en"})
    return sorted({tuple(d.items()): d for d in found}.values(), key=lambda d: (d["notebook"], d["edition"]))


class Relay:
    """Sends this learner's progress summary to the room view, from the learner's own Jupyter server.

    Every `every` seconds it reads the summary of the progress file and the course notebooks the
    learner has open; when either changed, or `heartbeat` seconds passed, it POSTs `{"version", "exercises", "open"}` to `url` with `Authorization: token <the server's hub
    token>`: the room asks the hub whose token it is, so a learner can only speak for themselves.
    A room that does not answer is tried again later (backing off to `heartbeat`); nothing a learner
    does waits for it.
    """

    def __init__(self, url: str, token: str, file: Path, *, sessions: Any = None, every: float = 2.0,
                 heartbeat: float = 60.0, log: Any = None) -> None:  # fmt: skip
        self.url, self.token, self.file = url, token, Path(file)
        self.sessions, self.every, self.heartbeat, self.log = sessions, every, heartbeat, log
        self.sent: str | None = None
        self.sent_at = 0.0
        self.wait_until = 0.0
        self.failures = 0
        self._busy = False

    async def _open(self) -> list[dict[str, str]]:
        if self.sessions is None:
            return []
        try:
            listed = await self.sessions.list_sessions()
        except Exception:  # noqa: BLE001 — the session list is a hint, never a reason not to send
            return []
        return open_notebooks(str(s.get("path") or (s.get("notebook") or {}).get("path") or "") for s in listed)

    async def tick(self) -> bool:
        """Send if something changed (or the heartbeat is due); True when a summary was sent."""
        if self._busy or time.monotonic() < self.wait_until:
            return False
        self._busy = True
        try:
            opened = await self._open()
            try:  # a few hundred rows at most: read whole (off the server's loop), compared whole
                body = {**await asyncio.get_running_loop().run_in_executor(None, summary, self.file), "open": opened}
            except ProgressUnreadable as why:
                body = {"version": 1, "exercises": {}, "open": opened, "unreadable": str(why)}
            state = json.dumps(body, sort_keys=True)
            if state == self.sent and time.monotonic() - self.sent_at < self.heartbeat:
                return False
            ok = await self._post(body)
            if ok:
                self.sent, self.sent_at, self.failures, self.wait_until = state, time.monotonic(), 0, 0.0
            else:
                self.failures += 1
                self.wait_until = time.monotonic() + min(self.heartbeat, self.every * 2**self.failures)
            return ok
        finally:
            self._busy = False

    async def _post(self, body: dict[str, Any]) -> bool:
        from tornado.httpclient import AsyncHTTPClient, HTTPClientError

        try:
            await AsyncHTTPClient().fetch(self.url, method="POST", body=json.dumps(body), request_timeout=10,
                                          headers={"Authorization": f"token {self.token}",
                                                   "Content-Type": "application/json"})  # fmt: skip
        except (HTTPClientError, OSError) as error:
            if self.log is not None and self.failures == 0:
                self.log.warning("course_lib.progress: the room view did not take the summary: %s", error)
            return False
        return True


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """What Jupyter Server looks for in a module named in `jpserver_extensions`: this module."""
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """On a workshop hub (`WORKSHOP_ROOM_API` and the server's `JUPYTERHUB_API_TOKEN` set, recording
    on): send the learner's summary to the room view every few seconds when it changes."""
    url, token = os.environ.get(ROOM_API, "").strip(), os.environ.get("JUPYTERHUB_API_TOKEN", "")
    if not url or not token or not enabled():
        return
    from tornado.ioloop import PeriodicCallback

    relay = Relay(url, token, progress_file(), sessions=serverapp.session_manager, log=serverapp.log)
    serverapp.web_app.settings["course_progress_relay"] = relay
    PeriodicCallback(relay.tick, relay.every * 1000).start()
    serverapp.log.info("course_lib.progress: sending progress summaries to the room view at %s", url)


if __name__ == "__main__":
    sys.exit(main())
