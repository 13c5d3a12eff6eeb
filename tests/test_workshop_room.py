"""The room view's data (workshop/roomdata.py) and its catalog (workshop/catalog.py), without a hub.

The summaries here are real ones: `course_lib.progress.summary()` of progress files that real
checks wrote, in English and in the zh-CN edition; the store is a real SQLite file. The hub, the
relay from each learner's server and the page in Chromium are tests/test_hub.py's.
"""

from __future__ import annotations

import importlib
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from course_lib import progress

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workshop"))
import roomdata  # noqa: E402

from workshop import catalog as catalog_module  # noqa: E402

CATALOG = catalog_module.load()
NOW = datetime(2026, 12, 3, 10, 0, tzinfo=timezone.utc)


@pytest.fixture
def learner_files(tmp_path, monkeypatch, capsys):
    """Progress files written by real checks: (name, edition) → what they answered."""
    monkeypatch.delenv(progress.SWITCH, raising=False)
    nb00 = importlib.import_module("course_lib.exercises.nb00")

    def answer(name: str, edition: str, *answers) -> dict:
        file = tmp_path / f"{name}.sqlite3"
        monkeypatch.setenv(progress.FILE, str(file))
        monkeypatch.setenv("COURSE_LANG", edition)
        for check, value in answers:
            check(value)
        capsys.readouterr()
        return progress.summary(file)

    wrong_kinds = {name: "rule" for name in nb00.OBJECTS}
    return {
        "ana": answer("ana", "en", (nb00.check_final_text, nb00.SOLUTIONS["check_final_text"]()),
                      (nb00.check_kinds, wrong_kinds)),  # fmt: skip
        "bo": answer("bo", "en", (nb00.check_final_text, lambda response: "")),
        "chen": answer("chen", "zh-CN", (nb00.check_final_text, lambda response: "")),
        "dan": answer("dan", "zh-CN", (nb00.check_final_text, lambda response: "x")),
        "eve": answer("eve", "en", (nb00.check_kinds, ...)),  # the starter run: seen, not answered
    }


def _store(tmp_path, summaries: dict, opened: dict | None = None, at: datetime = NOW) -> roomdata.Store:
    store = roomdata.Store(tmp_path / "room.sqlite3")
    for name, summary in summaries.items():
        body = roomdata.clean({**summary, "open": [{"notebook": nb, "edition": "en"} for nb in (opened or {}).get(name, [])]})
        store.put(name, body, now=at)
    return store


def test_a_real_summary_is_clean_and_kept_as_the_last_one(tmp_path, learner_files):
    store = _store(tmp_path, learner_files)
    kept = store.learners()
    assert set(kept) == set(learner_files)
    assert kept["chen"]["summary"]["exercises"]["nb00.check_final_text"]["last"]["edition"] == "zh-CN"
    store.put("bo", roomdata.clean({"version": 1, "exercises": {}, "open": [{"notebook": "04", "edition": "en"}]}))
    assert store.learners()["bo"]["summary"]["exercises"] == {} and store.learners()["bo"]["opened"] == ["04"]
    store.put("bo", roomdata.clean({"version": 1, "exercises": {}, "open": []}))
    assert store.learners()["bo"]["opened"] == ["04"]  # ever opened: kept
    assert store.learners()["bo"]["first_seen"] == kept["bo"]["first_seen"]


@pytest.mark.parametrize("body, says", [
    (None, "version 1"), ({"version": 2}, "version 1"), ({"version": 1, "exercises": []}, "exercises"),
    ({"version": 1, "exercises": {"rm -rf": {}}}, "not an exercise id"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"tries": -1}}}, "a count"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"tries": True}}}, "a count"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"last": {"outcome": "failed"}}}}, "names its mistake"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"last": {"outcome": "maybe"}}}}, "an answered try"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"seen_at": "yesterday"}}}, "ISO 8601"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"seen_at": "2026-12-03T10:00:00"}}}, "UTC offset"),
    ({"version": 1, "exercises": {"nb00.check_kinds": {"last": {"outcome": "failed", "mistake": "abc",
                                                                "message": {"en": "x" * 3000}}}}}, "longer than"),
    ({"version": 1, "exercises": {f"nb00.check_{n}": {} for n in range(201)}}, "at most 200"),
    ({"version": 1, "open": [{"notebook": "../etc", "edition": "en"}]}, "each item"),
    ({"version": 1, "open": [{"notebook": "00", "edition": "fr"}]}, "each item"),
])  # fmt: skip
def test_a_summary_that_is_not_one_is_refused_saying_why(body, says):
    with pytest.raises(roomdata.BadSummary, match=says):
        roomdata.clean(body)


