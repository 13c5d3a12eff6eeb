"""course_lib.progress: every check's outcome in a local SQLite file, which never gets in a check's way.

The checks are real ones (notebook 03's `check_classify` is quick: it reads one recording); the
file is a real SQLite file under tmp_path. Damaged, locked, read-only and foreign files are made
for real: garbage bytes, a second connection holding the write lock, an immutable file
(`chattr +i`, which binds root too) or a read-only mode for other users, another program's database.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_lib import progress
from course_lib.exercises import failed, nb03, passed

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def file(tmp_path, monkeypatch) -> Path:
    """The learner's progress file, in a home of its own."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(progress.FILE, raising=False)
    monkeypatch.delenv(progress.SWITCH, raising=False)
    return tmp_path / "home" / ".tool-calling-course" / "progress.sqlite3"


def _classify(answer, capsys) -> tuple[bool, str]:
    result = nb03.check_classify(answer)
    return result, capsys.readouterr().out


def test_a_check_records_the_exercise_its_outcome_and_the_time(file, capsys):
    assert progress.progress_file() == file
    before = time.time()
    assert _classify(lambda response: "ok", capsys)[0] is False
    assert _classify(nb03.SOLUTIONS["check_classify"](), capsys)[0] is True
    wrong, right = progress.attempts(file)
    assert (wrong.exercise, wrong.outcome, right.exercise, right.outcome) == (
        "nb03.check_classify", "failed", "nb03.check_classify", "passed")  # fmt: skip
    assert wrong.message == "id 3: 'ok' is not one of 'success', 'tool error', 'protocol error'."
    assert wrong.template == "id N: '…' is not one of '…', '…', '…'."
    assert right.mistake is right.template is None
    from datetime import datetime

    assert before - 1 <= datetime.fromisoformat(wrong.at).timestamp() <= time.time() + 1
    # WAL, our application id: the room view can read while the learner writes.
    with sqlite3.connect(file) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA application_id").fetchone() == (progress.APPLICATION_ID,)


def test_the_same_mistake_with_other_values_is_one_mistake(file, capsys):
    _classify(lambda response: "ok", capsys)
    _classify(lambda response: "nope", capsys)
    _classify(lambda response: "tool error", capsys)  # a real label, the wrong one: another mistake
    first, second, third = progress.attempts(file)
    assert first.message != second.message and first.mistake == second.mistake
    assert third.mistake != first.mistake


@pytest.mark.parametrize("message, blanked", [
    ("#3 '{\"head\": 20}': you predicted 'ok', the real outcome is INVALID",
     "#N '…': you predicted '…', the real outcome is INVALID"),
    ("you passed <function final_text at 0x7f3a2b>; don't call it", "you passed <…>; don't call it"),
    ("cannot read /home/jupyter-alice/notes.txt", "cannot read /…"),
    ("got {'path': 'a', 'head': 2} and [1, 2]", "got {…} and […]"),
    ("第 7 对（另一个用户）得到了同一个 id 'cd03de79'", "第 N 对（另一个用户）得到了同一个 id '…'"),
])  # fmt: skip
def test_the_template_blanks_the_learners_values(message, blanked):
    assert progress.template(message) == blanked
    assert progress.mistake_key("nb00.check_kinds", message) == progress.mistake_key("nb00.check_kinds", blanked)


def test_the_starter_left_as_it_is_is_recorded_as_not_answered_in_every_check(file, capsys):
    for name in progress.course_exercises():
        notebook, check = name.split(".")
        getattr(importlib.import_module(f"course_lib.exercises.{notebook}"), check)(...)
    recorded = progress.attempts(file)
    assert [a.exercise for a in recorded] == progress.course_exercises()
    assert {a.outcome for a in recorded} == {"unanswered"}, [a.message for a in recorded if a.outcome != "unanswered"]


