"""The room view's data: what each learner's server sent, kept in the room's own SQLite file, and the
view made of it for the instructor (standard library only: it runs in the hub's Python).

Each learner's Jupyter server sends a summary of their progress file (`course_lib.progress.Relay`):
per exercise they touched, the answered tries, when they first saw it, first tried it and passed
it, and their last try (the mistake and its message in both editions), plus which course
notebooks they have open. `Store` keeps the last one per learner; `view()` turns the store and the
hub's list of learners into what the page shows:

- one row per exercise of the chosen plan or block (INSTRUCTOR.md's, via room_catalog.json), with
  who passed, who is stuck on which mistake and for how long, who is working on it (the notebook
  open or the exercise seen, no answer yet), who has not started — rows sorted by where the room
  is stuck (most learners stuck first, then the longest stuck, then course order);
- one group per mistake whatever edition each learner runs, titled in the room's language, with
  each learner's own message (their values kept: that is what tells what went wrong);
- pace against the plan, once the instructor starts the plan's clock;
- learners who never opened a course notebook nor ran a check counted apart, and prunable.

`learner()` is one learner's drill-down; `export_rows()` the CSV export.
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

EDITIONS = ("en", "zh-CN")
LIMITS = {"exercises": 200, "text": 2000, "open": 50, "body": 512 * 1024}
_EXERCISE_ID = re.compile(r"^nb\w{1,6}\.check_\w{1,80}$")
_NOTEBOOK = re.compile(r"^\d\d[a-z]?$")
_MISTAKE = re.compile(r"^[0-9a-f]{1,64}$")
STATES = ("passed", "stuck", "working", "not_started")


class BadSummary(ValueError):
    """A posted summary that is not one (the message says what is wrong)."""


def _text(value: Any, where: str, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise BadSummary(f"{where}: a string is expected, not {type(value).__name__}")
    if len(value) > LIMITS["text"]:
        raise BadSummary(f"{where}: longer than {LIMITS['text']} characters")
    return value


def _when(value: Any, where: str) -> str | None:
    text = _text(value, where)
    if text is None:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadSummary(f"{where}: not an ISO 8601 time: {text[:40]!r}") from None
    if parsed.tzinfo is None:
        raise BadSummary(f"{where}: a time without its UTC offset: {text[:40]!r}")
    return parsed.astimezone(timezone.utc).isoformat(timespec="seconds")


def clean_time(value: Any) -> str:
    """An ISO 8601 time with its UTC offset, in UTC (the plan's clock).

    Raises:
        BadSummary: anything else.
    """
    text = _when(value, "start")
    if text is None:
        raise BadSummary("start: a time is expected")
    return text


def _per_edition(value: Any, where: str) -> dict[str, str | None]:
    if not isinstance(value, Mapping):
        raise BadSummary(f"{where}: an object with en and zh-CN is expected")
    return {edition: _text(value.get(edition), f"{where}.{edition}") for edition in EDITIONS}


def clean(body: Any) -> dict[str, Any]:
    """A posted summary, checked and reduced to what the room keeps.

    Raises:
        BadSummary: it is not a summary `course_lib.progress.Relay` sends (the message says why).
    """
    if not isinstance(body, Mapping) or body.get("version") != 1:
        raise BadSummary("not a progress summary (version 1 expected)")
    exercises, opened = body.get("exercises", {}), body.get("open", [])
    if not isinstance(exercises, Mapping) or len(exercises) > LIMITS["exercises"]:
        raise BadSummary(f"exercises: an object of at most {LIMITS['exercises']} exercises is expected")
    if not isinstance(opened, list) or len(opened) > LIMITS["open"]:
        raise BadSummary(f"open: a list of at most {LIMITS['open']} notebooks is expected")
    kept: dict[str, Any] = {}
    for exercise, line in exercises.items():
        where = f"exercises[{str(exercise)[:60]!r}]"
        if not isinstance(exercise, str) or not _EXERCISE_ID.match(exercise):
            raise BadSummary(f"{where}: not an exercise id (nbXX.check_name)")
        if not isinstance(line, Mapping):
            raise BadSummary(f"{where}: an object is expected")
        tries = line.get("tries", 0)
        if not isinstance(tries, int) or isinstance(tries, bool) or not 0 <= tries < 10**6:
            raise BadSummary(f"{where}.tries: a count is expected")
        last = line.get("last")
        if last is not None:
            if not isinstance(last, Mapping) or last.get("outcome") not in ("passed", "failed"):
                raise BadSummary(f"{where}.last: an answered try (passed or failed) is expected")
            mistake = _text(last.get("mistake"), f"{where}.last.mistake")
            if last["outcome"] == "failed" and not (mistake and _MISTAKE.match(mistake)):
                raise BadSummary(f"{where}.last.mistake: a failed try names its mistake (a hex key)")
            last = {"at": _when(last.get("at"), f"{where}.last.at"), "outcome": last["outcome"],
                    "mistake": mistake if last["outcome"] == "failed" else None,
                    "template": _per_edition(last.get("template", {}), f"{where}.last.template"),
                    "message": _per_edition(last.get("message", {}), f"{where}.last.message"),
                    "edition": last.get("edition") if last.get("edition") in EDITIONS else "en"}  # fmt: skip
        kept[exercise] = {"tries": tries, "seen_at": _when(line.get("seen_at"), f"{where}.seen_at"),
                          "first_try_at": _when(line.get("first_try_at"), f"{where}.first_try_at"),
                          "passed_at": _when(line.get("passed_at"), f"{where}.passed_at"), "last": last}  # fmt: skip
    notebooks = []
    for item in opened:
        if not isinstance(item, Mapping) or not _NOTEBOOK.match(str(item.get("notebook", ""))) \
                or item.get("edition") not in EDITIONS:  # fmt: skip
            raise BadSummary("open: each item is {notebook: '00', edition: 'en' or 'zh-CN'}")
        notebooks.append({"notebook": item["notebook"], "edition": item["edition"]})
    unreadable = _text(body.get("unreadable"), "unreadable")
    return {"exercises": kept, "open": notebooks, "unreadable": unreadable}


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Store:
    """The room's own SQLite file (on the hub's disk, never shared): the last summary of each
    learner, the names pruned, and the instructor's settings (the plan's clock)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS learners (
        name TEXT PRIMARY KEY, summary TEXT NOT NULL, opened TEXT NOT NULL,
        first_seen TEXT NOT NULL, updated_at TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS pruned (name TEXT PRIMARY KEY, at TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=5)
        self._db.execute("PRAGMA journal_mode = WAL")
        for statement in self.SCHEMA.split(";"):
            self._db.execute(statement)

    def close(self) -> None:
        self._db.close()

    def put(self, name: str, summary: Mapping[str, Any], now: datetime | None = None) -> None:
        """Keep `summary` (already `clean`ed) as `name`'s; a pruned name is back once it has started
        (run a check or opened a course notebook), not for a server's heartbeat."""
        at = (now or utcnow()).isoformat(timespec="seconds")
        with self._lock:
            row = self._db.execute("SELECT opened, first_seen FROM learners WHERE name = ?", (name,)).fetchone()
            opened = set(json.loads(row[0])) if row else set()
            opened |= {item["notebook"] for item in summary.get("open", [])}
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO learners VALUES (?, ?, ?, ?, ?)",
                             (name, json.dumps(summary), json.dumps(sorted(opened)), row[1] if row else at, at))  # fmt: skip
            if summary.get("exercises") or opened:
                self._db.execute("DELETE FROM pruned WHERE name = ?", (name,))
            self._db.execute("COMMIT")

    def learners(self) -> dict[str, dict[str, Any]]:
        """name → {summary, opened (every course notebook they ever had open), first_seen, updated_at}."""
        with self._lock:
            rows = self._db.execute("SELECT name, summary, opened, first_seen, updated_at FROM learners").fetchall()
        return {name: {"summary": json.loads(summary), "opened": json.loads(opened), "first_seen": first,
                       "updated_at": updated} for name, summary, opened, first, updated in rows}  # fmt: skip

    def prune(self, names: Iterable[str], now: datetime | None = None) -> list[str]:
        at = (now or utcnow()).isoformat(timespec="seconds")
        names = sorted(set(names))
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO pruned VALUES (?, ?)", [(n, at) for n in names])
        return names

    def unprune(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM pruned")

    def pruned(self) -> set[str]:
        with self._lock:
            return {name for (name,) in self._db.execute("SELECT name FROM pruned")}

    def setting(self, key: str, default: str | None = None) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str | None) -> None:
        with self._lock:
            if value is None:
                self._db.execute("DELETE FROM settings WHERE key = ?", (key,))
            else:
                self._db.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", (key, value))