def test_the_view_sorts_by_where_the_room_is_stuck_and_groups_a_mistake_across_editions(tmp_path, learner_files):
    store = _store(tmp_path, learner_files, opened={"eve": ["00"]})
    users = [*learner_files, "fay"]  # fay logged in and never opened a notebook
    view = roomdata.view(CATALOG, users, store.learners(), lang="en", plan="half-day", block="half-day/1", now=NOW)
    assert [r["exercise"] for r in view["rows"]] == ["nb00.check_final_text", "nb00.check_kinds"]  # 3 stuck, then 1
    final, kinds = view["rows"]
    assert final["title"] == "Exercise 2 · Find the final answer's text" and final["notebook"] == "00"
    assert (final["passed"], final["stuck"], final["working"], final["not_started"]) == (
        ["ana"], ["bo", "chen", "dan"], ["eve"], ["fay"])  # fmt: skip
    # bo (English) and chen (Chinese) returned '': one mistake; dan returned 'x': the same words, other values.
    [group] = final["mistakes"]
    assert group["count"] == 3 and {s["name"] for s in group["learners"]} == {"bo", "chen", "dan"}
    assert group["title"].startswith("case '…': you returned '…', the SDK's output_text gives")
    messages = {s["name"]: s["message"] for s in group["learners"]}
    assert messages["chen"] == messages["bo"]  # chen's words, in the room's language: English
    assert "you returned 'x'" in messages["dan"]  # the learner's own value: the detail that tells
    assert group["details"] == [{"message": messages["bo"], "count": 2}, {"message": messages["dan"], "count": 1}]
    assert kinds["stuck"] == ["ana"] and kinds["working"] == ["eve"]  # eve ran the starter and has 00 open
    assert view["never_started"] == ["fay"] and view["learners"] == sorted(users)
    # The same room in Chinese: the same group, its title and every message in Chinese.
    chinese = roomdata.view(CATALOG, users, store.learners(), lang="zh-CN", plan="half-day", block="half-day/1", now=NOW)
    [zh_group] = chinese["rows"][0]["mistakes"]
    assert zh_group["mistake"] == group["mistake"] and zh_group["title"].startswith("例子 '…'：你返回了 '…'")
    assert chinese["rows"][0]["title"] == "练习 2 · 找出最终回答的文本"
    assert {s["name"]: s["message"] for s in zh_group["learners"]}["bo"].startswith("例子 '最终回答")
    assert chinese["block"]["label"].startswith("循环")


def test_rows_stuck_alike_are_ordered_by_who_is_stuck_longest(tmp_path, learner_files):
    bo = json.loads(json.dumps(learner_files["bo"]))
    line = bo["exercises"]["nb00.check_final_text"]
    line["first_try_at"] = (NOW - timedelta(minutes=17)).isoformat()  # bo has been at it for 17 minutes
    ana = json.loads(json.dumps(learner_files["ana"]))
    ana["exercises"]["nb00.check_kinds"]["first_try_at"] = (NOW - timedelta(minutes=4)).isoformat()
    store = _store(tmp_path, {"bo": bo, "ana": ana})
    view = roomdata.view(CATALOG, ["ana", "bo"], store.learners(), plan="half-day", block="half-day/1", now=NOW)
    # One stuck learner in each row: the longer stuck first, though course order puts kinds first.
    assert [(r["exercise"], r["stuck_longest"]) for r in view["rows"]] == [
        ("nb00.check_final_text", 17), ("nb00.check_kinds", 4)]  # fmt: skip
    assert view["rows"][0]["mistakes"][0]["learners"] == [
        {"name": "bo", "minutes": 17, "tries": 1, "edition": "en", "message": line["last"]["message"]["en"]}]  # fmt: skip


def test_the_plan_filters_the_exercises_and_every_exercise_is_the_course(tmp_path, learner_files):
    store = _store(tmp_path, learner_files)
    every = roomdata.view(CATALOG, list(learner_files), store.learners(), plan="all", now=NOW)
    assert sorted(r["exercise"] for r in every["rows"]) == sorted(progress.course_exercises())
    plan = roomdata.view(CATALOG, list(learner_files), store.learners(), plan="90-minutes", now=NOW)
    assert {r["exercise"] for r in plan["rows"]} == {"nb00.check_kinds", "nb10.check_diagnoses"}
    empty = roomdata.view(CATALOG, list(learner_files), store.learners(), plan="90-minutes", block="90-minutes/3", now=NOW)
    assert empty["rows"] == [] and set(empty["open"]) == {"02", "03"}  # no exercise: who has its notebooks open