def test_the_course_exercises_are_the_solutions_of_every_exercises_module():
    expected = []
    for path in sorted((REPO / "course_lib" / "exercises").glob("nb*")):
        notebook = path.stem
        module = importlib.import_module(f"course_lib.exercises.{notebook}")
        expected += [f"{notebook}.{name}" for name in module.SOLUTIONS]
    assert progress.course_exercises() == expected and len(expected) >= 30


def test_passed_and_failed_outside_a_check_record_nothing(file, capsys):
    assert passed("fine") is True and failed("wrong") is False
    assert capsys.readouterr().out == "✓ fine\n✗ wrong\n"
    assert not file.exists()


def test_a_helper_and_a_delegated_check_are_attributed_to_the_check_the_learner_called(file, capsys):
    from course_lib.exercises import nb10

    nb10.check_diagnoses({"no such trace": ("A", "call_id")})  # defined in course_lib.drills, exposed by nb10
    nb08 = importlib.import_module("course_lib.exercises.nb08")
    nb08.check_other_server({"no such panel"})  # failed(...) is returned by the helper _judge
    assert [(a.exercise, a.outcome) for a in progress.attempts(file)] == [
        ("nb10.check_diagnoses", "failed"), ("nb08.check_other_server", "failed")]  # fmt: skip


@pytest.mark.parametrize("switch", ["off", "0", "false", "NO"])
def test_an_environment_variable_turns_recording_off(file, capsys, monkeypatch, switch):
    monkeypatch.setenv(progress.SWITCH, switch)
    assert _classify(lambda response: "ok", capsys) == (
        False, "✗ id 3: 'ok' is not one of 'success', 'tool error', 'protocol error'.\n")  # fmt: skip
    assert not file.exists() and not file.parent.exists()


def _unchanged_check(capsys) -> None:
    """The check prints and returns exactly what it does with a healthy file."""
    assert _classify(lambda response: "ok", capsys) == (
        False, "✗ id 3: 'ok' is not one of 'success', 'tool error', 'protocol error'.\n")  # fmt: skip
    assert _classify(nb03.SOLUTIONS["check_classify"](), capsys)[0] is True


def test_a_damaged_file_never_breaks_a_check_and_is_left_as_it_was(file, capsys):
    file.parent.mkdir(parents=True)
    file.write_bytes(b"these are not the records you are looking for\x00" * 20)
    before = file.read_bytes()
    _unchanged_check(capsys)
    assert file.read_bytes() == before and sorted(p.name for p in file.parent.iterdir()) == [file.name]
    with pytest.raises(progress.ProgressUnreadable, match="not a SQLite file"):
        progress.attempts(file)


def test_a_damaged_sqlite_file_never_breaks_a_check(file, capsys):
    _classify(lambda response: "ok", capsys)
    data = bytearray(file.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the header stays, the schema page is garbage
    file.write_bytes(bytes(data))
    for leftover in file.parent.glob("*-wal"):
        leftover.unlink()
    _unchanged_check(capsys)


def test_another_programs_database_is_never_written(file, capsys):
    file.parent.mkdir(parents=True)
    with sqlite3.connect(file) as db:
        db.execute("CREATE TABLE photos (name TEXT)")
        db.execute("INSERT INTO photos VALUES ('cat.png')")
    db.close()
    _unchanged_check(capsys)
    with sqlite3.connect(file) as db:
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("photos",)]
    db.close()
    with pytest.raises(progress.ProgressUnreadable, match="another program"):
        progress.attempts(file)


