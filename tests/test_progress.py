"""course_lib.progress: every check's outcome in a local SQLite file, which never gets in a check's way.

The checks are real ones (notebook 03's `check_classify` is quick: it reads one recording); the
file is a real SQLite file under tmp_path. Damaged, locked, read-only and foreign files are made
for real: garbage bytes, a second connection holding the write lock, an immutable file
(`chattr +i`, which binds root too) or a read-only mode for other users, another program's database.
"""

from __future__ import annotations

import importlib
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


def test_the_room_counts_passed_stuck_on_which_mistake_and_not_started(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(progress.SWITCH, raising=False)
    files = {name: tmp_path / name / "progress.sqlite3" for name in ("ana", "bo", "chen", "dee", "eve")}
    answers = {"ana": [lambda r: "ok", nb03.SOLUTIONS["check_classify"]()],  # stuck, then passed
               "bo": [lambda r: "ok"], "chen": [lambda r: "nope"],  # the same mistake, other values
               "dee": [lambda r: "tool error"], "eve": [...]}  # another mistake; the starter only
    for learner, tries in answers.items():
        monkeypatch.setenv(progress.FILE, str(files[learner]))
        for answer in tries:
            nb03.check_classify(answer)
    capsys.readouterr()
    (tmp_path / "fay").mkdir()
    files["fay"] = tmp_path / "fay" / "progress.sqlite3"  # logged in, never ran a check
    files["gus"] = tmp_path / "gus.sqlite3"
    files["gus"].write_bytes(b"garbage")
    summary = progress.room(files)
    assert summary.learners == list(files) and list(summary.unreadable) == ["gus"]
    row = next(r for r in summary.rows if r.exercise == "nb03.check_classify")
    assert row.passed == ["ana"]
    assert [(s.template, s.learners) for s in row.stuck] == [
        ("id N: '…' is not one of '…', '…', '…'.", ["bo", "chen"]),
        (next(a.template for a in progress.attempts(files["dee"])), ["dee"])]  # fmt: skip
    assert row.not_started == ["eve", "fay", "gus"]
    assert [r.exercise for r in summary.rows] == progress.course_exercises()  # every exercise, course order
    other = next(r for r in summary.rows if r.exercise == "nb00.check_kinds")
    assert (other.passed, other.stuck, other.not_started) == ([], [], list(files))


@pytest.mark.parametrize("folder", ["notebooks", "notebooks/zh-CN"])
def test_notebook_00_tells_the_learner_what_is_recorded_where_and_how_to_turn_it_off(folder):
    import json

    cells = json.loads((REPO / folder / "00_map_and_first_run.ipynb").read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert f"`~/{progress.IN_HOME.as_posix()}`" in text and "`COURSE_PROGRESS=off`" in text
    assert "`python -m course_lib.progress`" in text