def test_pace_against_the_plans_clock(tmp_path, learner_files):
    store = _store(tmp_path, learner_files)
    names = list(learner_files)
    assert roomdata.view(CATALOG, names, store.learners(), plan="half-day", now=NOW)["pace"] is None  # no clock
    started = NOW - timedelta(minutes=30)
    inside = roomdata.view(CATALOG, names, store.learners(), plan="half-day", clock=started.isoformat(), now=NOW)["pace"]
    assert (inside["elapsed"], inside["block"], inside["due"]) == (30, "half-day/1", [])
    assert inside["on_pace"] == sorted(names)  # nothing due yet
    later = roomdata.view(CATALOG, names, store.learners(), plan="half-day",
                          clock=(NOW - timedelta(minutes=61)).isoformat(), now=NOW)["pace"]  # fmt: skip
    assert later["block"] == "half-day/2" and later["due"] == ["nb00.check_kinds", "nb00.check_final_text"]
    assert later["on_pace"] == [] and later["median"] == 0  # ana passed one of the two
    assert later["behind"] == sorted(names)
    brk = roomdata.view(CATALOG, names, store.learners(), plan="half-day",
                        clock=(NOW - timedelta(minutes=115)).isoformat(), now=NOW)["pace"]  # fmt: skip
    assert brk["block"] == "half-day/3"  # the break is a block of its own
    over = roomdata.view(CATALOG, names, store.learners(), plan="90-minutes",
                         clock=(NOW - timedelta(minutes=95)).isoformat(), now=NOW)["pace"]  # fmt: skip
    assert over["over"] is True and over["block"] is None


def test_never_started_learners_can_be_left_out_or_pruned_and_come_back(tmp_path, learner_files):
    store = _store(tmp_path, learner_files)
    users = [*learner_files, "fay", "gus-mistyped"]
    view = roomdata.view(CATALOG, users, store.learners(), plan="half-day", block="half-day/1", now=NOW)
    assert view["never_started"] == ["fay", "gus-mistyped"] and len(view["learners"]) == 7
    left_out = roomdata.view(CATALOG, users, store.learners(), plan="half-day", block="half-day/1",
                             leave_out_never_started=True, now=NOW)  # fmt: skip
    assert len(left_out["learners"]) == 5 and "fay" not in left_out["rows"][0]["not_started"]
    assert store.prune(view["never_started"]) == ["fay", "gus-mistyped"]
    pruned = roomdata.view(CATALOG, users, store.learners(), pruned=store.pruned(), now=NOW)
    assert "fay" not in pruned["learners"] and pruned["pruned"] == ["fay", "gus-mistyped"]
    store.put("fay", roomdata.clean({"version": 1, "exercises": {}, "open": []}))
    assert store.pruned() == {"fay", "gus-mistyped"}  # her server's heartbeat: still nothing started
    store.put("fay", roomdata.clean({"version": 1, "exercises": {}, "open": [{"notebook": "00", "edition": "en"}]}))
    assert store.pruned() == {"gus-mistyped"}  # fay started after all: she is back


def test_a_learners_drill_down(tmp_path, learner_files):
    store = _store(tmp_path, learner_files, opened={"bo": ["00"]})
    first_try = datetime.fromisoformat(learner_files["bo"]["exercises"]["nb00.check_final_text"]["first_try_at"])
    bo = roomdata.learner(CATALOG, "bo", store.learners(), lang="zh-CN", plan="half-day", block="half-day/1",
                          base_url="/", now=first_try + timedelta(minutes=9))  # fmt: skip
    assert bo["server"] == "/user/bo/lab" and bo["open"] == ["00"]
    states = {e["exercise"]: e for e in bo["exercises"]}
    assert states["nb00.check_final_text"]["state"] == "stuck" and states["nb00.check_final_text"]["minutes"] == 9
    assert states["nb00.check_final_text"]["message"].startswith("例子 '")
    assert states["nb00.check_kinds"]["state"] == "working"  # the notebook is open
    ana = roomdata.learner(CATALOG, "ana", store.learners(), base_url="/hub-prefix", now=NOW)
    assert ana["server"] == "/hub-prefix/user/ana/lab"
    assert {e["exercise"] for e in ana["exercises"] if e["state"] == "passed"} == {"nb00.check_final_text"}


def test_the_csv_export_has_a_row_per_learner_and_exercise_shown(tmp_path, learner_files):
    store = _store(tmp_path, learner_files)
    rows = roomdata.export_rows(CATALOG, sorted(learner_files), store.learners(), lang="zh-CN", plan="half-day",
                                block="half-day/1", now=NOW)  # fmt: skip
    assert len(rows) == 2 * len(learner_files) and set(rows[0]) == set(roomdata.EXPORT_COLUMNS)
    chen = next(r for r in rows if r["learner"] == "chen" and r["exercise"] == "nb00.check_final_text")
    assert chen["state"] == "stuck" and chen["message"].startswith("例子 '") and chen["title"].startswith("练习 2")
    ana = next(r for r in rows if r["learner"] == "ana" and r["exercise"] == "nb00.check_final_text")
    assert ana["state"] == "passed" and ana["passed_at"] and ana["message"] == ""