def test_a_locked_file_never_breaks_or_holds_up_a_check(file, capsys):
    _classify(nb03.SOLUTIONS["check_classify"](), capsys)  # the file exists, in WAL mode
    holder = sqlite3.connect(file, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process (a second kernel) in the middle of a write
    try:
        started = time.monotonic()
        _unchanged_check(capsys)
        assert time.monotonic() - started < 5  # waited LOCK_WAIT per record, not BUSY_TIMEOUT's 10 s
    finally:
        holder.rollback()
        holder.close()
    assert len(progress.attempts(file)) == 1  # the two outcomes during the lock were not recorded
    _classify(lambda response: "ok", capsys)
    assert len(progress.attempts(file)) == 2  # and recording goes on once the lock is gone


def _read_only(path: Path) -> None:
    """Make `path` read-only for this process, root included."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        path.parent.chmod(0o555)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True) if shutil.which("chattr") else None
    if done is None or done.returncode != 0:
        message = f"cannot make a read-only file as root here (chattr +i: {done.stderr.strip() if done else 'missing'})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _writable_again(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    else:
        path.parent.chmod(0o755)
        path.chmod(0o644)


def test_a_read_only_file_never_breaks_a_check(file, capsys):
    _classify(nb03.SOLUTIONS["check_classify"](), capsys)
    with sqlite3.connect(file) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    db.close()
    _read_only(file)
    try:
        before = file.read_bytes()
        _unchanged_check(capsys)
        assert file.read_bytes() == before
        assert len(progress.attempts(file)) == 1  # still readable: the learner's table works
    finally:
        _writable_again(file)


def test_a_home_that_cannot_be_written_never_breaks_a_check(capsys, monkeypatch):
    monkeypatch.delenv(progress.SWITCH, raising=False)
    monkeypatch.setenv(progress.FILE, "/proc/course-progress/progress.sqlite3")  # read-only, even for root
    _unchanged_check(capsys)


def _cli(file: Path, lang: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COURSE_LANG": lang, progress.FILE: str(file), "TZ": "UTC"}
    env.pop(progress.SWITCH, None)
    return subprocess.run([sys.executable, "-m", "course_lib.progress", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=60)  # fmt: skip


def test_the_learner_sees_their_own_table_in_the_editions_language(file, capsys):
    _classify(lambda response: "ok", capsys)
    nb00 = importlib.import_module("course_lib.exercises.nb00")
    nb00.check_kinds(...)
    _classify(lambda response: "nope", capsys)
    _classify(nb03.SOLUTIONS["check_classify"](), capsys)
    english = _cli(file, "en")
    assert english.returncode == 0, english.stderr
    lines = english.stdout.splitlines()
    assert lines[0] == f"Your exercise checks, kept in {file} (on this machine only)."
    assert lines[1] == "Set COURSE_PROGRESS=off to stop recording."
    assert lines[3].split() == ["exercise", "tries", "result"]
    row = {line.split()[0]: line for line in lines[4:-2]}
    assert set(row) == set(progress.course_exercises())
    assert row["nb03.check_classify"].split()[1:3] == ["3", "✓"]  # three answered tries, the last one passed
    assert row["nb00.check_kinds"].split()[1:] == ["0", "—"]  # the starter does not count as a try
    assert lines[-1] == f"1 of {len(progress.course_exercises())} exercises passed."
    chinese = _cli(file, "zh-CN")
    assert chinese.stdout.splitlines()[0] == f"你的练习检查结果，保存在 {file}（只在这台机器上）。"
    assert chinese.stdout.splitlines()[3].split() == ["练习", "次数", "结果"]
    assert "通过" in chinese.stdout and chinese.stdout.splitlines()[-1] == f"{len(progress.course_exercises())} 个练习中通过了 1 个。"


def test_the_table_says_what_is_wrong_with_a_broken_file(tmp_path):
    broken = tmp_path / "progress.sqlite3"
    broken.write_bytes(b"not sqlite")
    done = _cli(broken, "en")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"{broken}: not a SQLite file (damaged or another kind of file)\n"


# ---- one mistake, both editions ------------------------------------------------------------------


def _run_in(edition: str, monkeypatch, capsys, check, answer, file: Path) -> progress.Attempt:
    monkeypatch.setenv("COURSE_LANG", edition)
    monkeypatch.setenv(progress.FILE, str(file))
    capsys.readouterr()
    check(answer)
    printed = capsys.readouterr().out
    recorded = progress.attempts(file)[-1]
    assert printed == f"✗ {recorded.message}\n"  # what the learner saw is what was recorded
    return recorded


class _Hostile:
    def __getattr__(self, name):
        raise RuntimeError(f"{name} raises")

    def __repr__(self):
        raise RuntimeError("repr raises")

    def __iter__(self):
        raise RuntimeError("iteration raises")


def _wrong_answers(solution):
    """Answers of the wrong kind for a check, and for a function exercise functions that go wrong."""
    answers = {"None-returning": lambda *a, **k: None, "a str": "answer", "an int": 42, "an empty dict": {},
               "a list of lists": [[1]], "hostile": _Hostile()}  # fmt: skip
    if callable(solution):
        answers |= {"raises": lambda *a, **k: 1 / 0, "returns ''": lambda *a, **k: "",
                    "returns a dict": lambda *a, **k: {"path": "/workspace/notes.txt"}}  # fmt: skip
    return answers


def _words(text: str) -> str:
    return "".join(text.split())


EVERY_CHECK = [(name.split(".")[0], name.split(".")[1]) for name in progress.course_exercises()
               if name != "nb03b.check_reference_predictions"]  # it starts the Node server (test_side_by_side)


@pytest.mark.parametrize(("module", "check"), EVERY_CHECK, ids=[f"{m}.{c}" for m, c in EVERY_CHECK])
def test_a_mistake_is_one_mistake_in_both_editions_and_keeps_its_detail(module, check, tmp_path, monkeypatch, capsys):
    """Every check, fed wrong answers in English and in the zh-CN edition: the recorded mistake has
    the same key in both, and each edition's record holds the other edition's words exactly (the
    English learner's message is the Chinese learner's message_en, and the other way round)."""
    monkeypatch.delenv(progress.SWITCH, raising=False)
    exercises = importlib.import_module(f"course_lib.exercises.{module}")
    function = getattr(exercises, check)
    compared = 0
    for label, answer in _wrong_answers(exercises.SOLUTIONS[check]()).items():
        english = _run_in("en", monkeypatch, capsys, function, answer, tmp_path / f"en-{label}.sqlite3")
        chinese = _run_in("zh-CN", monkeypatch, capsys, function, answer, tmp_path / f"zh-{label}.sqlite3")
        assert english.outcome == chinese.outcome, label
        if english.outcome != "failed":
            continue
        compared += 1
        assert (english.edition, chinese.edition) == ("en", "zh-CN")
        assert english.mistake == chinese.mistake, (label, english.message, chinese.message)
        # Word for word; the spaces between sentences may differ ("zero. Look" / "zero。读取").
        assert _words(chinese.message_en) == _words(english.message), label
        assert _words(english.message_zh) == _words(chinese.message), label
        assert _words(english.template)[:250] == _words(chinese.template)[:250]  # English, values blanked
    assert compared >= 3


def test_the_detail_is_kept_and_the_key_ignores_only_the_values(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(progress.SWITCH, raising=False)
    first = _run_in("zh-CN", monkeypatch, capsys, nb03.check_classify, lambda r: "ok", tmp_path / "a.sqlite3")
    second = _run_in("en", monkeypatch, capsys, nb03.check_classify, lambda r: "nope", tmp_path / "b.sqlite3")
    other = _run_in("en", monkeypatch, capsys, nb03.check_classify, lambda r: "tool error", tmp_path / "c.sqlite3")
    assert first.mistake == second.mistake != other.mistake
    assert first.message_en == "id 3: 'ok' is not one of 'success', 'tool error', 'protocol error'."
    assert first.message == first.message_zh == "id 3：'ok' 不是 'success', 'tool error', 'protocol error' 之一。"
    assert "'nope'" in second.message_zh  # the learner's value, in the other edition's words


def test_bilingual_reads_a_message_made_of_several_texts_and_plain_words():
    from course_lib.lang import Heard

    heard = [Heard("{n} characters", "5 characters", "5 个字符"),
             Heard("case {case}: you returned {mine}. ", "case 'x': you returned 5 个字符. ", "例子 'x'：你返回了 5 个字符。"),
             Heard(" Read the docs.", " Read the docs.", " 去读文档。"), Heard("ok", "ok", "好")]  # fmt: skip
    said = progress.bilingual("例子 'x'：你返回了 5 个字符。 去读文档。 ValueError: bad", "zh-CN", heard)
    assert said.en == "case 'x': you returned 5 characters. Read the docs. ValueError: bad"
    assert said.zh == "例子 'x'：你返回了 5 个字符。 去读文档。 ValueError: bad"
    # The parts, left to right: each said text as the course wrote it in English, before its fields
    # were filled, and the words no `say` gave: the mistake's name leaves the learner's values out.
    assert said.parts == ("case {case}: you returned {mine}. ", " Read the docs.", "ValueError: bad")
    assert progress.bilingual("nothing said", "en", heard).parts == ("nothing said",)


def test_a_file_of_the_first_version_is_read_and_then_extended(tmp_path, monkeypatch, capsys):
    old = tmp_path / "progress.sqlite3"
    with sqlite3.connect(old) as db:
        db.execute(f"PRAGMA application_id = {progress.APPLICATION_ID}")
        db.executescript("""CREATE TABLE attempts (id INTEGER PRIMARY KEY, at TEXT NOT NULL, exercise TEXT NOT NULL,
            outcome TEXT NOT NULL, mistake TEXT, template TEXT, message TEXT NOT NULL);
            INSERT INTO attempts VALUES (1, '2026-11-01T10:00:00+00:00', 'nb03.check_classify', 'failed', 'abc',
            'id N: …', 'id 3: ''ok'' is wrong');""")  # fmt: skip
    db.close()
    [first] = progress.attempts(old)
    assert (first.edition, first.said("en"), first.said("zh-CN")) == ("en", "id 3: 'ok' is wrong", "id 3: 'ok' is wrong")
    monkeypatch.delenv(progress.SWITCH, raising=False)
    _run_in("zh-CN", monkeypatch, capsys, nb03.check_classify, lambda r: "ok", old)
    first, second = progress.attempts(old)
    assert first.message == "id 3: 'ok' is wrong" and second.edition == "zh-CN" and second.message_en.startswith("id 3: 'ok'")


def test_the_summary_holds_what_the_room_needs_and_nothing_else(file, capsys):
    _classify(lambda response: "ok", capsys)
    _classify(lambda response: "nope", capsys)
    _classify(nb03.SOLUTIONS["check_classify"](), capsys)
    nb00 = importlib.import_module("course_lib.exercises.nb00")
    nb00.check_kinds(...)
    nb00.check_final_text(lambda response: "")
    summary = progress.summary(file)
    assert summary["version"] == 1 and set(summary["exercises"]) == {"nb03.check_classify", "nb00.check_kinds",
                                                                       "nb00.check_final_text"}  # fmt: skip
    classify = summary["exercises"]["nb03.check_classify"]
    assert classify["tries"] == 3 and classify["passed_at"] and classify["last"]["outcome"] == "passed"
    assert classify["first_try_at"] <= classify["passed_at"]
    kinds = summary["exercises"]["nb00.check_kinds"]
    assert (kinds["tries"], kinds["last"], kinds["seen_at"] is not None) == (0, None, True)  # seen, not answered
    final = summary["exercises"]["nb00.check_final_text"]["last"]
    assert final["outcome"] == "failed" and len(final["mistake"]) == 12 and final["edition"] == "en"
    assert final["message"]["en"].startswith("case '") and final["message"]["zh-CN"].startswith("例子 '")
    assert final["template"]["en"].startswith("case '…': you returned '…'")
    assert json.loads(json.dumps(summary)) == summary  # JSON as it is


def test_open_notebooks_are_course_notebooks_only():
    paths = ["tool-calling-course/notebooks/00_map_and_first_run.ipynb",
             "tool-calling-course/notebooks/zh-CN/03b_reference_server_side_by_side.ipynb",
             "tool-calling-course/notebooks/00_map_and_first_run.ipynb", "private/diary.ipynb",
             "notebooks/INSTRUCTOR.md", "", None]  # fmt: skip
    assert progress.open_notebooks(paths) == [{"notebook": "00", "edition": "en"}, {"notebook": "03b", "edition": "zh-CN"}]


class _Sessions:
    def __init__(self) -> None:
        self.paths = ["tool-calling-course/notebooks/00_map_and_first_run.ipynb"]

    async def list_sessions(self):
        return [{"path": path} for path in self.paths]


def test_the_relay_sends_when_something_changed_with_the_servers_token(file, capsys):
    """A real HTTP server stands in for the room: the relay posts the summary with the token, only
    when the file or the open notebooks changed (or the heartbeat is due), and backs off when the
    room does not answer."""
    import asyncio

    from tornado import web

    received: list[tuple[str, dict]] = []
    answer = {"status": 200}

    class Room(web.RequestHandler):
        def post(self):
            received.append((self.request.headers.get("Authorization", ""), json.loads(self.request.body)))
            self.set_status(answer["status"])

    async def scenario():
        server = web.Application([(r"/services/room/api/progress", Room)]).listen(0, "127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        sessions = _Sessions()
        relay = progress.Relay(f"http://127.0.0.1:{port}/services/room/api/progress", "the-servers-token", file,
                               sessions=sessions, every=0.01, heartbeat=3600)  # fmt: skip
        try:
            assert await relay.tick() is True  # the first look: sent, even with nothing recorded yet
            assert await relay.tick() is False  # nothing changed
            _classify(lambda response: "ok", capsys)
            assert await relay.tick() is True
            sessions.paths = []
            assert await relay.tick() is True  # the notebook was closed
            answer["status"] = 503
            _classify(nb03.SOLUTIONS["check_classify"](), capsys)
            assert await relay.tick() is False and relay.failures == 1 and relay.wait_until > 0
            assert await relay.tick() is False and relay.failures == 1  # waiting: not tried again at once
            relay.wait_until = 0
            answer["status"] = 200
            assert await relay.tick() is True and relay.failures == 0
        finally:
            server.stop()

    asyncio.run(scenario())
    assert {token for token, _ in received} == {"token the-servers-token"}
    bodies = [body for _, body in received]
    assert bodies[0] == {"version": 1, "exercises": {}, "open": [{"notebook": "00", "edition": "en"}]}
    assert bodies[1]["exercises"]["nb03.check_classify"]["last"]["outcome"] == "failed"
    assert bodies[2]["open"] == []
    assert bodies[-1]["exercises"]["nb03.check_classify"]["passed_at"] is not None
    assert len(bodies) == 5  # four sent, one refused by the room


def test_the_relay_is_only_loaded_on_a_hub_with_a_token_and_recording_on(monkeypatch):
    started = []

    class App:
        session_manager = _Sessions()
        web_app = type("W", (), {"settings": {}})()
        log = type("L", (), {"info": lambda *a: started.append(a), "warning": lambda *a: None})()

    monkeypatch.delenv(progress.ROOM_API, raising=False)
    progress._load_jupyter_server_extension(App())
    assert "course_progress_relay" not in App.web_app.settings  # not on a hub: nothing to do
    monkeypatch.setenv(progress.ROOM_API, "http://127.0.0.1:9/room")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "t")
    monkeypatch.setenv(progress.SWITCH, "off")
    progress._load_jupyter_server_extension(App())
    assert "course_progress_relay" not in App.web_app.settings  # the learner turned recording off


@pytest.mark.parametrize("folder", ["notebooks", "notebooks/zh-CN"])
def test_notebook_00_tells_the_learner_what_is_recorded_where_and_how_to_turn_it_off(folder):
    import json

    cells = json.loads((REPO / folder / "00_map_and_first_run.ipynb").read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert f"`~/{progress.IN_HOME.as_posix()}`" in text and "`COURSE_PROGRESS=off`" in text
    assert "`python -m course_lib.progress`" in text