# ---- the view ------------------------------------------------------------------------------------


def _minutes(since: str | None, now: datetime) -> int | None:
    if not since:
        return None
    return max(0, int((now - datetime.fromisoformat(since)).total_seconds() // 60))


def _clock(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def selection(catalog: Mapping[str, Any], plan: str, block: str) -> tuple[list[str], dict[str, Any] | None, dict[str, Any] | None]:
    """(the exercises shown, the plan, the block) for a choice made in the view: plan "all" is every
    exercise of the course; a plan alone is every exercise its blocks give; a block, its own."""
    order = [e["id"] for e in catalog["exercises"]]
    chosen = next((p for p in catalog["plans"] if p["id"] == plan), None)
    if chosen is None:
        return order, None, None
    picked = next((b for b in chosen["blocks"] if b["id"] == block), None)
    wanted = picked["exercises"] if picked else [e for b in chosen["blocks"] for e in b["exercises"]]
    return [e for e in order if e in wanted], chosen, picked


def _state(line: Mapping[str, Any] | None, notebook: str, opened_now: set[str]) -> str:
    if line and line.get("passed_at"):
        return "passed"
    if line and line.get("last") and line["last"]["outcome"] == "failed":
        return "stuck"
    if line or notebook in opened_now:
        return "working"
    return "not_started"


def view(catalog: Mapping[str, Any], users: Iterable[str], stored: Mapping[str, Mapping[str, Any]], *,
         lang: str = "en", plan: str = "all", block: str = "", clock: str | None = None,
         pruned: Iterable[str] = (), leave_out_never_started: bool = False,
         now: datetime | None = None) -> dict[str, Any]:  # fmt: skip
    """The room as the page shows it (see the module docstring). `users` are the hub's learners
    (admins excluded); `stored` is `Store.learners()`; `clock` the plan's start (ISO time) or None."""
    now = now or utcnow()
    lang = lang if lang in EDITIONS else "en"
    exercises = {e["id"]: e for e in catalog["exercises"]}
    shown, chosen_plan, chosen_block = selection(catalog, plan, block)
    pruned = set(pruned)
    names = sorted((set(users) | set(stored)) - pruned)
    never = [n for n in names if n not in stored or not (stored[n]["summary"]["exercises"] or stored[n]["opened"])]
    counted = [n for n in names if not (leave_out_never_started and n in never)]
    open_now = {n: {o["notebook"] for o in stored[n]["summary"].get("open", [])} for n in stored}
    rows = []
    for position, exercise in enumerate(shown):
        info = exercises.get(exercise, {"id": exercise, "notebook": exercise[2:4], "title": {}})
        row: dict[str, Any] = {"exercise": exercise, "notebook": info["notebook"], "position": position,
                               "title": info["title"].get(lang) or exercise,
                               **{state: [] for state in STATES}, "mistakes": []}  # fmt: skip
        groups: dict[str, dict[str, Any]] = {}
        for name in counted:
            line = stored.get(name, {}).get("summary", {}).get("exercises", {}).get(exercise)
            state = _state(line, info["notebook"], open_now.get(name, set()))
            row[state].append(name)
            if state == "stuck":
                last = line["last"]
                group = groups.setdefault(last["mistake"], {"mistake": last["mistake"], "learners": [], "latest": ""})
                if (last["at"] or "") >= group["latest"]:
                    group["latest"] = last["at"] or ""
                    group["title"] = last["template"].get(lang) or last["message"].get(lang) or ""
                group["learners"].append({"name": name, "minutes": _minutes(line["first_try_at"], now),
                                          "tries": line["tries"], "edition": last["edition"],
                                          "message": last["message"].get(lang) or ""})  # fmt: skip
        for group in groups.values():
            group["learners"].sort(key=lambda s: (-(s["minutes"] or 0), s["name"]))
            details: dict[str, int] = {}
            for stuck in group["learners"]:
                details[stuck["message"]] = details.get(stuck["message"], 0) + 1
            group["details"] = [{"message": m, "count": c} for m, c in sorted(details.items(), key=lambda d: -d[1])]
            group["count"] = len(group["learners"])
            del group["latest"]
        row["mistakes"] = sorted(groups.values(), key=lambda g: (-g["count"], g["title"]))
        row["stuck_longest"] = max((s["minutes"] or 0 for g in row["mistakes"] for s in g["learners"]), default=0)
        rows.append(row)
    rows.sort(key=lambda r: (-len(r["stuck"]), -r["stuck_longest"], r["position"]))
    notebooks = sorted({exercises[e]["notebook"] for e in shown if e in exercises}
                       | set(chosen_block["notebooks"] if chosen_block else []))  # fmt: skip
    return {
        "lang": lang, "learners": counted, "never_started": never, "pruned": sorted(pruned & set(users)),
        "rows": rows, "open": {nb: sorted(n for n in counted if nb in open_now.get(n, set())) for nb in notebooks},
        "plan": None if chosen_plan is None else {"id": chosen_plan["id"], "title": chosen_plan["title"].get(lang)},
        "block": None if chosen_block is None else {"id": chosen_block["id"], "start": chosen_block["start"],
                                                    "end": chosen_block["end"],
                                                    "label": chosen_block["label"].get(lang)},  # fmt: skip
        "pace": pace(catalog, plan, clock, stored, counted, now),
        "unreadable": {n: stored[n]["summary"]["unreadable"] for n in counted
                       if n in stored and stored[n]["summary"].get("unreadable")},  # fmt: skip
        "now": now.isoformat(timespec="seconds"),
    }


def pace(catalog: Mapping[str, Any], plan: str, clock: str | None, stored: Mapping[str, Mapping[str, Any]],
         learners: list[str], now: datetime) -> dict[str, Any] | None:  # fmt: skip
    """Where the plan's clock says the room should be, and where it is: None without a plan or clock.

    `elapsed` minutes since the clock started; `block` the block the clock is in; `due` the
    exercises of every block that has ended; per learner, how many of those they passed:
    `on_pace` passed them all, `median` of the counts.
    """
    chosen = next((p for p in catalog["plans"] if p["id"] == plan), None)
    if chosen is None or not clock:
        return None
    elapsed = max(0, int((now - datetime.fromisoformat(clock)).total_seconds() // 60))
    current = next((b for b in chosen["blocks"] if _clock(b["start"]) <= elapsed < _clock(b["end"])), None)
    due = [e for b in chosen["blocks"] if _clock(b["end"]) <= elapsed for e in b["exercises"]]
    passed = {n: sum(1 for e in due if (stored.get(n, {}).get("summary", {}).get("exercises", {}).get(e) or {})
                     .get("passed_at")) for n in learners}  # fmt: skip
    return {"clock": clock, "elapsed": elapsed, "block": None if current is None else current["id"],
            "block_start": None if current is None else current["start"],
            "block_end": None if current is None else current["end"], "due": due,
            "on_pace": sorted(n for n, count in passed.items() if count == len(due)),
            "behind": sorted(n for n, count in passed.items() if count < len(due)),
            "median": statistics.median(passed.values()) if passed else 0,
            "over": current is None and elapsed >= _clock(chosen["blocks"][-1]["end"])}  # fmt: skip


def learner(catalog: Mapping[str, Any], name: str, stored: Mapping[str, Mapping[str, Any]], *, lang: str = "en",
            plan: str = "all", block: str = "", base_url: str = "/", now: datetime | None = None) -> dict[str, Any]:  # fmt: skip
    """One learner's drill-down: each exercise shown (passed when, stuck since when and on what,
    working, not started), the notebooks open now, and their server's address for the admin."""
    now = now or utcnow()
    lang = lang if lang in EDITIONS else "en"
    mine = stored.get(name, {})
    summary = mine.get("summary", {"exercises": {}, "open": []})
    opened_now = {o["notebook"] for o in summary.get("open", [])}
    shown, _, _ = selection(catalog, plan, block)
    exercises = {e["id"]: e for e in catalog["exercises"]}
    lines = []
    for exercise in shown:
        info = exercises[exercise]
        line = summary["exercises"].get(exercise)
        state = _state(line, info["notebook"], opened_now)
        last = (line or {}).get("last")
        lines.append({"exercise": exercise, "notebook": info["notebook"], "title": info["title"].get(lang),
                      "state": state, "tries": (line or {}).get("tries", 0),
                      "passed_at": (line or {}).get("passed_at"), "first_try_at": (line or {}).get("first_try_at"),
                      "minutes": _minutes((line or {}).get("first_try_at"), now) if state == "stuck" else None,
                      "message": (last or {}).get("message", {}).get(lang) if state == "stuck" else None})  # fmt: skip
    base = base_url if base_url.endswith("/") else base_url + "/"
    return {"name": name, "server": f"{base}user/{name}/lab", "open": sorted(opened_now),
            "first_seen": mine.get("first_seen"), "updated_at": mine.get("updated_at"), "exercises": lines,
            "unreadable": summary.get("unreadable")}  # fmt: skip


EXPORT_COLUMNS = ("learner", "exercise", "notebook", "title", "state", "tries", "seen_at", "first_try_at",
                  "passed_at", "last_try_at", "stuck_minutes", "mistake", "message")  # fmt: skip


def export_rows(catalog: Mapping[str, Any], learners: Iterable[str], stored: Mapping[str, Mapping[str, Any]], *,
                lang: str = "en", plan: str = "all", block: str = "", now: datetime | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """One row per learner and exercise shown (EXPORT_COLUMNS): the CSV export."""
    now = now or utcnow()
    shown, _, _ = selection(catalog, plan, block)
    exercises = {e["id"]: e for e in catalog["exercises"]}
    rows = []
    for name in learners:
        summary = stored.get(name, {}).get("summary", {"exercises": {}, "open": []})
        opened_now = {o["notebook"] for o in summary.get("open", [])}
        for exercise in shown:
            info = exercises[exercise]
            line = summary["exercises"].get(exercise) or {}
            state = _state(line or None, info["notebook"], opened_now)
            last = line.get("last") or {}
            rows.append({"learner": name, "exercise": exercise, "notebook": info["notebook"],
                         "title": info["title"].get(lang, exercise), "state": state, "tries": line.get("tries", 0),
                         "seen_at": line.get("seen_at") or "", "first_try_at": line.get("first_try_at") or "",
                         "passed_at": line.get("passed_at") or "", "last_try_at": last.get("at") or "",
                         "stuck_minutes": _minutes(line.get("first_try_at"), now) if state == "stuck" else "",
                         "mistake": last.get("mistake") or "" if state == "stuck" else "",
                         "message": (last.get("message") or {}).get(lang) or "" if state == "stuck" else ""})  # fmt: skip
    return rows