def test_the_committed_catalog_is_the_one_the_sources_make():
    """`python -m workshop.catalog` writes it: a renamed exercise, a changed plan in either guide, a
    title changed in either edition makes this fail until the catalog is made again."""
    assert catalog_module.render(catalog_module.build()) == catalog_module.CATALOG.read_text(encoding="utf-8"), \
        "workshop/room_catalog.json is stale: run `python -m workshop.catalog`"  # fmt: skip


def test_the_catalog_has_every_exercise_titled_in_both_editions_and_the_guides_plans():
    assert [e["id"] for e in CATALOG["exercises"]] == progress.course_exercises()
    for exercise in CATALOG["exercises"]:
        assert exercise["title"]["en"].startswith(("Exercise ", "Drill ")), exercise
        assert exercise["title"]["zh-CN"].startswith("练习 "), exercise
    titles = {e["id"]: e["title"] for e in CATALOG["exercises"]}
    assert titles["nb10.check_diagnoses"] == {"en": "Drill 7 · Diagnose the trace", "zh-CN": "练习 7 · 诊断轨迹"}
    plans = {p["id"]: p for p in CATALOG["plans"]}
    assert list(plans) == ["90-minutes", "half-day"]
    assert [b["start"] for b in plans["half-day"]["blocks"]] == ["0:00", "1:00", "1:50", "2:05", "3:00", "3:40", "3:55"]
    # Each block of the half day opens at most two notebooks: a learner keeps at most three kernels.
    assert max(len(b["notebooks"]) for b in plans["half-day"]["blocks"]) == 2


def test_the_catalog_says_which_exercise_lacks_a_title(tmp_path, monkeypatch):
    copy = tmp_path / "notebooks"
    (copy / "zh-CN").mkdir(parents=True)
    for path in (REPO / "notebooks").glob("[0-9]*.ipynb"):
        (copy / path.name).write_bytes(path.read_bytes())
    for path in (REPO / "notebooks" / "zh-CN").glob("[0-9]*.ipynb"):
        (copy / "zh-CN" / path.name).write_bytes(path.read_bytes())
    broken = json.loads((copy / "zh-CN" / "03_calling_mcp_server.ipynb").read_text(encoding="utf-8"))
    for cell in broken["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = "".join(cell["source"]).replace("### 练习 2", "练习 2")
    (copy / "zh-CN" / "03_calling_mcp_server.ipynb").write_text(json.dumps(broken), encoding="utf-8")
    monkeypatch.setattr(catalog_module, "FOLDERS", {"en": copy, "zh-CN": copy / "zh-CN"})
    monkeypatch.setattr(catalog_module, "REPO", tmp_path)
    with pytest.raises(catalog_module.CatalogError, match=r"nb03\.check_classify: no '### …' heading .*notebooks/zh-CN/03_"):
        catalog_module.build()


def test_the_room_lists_every_learner_page_by_page(monkeypatch):
    """The hub hands out at most 200 users a page: a room of 450 is read in three, admins left out."""
    import asyncio

    from tornado import web

    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "service-token")
    monkeypatch.setenv("JUPYTERHUB_API_URL", "http://127.0.0.1:1/hub/api")  # room.py reads them at import
    monkeypatch.syspath_prepend(str(REPO / "workshop"))
    room = importlib.import_module("room")
    users = [{"name": f"learner{n:03d}", "admin": False} for n in range(450)] + [{"name": "instructor", "admin": True}]
    asked = []

    class Users(web.RequestHandler):
        def get(self):
            offset, limit = int(self.get_argument("offset", "0")), 200
            asked.append((offset, self.request.headers.get("Accept"), self.request.headers.get("Authorization")))
            following = {"offset": offset + limit, "limit": limit} if offset + limit < len(users) else None
            self.write({"items": users[offset:offset + limit], "_pagination": {"offset": offset, "next": following}})

    async def scenario():
        server = web.Application([(r"/hub/api/users", Users)]).listen(0, "127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        try:
            listed = room.Room(None, CATALOG, f"http://127.0.0.1:{port}/hub/api", "service-token")
            return await listed.learners()
        finally:
            server.stop()

    names = asyncio.run(scenario())
    assert names == [f"learner{n:03d}" for n in range(450)]
    assert [a[0] for a in asked] == [0, 200, 400]
    assert {a[1:] for a in asked} == {("application/jupyterhub-pagination+json", "token service-token")}
