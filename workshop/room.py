"""The room view: a JupyterHub service the instructor projects and acts on.

It shows, live, where the room stands on the exercises of the session's plan (INSTRUCTOR.md's
blocks, chosen in the view): who passed, who is stuck on which mistake and for how long, who is
working on it, who has not started; rows sorted by where the room is stuck; the mistakes grouped
across both editions, titled in the room's language, each learner's own words kept; pace against
the plan's clock; a projector mode in large type with the names hidden; a drill-down per learner
with a link to their server; CSV and JSON export; learners who never started left out or pruned.
`workshop/roomdata.py` makes the view; this file serves it.

How the progress gets here: each learner's own Jupyter server sends a summary of their progress
file (`course_lib.progress.Relay`, a server extension the hub config turns on) to
`/services/room/api/progress`, with the server's hub token; this service asks the hub whose token
it is (`HubAuth.user_for_token`), so a learner can only speak for themselves, and keeps the last
summary per learner in its own SQLite file (`WORKSHOP_ROOM_DB`, on the hub's disk). No shared
volume, no learner's home read: the same on one machine, TLJH and Kubernetes.

Who sees it: admins only (the instructor), through the hub's OAuth: their role carries
`access:services`, a learner's does not, and every handler checks the admin flag too. The page
speaks the browser's language (`Accept-Language`: Chinese first → 简体中文), or `?lang=`.

It runs in the hub's Python: the standard library, tornado and jupyterhub, with roomdata.py and
room_catalog.json beside this file (a Kubernetes hub mounts the three; see workshop/README.md).
Settings (environment, given by workshop/jupyterhub_config.py):

    WORKSHOP_ROOM_DB       the room's SQLite file
    WORKSHOP_HUB_API_URL   the hub's API as this process reaches it (default JUPYTERHUB_API_URL;
                           on Kubernetes http://localhost:8081/hub/api, as the chart's own culler)
    WORKSHOP_ROOM_BIND_IP  the address to listen on (default: the service URL's host: 127.0.0.1
                           here and on TLJH, the hub pod's IP on Kubernetes)
    WORKSHOP_EDITION       the room's language when the browser says neither
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # roomdata.py beside this file (here, on TLJH, and where Kubernetes mounts them)

import roomdata  # noqa: E402
from jupyterhub.services.auth import HubAuth, HubOAuthCallbackHandler, HubOAuthenticated  # noqa: E402
from jupyterhub.utils import url_path_join  # noqa: E402
from tornado import httpclient, ioloop, web  # noqa: E402

REFRESH_SECONDS = 3
CATALOG = Path(os.environ.get("WORKSHOP_ROOM_CATALOG") or HERE / "room_catalog.json")
USERS_CACHE_SECONDS = 5

WORDS = {
    "en": {
        "title": "The room", "other": "中文", "other_lang": "zh-CN", "plan": "Plan", "block": "Block",
        "all_exercises": "every exercise of the course", "whole_plan": "the whole plan",
        "projector": "Projector", "names": "Show names", "hide_never": "Leave out who never started",
        "prune": "Prune who never started", "unprune": "Bring pruned names back",
        "export_csv": "CSV", "export_json": "JSON", "export": "Export",
        "exercise": "exercise", "passed": "passed", "stuck": "stuck", "working": "working on it",
        "not_started": "not started", "mistakes": "stuck on (last try failed, never passed)",
        "minutes": "{n} min", "stuck_for": "stuck for {n} min", "learners": "learners",
        "never_started": "never started a notebook: {n}", "pruned": "pruned: {n}",
        "updated": "updated", "nobody": "No learner has logged in yet.",
        "no_exercise": "This block has no exercise; who has its notebooks open:",
        "open_now": "notebook {nb} open: {n}", "clock_start": "Start the plan's clock now",
        "clock_stop": "Stop the clock", "clock_none": "Start the plan's clock when the session starts: the view then says where the room should be.",
        "pace": "{elapsed} into the plan ({block}). Due so far: {due} exercises; {on} of {total} learners have passed them all (median {median}).",
        "pace_over": "The plan's time is over ({elapsed}). {on} of {total} learners passed every exercise of the plan.",
        "pace_break": "between blocks", "tries": "tries", "server": "Open their server",
        "opened": "notebooks open now", "close": "Close", "seen": "first seen", "state": "state",
        "unreadable": "Progress that could not be read",
        "states": {"passed": "passed", "stuck": "stuck", "working": "working on it", "not_started": "not started"},
    },
    "zh-CN": {
        "title": "课堂进度", "other": "English", "other_lang": "en", "plan": "方案", "block": "模块",
        "all_exercises": "课程的全部练习", "whole_plan": "整个方案",
        "projector": "投影模式", "names": "显示姓名", "hide_never": "不计从未开始的学员",
        "prune": "清理从未开始的名字", "unprune": "恢复清理掉的名字",
        "export_csv": "CSV", "export_json": "JSON", "export": "导出",
        "exercise": "练习", "passed": "已通过", "stuck": "卡住", "working": "正在做",
        "not_started": "还没开始", "mistakes": "卡在（最后一次失败，从未通过）",
        "minutes": "{n} 分钟", "stuck_for": "已卡 {n} 分钟", "learners": "学员",
        "never_started": "从未打开过笔记本：{n}", "pruned": "已清理：{n}",
        "updated": "更新于", "nobody": "还没有学员登录。",
        "no_exercise": "这个模块没有练习；打开了它的笔记本的学员：",
        "open_now": "打开了笔记本 {nb}：{n}", "clock_start": "现在开始方案计时",
        "clock_stop": "停止计时", "clock_none": "上课开始时启动方案计时：课堂视图就会显示全班应该进行到哪里。",
        "pace": "方案进行了 {elapsed}（{block}）。到现在应完成 {due} 个练习；{total} 位学员中有 {on} 位全部通过（中位数 {median}）。",
        "pace_over": "方案时间已到（{elapsed}）。{total} 位学员中有 {on} 位通过了方案的全部练习。",
        "pace_break": "两个模块之间", "tries": "次数", "server": "打开其服务器",
        "opened": "当前打开的笔记本", "close": "关闭", "seen": "首次出现", "state": "状态",
        "unreadable": "无法读取的进度",
        "states": {"passed": "已通过", "stuck": "卡住", "working": "正在做", "not_started": "还没开始"},
    },
}  # fmt: skip


def language(handler: web.RequestHandler) -> str:
    """`?lang=` if given, else the first language of Accept-Language that the page speaks."""
    chosen = handler.get_argument("lang", "")
    if chosen in WORDS:
        return chosen
    ranked = []
    for part in handler.request.headers.get("Accept-Language", "").split(","):
        tag, _, quality = part.strip().partition(";q=")
        try:
            ranked.append((-float(quality or 1), tag.strip().lower()))
        except ValueError:
            continue
    for _, tag in sorted(ranked):
        if tag.startswith("zh"):
            return "zh-CN"
        if tag.startswith("en"):
            return "en"
    return os.environ.get("WORKSHOP_EDITION", "en") if os.environ.get("WORKSHOP_EDITION") in WORDS else "en"


class Room:
    """What the handlers share: the store, the catalog, the hub's learners (cached a few seconds)."""

    def __init__(self, store: roomdata.Store, catalog: dict, api_url: str, token: str) -> None:
        self.store, self.catalog, self.api_url, self.token = store, catalog, api_url, token
        self._users: tuple[float, list[str]] = (0.0, [])

    async def learners(self) -> list[str]:
        """The hub's users who are not admins (the service's role may list and read users)."""
        if time.monotonic() - self._users[0] < USERS_CACHE_SECONDS:
            return self._users[1]
        names, offset = [], 0
        while True:  # page by page: the hub gives at most api_page_max_limit (200) users a page
            response = await httpclient.AsyncHTTPClient().fetch(
                url_path_join(self.api_url, f"users?offset={offset}"), request_timeout=60,
                headers={"Authorization": f"token {self.token}", "Accept": "application/jupyterhub-pagination+json"})  # fmt: skip
            page = json.loads(response.body)
            names += [user["name"] for user in page["items"] if not user.get("admin")]
            following = page["_pagination"].get("next")
            if not following:
                break
            offset = following["offset"]
        names.sort()
        self._users = (time.monotonic(), names)
        return names


class AdminOnly(HubOAuthenticated, web.RequestHandler):
    room: Room

    def initialize(self, room: Room) -> None:
        self.room = room

    def prepare(self) -> None:
        user = self.get_current_user()
        if user is None:
            return  # @web.authenticated sends them to the hub's login
        if not user.get("admin"):
            raise web.HTTPError(403, "the room view is for the workshop's instructors (admins)")

    def choice(self) -> dict[str, str]:
        return {"lang": language(self), "plan": self.get_argument("plan", "all")[:40],
                "block": self.get_argument("block", "")[:40]}  # fmt: skip

    async def hub_learners(self) -> list[str]:
        try:
            return await self.room.learners()
        except (httpclient.HTTPError, OSError) as error:  # the hub busy or restarting: say so, try again
            raise web.HTTPError(503, f"the hub did not answer: {error}") from None

    def write_json(self, value: object) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.write(json.dumps(value, ensure_ascii=False))


class Page(AdminOnly):
    @web.authenticated
    def get(self) -> None:
        lang = language(self)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Language", lang)
        plans = [{"id": p["id"], "title": p["title"][lang],
                  "blocks": [{"id": b["id"], "label": f"{b['start']}–{b['end']} · {b['label'][lang]}"} for b in p["blocks"]]}
                 for p in self.room.catalog["plans"]]  # fmt: skip
        self.write(PAGE.replace("__LANG__", lang).replace("__WORDS__", json.dumps(WORDS[lang], ensure_ascii=False))
                   .replace("__PLANS__", json.dumps(plans, ensure_ascii=False)).replace("__REFRESH__", str(REFRESH_SECONDS))
                   .replace("__BASE__", json.dumps(os.environ.get("JUPYTERHUB_BASE_URL", "/"))))  # fmt: skip


class RoomApi(AdminOnly):
    @web.authenticated
    async def get(self) -> None:
        choice = self.choice()
        users = await self.hub_learners()
        self.write_json(roomdata.view(self.room.catalog, users, self.room.store.learners(), **choice,
                                      clock=self.room.store.setting("clock"), pruned=self.room.store.pruned(),
                                      leave_out_never_started=self.get_argument("never", "") == "hide"))  # fmt: skip


class LearnerApi(AdminOnly):
    @web.authenticated
    async def get(self) -> None:
        name = self.get_argument("name", "")
        if name not in set(await self.hub_learners()) | set(self.room.store.learners()):
            raise web.HTTPError(404, "no such learner")
        self.write_json(roomdata.learner(self.room.catalog, name, self.room.store.learners(), **self.choice(),
                                         base_url=os.environ.get("JUPYTERHUB_BASE_URL", "/")))  # fmt: skip


class ExportApi(AdminOnly):
    @web.authenticated
    async def get(self, kind: str) -> None:
        choice = self.choice()
        users = await self.hub_learners()
        stored = self.room.store.learners()
        names = sorted((set(users) | set(stored)) - self.room.store.pruned())
        stamp = time.strftime("%Y%m%d-%H%M")
        if kind == "json":
            body = {"exported_at": roomdata.utcnow().isoformat(timespec="seconds"), **choice,
                    "room": roomdata.view(self.room.catalog, users, stored, **choice,
                                          clock=self.room.store.setting("clock"), pruned=self.room.store.pruned()),
                    "learners": {name: roomdata.learner(self.room.catalog, name, stored, **choice,
                                                        base_url=os.environ.get("JUPYTERHUB_BASE_URL", "/"))
                                 for name in names}}  # fmt: skip
            self.set_header("Content-Disposition", f'attachment; filename="room-{stamp}.json"')
            self.write_json(body)
            return
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=roomdata.EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows(roomdata.export_rows(self.room.catalog, names, stored, **choice))
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="room-{stamp}.csv"')
        self.write("\ufeff" + out.getvalue())  # the BOM: spreadsheet programs then read the Chinese right


class ClockApi(AdminOnly):
    @web.authenticated
    def post(self) -> None:
        body = _json_body(self)
        start = body.get("start")
        if start == "now":
            start = roomdata.utcnow().isoformat(timespec="seconds")
        elif start is not None:  # when the session really started: an ISO time with its UTC offset
            try:
                start = roomdata.clean_time(start)
            except roomdata.BadSummary:
                raise web.HTTPError(400, 'start: "now", an ISO 8601 time with its UTC offset, or null') from None
        self.room.store.set_setting("clock", start)
        self.write_json({"clock": start})


class PruneApi(AdminOnly):
    @web.authenticated
    async def post(self) -> None:
        body = _json_body(self)
        if body.get("undo"):
            self.room.store.unprune()
            self.write_json({"pruned": []})
            return
        users = await self.hub_learners()
        stored = self.room.store.learners()
        never = roomdata.view(self.room.catalog, users, stored, pruned=self.room.store.pruned())["never_started"]
        self.write_json({"pruned": self.room.store.prune(never)})


def _json_body(handler: web.RequestHandler) -> dict:
    try:
        body = json.loads(handler.request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise web.HTTPError(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPError(400, "the body is not a JSON object")
    return body


class ProgressApi(web.RequestHandler):
    """POST by a learner's own server: its summary, with its hub token (`Authorization: token …`)."""

    def initialize(self, room: Room, auth: HubAuth) -> None:
        self.room, self.auth = room, auth

    def check_xsrf_cookie(self) -> None:  # token-authenticated, never a cookie: nothing to forge
        return

    def write_error(self, status_code: int, **kwargs: object) -> None:
        """A JSON body saying what is wrong, for the relay's log (never a traceback)."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps({"error": getattr(error, "log_message", None) or self._reason}))

    async def post(self) -> None:
        token = self.auth.get_token(self, in_cookie=False)
        if not token:
            raise web.HTTPError(401, "a learner's server token is needed (Authorization: token …)")
        try:
            model = await self.auth.user_for_token(token, sync=False)
        except (httpclient.HTTPError, OSError, web.HTTPError) as error:
            raise web.HTTPError(503, f"the hub did not answer: {error}") from None
        if not model or model.get("kind", "user") != "user" or not model.get("name"):
            raise web.HTTPError(403, "the hub does not know this token as a learner's")
        if len(self.request.body) > roomdata.LIMITS["body"]:
            raise web.HTTPError(413, f"a summary is at most {roomdata.LIMITS['body']} bytes")
        try:
            summary = roomdata.clean(json.loads(self.request.body))
        except (ValueError, UnicodeDecodeError) as error:
            raise web.HTTPError(400, str(error)[:300]) from None
        if model.get("admin"):
            self.write({"kept": False, "why": "admins are not learners"})
            return
        self.room.store.put(model["name"], summary)
        self.write({"kept": True, "learner": model["name"]})


PAGE = """<!doctype html>
<html lang="__LANG__"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>…</title>
<style>
 body { font-family: system-ui, "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif; margin: 0; color: #1d1d1d; font-size: 15px; }
 header { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; padding: .5rem 1rem; background: #f3f3f3; }
 header h1 { font-size: 1.3em; margin: 0 1rem 0 0; } header label { white-space: nowrap; }
 select { font-size: .9em; max-width: 22rem; } button, a.button { font-size: .9em; }
 #pace, #status, #open { margin: .3rem 1rem; } #pace { font-weight: 600; }
 table { border-collapse: collapse; width: calc(100% - 2rem); margin: 0 1rem; }
 th, td { border-bottom: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }
 th { background: #fafafa; font-weight: 600; } td.count { white-space: nowrap; text-align: right; }
 td.count.stuck { color: #a40000; font-weight: 700; } .nb { color: #666; margin-right: .4em; }
 .mistake { margin: .15rem 0 .4rem; } .mistake .n { font-weight: 700; margin-right: .4em; color: #a40000; }
 .mistake .since { color: #a40000; margin-right: .5em; white-space: nowrap; font-size: .8em; }
 .detail { color: #444; font-size: .88em; margin: .1rem 0 0 1.2em; } .detail .who { font-weight: 600; }
 .names { color: #555; font-size: .85em; } button.name { border: 0; background: none; color: #0645ad; padding: 0 .15em;
 cursor: pointer; font: inherit; text-decoration: underline; }
 body.projector { font-size: 24px; } body.projector header { font-size: 15px; }
 body.projector #pace, body.projector #status { font-size: .75em; margin: .15rem 1rem; }
 body.projector th { font-size: .7em; } body.projector td.exercise { width: 24%; }
 body.projector .names, body.projector .who-list, body.projector #learners { display: none; }
 body.projector.show-names .names, body.projector.show-names .who-list { display: revert; }
 body:not(.projector) .distinct { display: none; }
 .mistake .words, .distinct .message { display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; }
 body.projector .mistake .words { -webkit-line-clamp: 2; }
 body.projector .distinct { font-size: .72em; color: #444; margin: .1rem 0 0 1.2em; }
 body.projector .distinct .message { -webkit-line-clamp: 2; } .distinct .count { font-weight: 700; margin-right: .3em; }
 dialog { max-width: 56rem; width: 90vw; } dialog table { width: 100%; margin: 0; }
</style></head>
<body><header>
 <h1 id="title"></h1>
 <label><span id="l-plan"></span> <select id="plan"></select></label>
 <label><span id="l-block"></span> <select id="block"></select></label>
 <button id="clock"></button>
 <label><input type="checkbox" id="projector"> <span id="l-projector"></span></label>
 <label id="names-box"><input type="checkbox" id="names"> <span id="l-names"></span></label>
 <label><input type="checkbox" id="hide-never"> <span id="l-hide-never"></span></label>
 <button id="prune"></button>
 <span><span id="l-export"></span> <a id="csv" class="button"></a> · <a id="json" class="button"></a></span>
 <a id="toggle"></a>
</header>
<p id="pace"></p><p id="status"></p>
<table id="room"><thead><tr><th id="h-exercise"></th><th id="h-passed"></th><th id="h-stuck"></th>
<th id="h-working"></th><th id="h-not-started"></th><th id="h-mistakes"></th></tr></thead><tbody></tbody></table>
<div id="open"></div><div id="unreadable"></div>
<dialog id="learner"><h2 id="d-name"></h2><p><a id="d-server" target="_blank" rel="noopener"></a> · <span id="d-open"></span></p>
<table><thead><tr><th id="d-h-exercise"></th><th id="d-h-state"></th><th id="d-h-tries"></th><th></th></tr></thead><tbody></tbody></table>
<p><button id="d-close"></button></p></dialog>
<script>
const W = __WORDS__, PLANS = __PLANS__, REFRESH = __REFRESH__, BASE = __BASE__;
const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const fill = (text, values) => text.replace(/\\{(\\w+)\\}/g, (_, k) => values[k]);
document.title = W.title; $("title").textContent = W.title;
for (const [id, key] of [["l-plan", "plan"], ["l-block", "block"], ["l-projector", "projector"], ["l-names", "names"],
    ["l-hide-never", "hide_never"], ["l-export", "export"], ["csv", "export_csv"], ["json", "export_json"],
    ["h-exercise", "exercise"], ["h-passed", "passed"], ["h-stuck", "stuck"], ["h-working", "working"],
    ["h-not-started", "not_started"], ["h-mistakes", "mistakes"], ["d-h-exercise", "exercise"], ["d-h-state", "state"],
    ["d-h-tries", "tries"], ["d-close", "close"], ["d-server", "server"]]) $(id).textContent = W[key];
const plan = $("plan"), block = $("block");
plan.append(new Option(W.all_exercises, "all"));
for (const p of PLANS) plan.append(new Option(p.title, p.id));
function blocks() {
  block.replaceChildren(new Option(W.whole_plan, ""));
  const p = PLANS.find((p) => p.id === plan.value);
  block.disabled = !p;
  if (p) for (const b of p.blocks) block.append(new Option(b.label, b.id));
}
plan.value = query.get("plan") || "all"; if (!plan.value) plan.value = "all"; blocks(); block.value = query.get("block") || "";
$("projector").checked = query.get("projector") === "1"; $("names").checked = query.get("names") === "1";
$("hide-never").checked = query.get("never") === "hide";
function choice() {
  const q = new URLSearchParams({lang: document.documentElement.lang, plan: plan.value, block: block.value});
  if ($("hide-never").checked) q.set("never", "hide");
  return q;
}
function keep() {  // the choices in the address: a reload, or the link on another screen, shows the same
  const q = choice(); if ($("projector").checked) q.set("projector", "1"); if ($("names").checked) q.set("names", "1");
  history.replaceState(null, "", "?" + q);
  document.body.classList.toggle("projector", $("projector").checked);
  document.body.classList.toggle("show-names", $("names").checked);
  $("names-box").hidden = !$("projector").checked;
  $("csv").href = "api/export.csv?" + choice(); $("json").href = "api/export.json?" + choice();
  const other = new URLSearchParams(location.search); other.set("lang", W.other_lang);
  $("toggle").textContent = W.other; $("toggle").href = "?" + other;
}
const xsrf = decodeURIComponent((document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "");
const api = (path, body) => fetch(path, body === undefined ? {cache: "no-store", headers: {"X-XSRFToken": xsrf}}
  : {method: "POST", cache: "no-store", headers: {"X-XSRFToken": xsrf, "Content-Type": "application/json"}, body: JSON.stringify(body)});
function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
function nameButton(name) { const b = el("button", "name", name); b.type = "button"; b.onclick = () => drill(name); return b; }
function names(list) { const span = el("div", "names"); list.forEach((n, i) => { if (i) span.append(", "); span.append(nameButton(n)); }); return span; }
let room = null;
function clock(minutes) { return Math.floor(minutes / 60) + ":" + String(minutes % 60).padStart(2, "0"); }
function draw() {
  const total = room.learners.length, p = room.pace;
  $("clock").textContent = p ? W.clock_stop : W.clock_start; $("clock").disabled = !room.plan;
  $("pace").textContent = !room.plan ? "" : !p ? W.clock_none : p.over
    ? fill(W.pace_over, {elapsed: clock(p.elapsed), on: p.on_pace.length, total})
    : fill(W.pace, {elapsed: clock(p.elapsed), block: p.block ? p.block_start + "–" + p.block_end : W.pace_break,
                    due: p.due.length, on: p.on_pace.length, total, median: p.median});
  const status = [total ? `${W.learners}: ${total} · ${W.updated} ${new Date().toLocaleTimeString()}` : W.nobody];
  if (room.never_started.length) status.push(fill(W.never_started, {n: room.never_started.length}));
  if (room.pruned.length) status.push(fill(W.pruned, {n: room.pruned.length}));
  $("status").textContent = status.join(" · ");
  $("prune").textContent = room.pruned.length && !room.never_started.length ? W.unprune : W.prune;
  const body = document.querySelector("#room tbody"); body.replaceChildren();
  for (const r of room.rows) {
    const row = body.insertRow(); row.dataset.exercise = r.exercise;
    const title = row.insertCell(); title.className = "exercise";
    title.append(el("span", "nb", r.notebook), el("span", "title", r.title));
    for (const [state, cls] of [["passed", "passed"], ["stuck", "stuck"], ["working", "working"], ["not_started", "not-started"]]) {
      const cell = row.insertCell(); cell.className = "count " + cls;
      cell.append(el("span", "n", `${r[state].length} / ${total}`));
      if (r[state].length && state !== "stuck") cell.append(names(r[state]));
    }
    const stuck = row.insertCell(); stuck.className = "mistakes";
    for (const g of r.mistakes) {
      const line = el("div", "mistake"); line.dataset.mistake = g.mistake;
      const head = el("div", "words"), longest = Math.max(...g.learners.map((s) => s.minutes || 0));
      head.append(el("span", "n", g.count + " ×"), el("span", "since", fill(W.stuck_for, {n: longest})),
                  el("span", "template", g.title));
      line.append(head);
      for (const d of g.details.slice(0, 2)) {  // on the projector: what went wrong, without who
        const distinct = el("div", "distinct"), words = el("span", "message");
        words.append(el("span", "count", d.count + " ×"), " " + d.message); distinct.append(words); line.append(distinct);
      }
      const who = el("div", "who-list");
      for (const s of g.learners) {
        const d = el("div", "detail"); d.dataset.learner = s.name;
        const name = el("span", "who"); name.append(nameButton(s.name), ` (${fill(W.minutes, {n: s.minutes})}): `);
        d.append(name, el("span", "message", s.message)); who.append(d);
      }
      line.append(who);
      stuck.append(line);
    }
  }
  const open = $("open"); open.replaceChildren();
  if (room.block && !room.rows.length) open.append(el("p", "", W.no_exercise));
  if (room.block && !room.rows.length) for (const [nb, who] of Object.entries(room.open)) {
    const p = el("p", "open-notebook", fill(W.open_now, {nb, n: who.length + " / " + total})); p.append(names(who)); open.append(p);
  }
  const bad = $("unreadable"); bad.replaceChildren();
  const broken = Object.entries(room.unreadable);
  if (broken.length) { bad.append(el("h2", "", W.unreadable)); for (const [n, why] of broken) bad.append(el("p", "", `${n}: ${why}`)); }
  document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
}
async function refresh() {
  const response = await api("api/room?" + choice());
  if (!response.ok) { $("status").textContent = response.status + " " + response.statusText; return; }
  room = await response.json(); draw();
}
async function drill(name) {
  const q = choice(); q.set("name", name);
  const response = await api("api/learner?" + q); if (!response.ok) return;
  const who = await response.json(), dialog = $("learner");
  $("d-name").textContent = who.name; $("d-server").href = who.server;
  $("d-open").textContent = `${W.opened}: ${who.open.join(", ") || "—"}`;
  const body = dialog.querySelector("tbody"); body.replaceChildren();
  for (const e of who.exercises) {
    const row = body.insertRow(); row.dataset.exercise = e.exercise; row.dataset.state = e.state;
    row.insertCell().append(el("span", "nb", e.notebook), el("span", "", e.title));
    row.insertCell().textContent = W.states[e.state] + (e.state === "stuck" ? " · " + fill(W.stuck_for, {n: e.minutes}) : "");
    row.insertCell().textContent = e.tries;
    row.insertCell().textContent = e.message || (e.passed_at ? new Date(e.passed_at).toLocaleTimeString() : "");
  }
  if (!dialog.open) dialog.showModal();
}
$("d-close").onclick = () => $("learner").close();
plan.onchange = () => { blocks(); keep(); refresh(); };
for (const id of ["block", "hide-never"]) $(id).onchange = () => { keep(); refresh(); };
for (const id of ["projector", "names"]) $(id).onchange = keep;
$("clock").onclick = async () => { await api("api/clock", {start: room && room.pace ? null : "now"}); refresh(); };
$("prune").onclick = async () => { await api("api/prune", room.pruned.length && !room.never_started.length ? {undo: true} : {}); refresh(); };
keep(); refresh(); setInterval(refresh, REFRESH * 1000);
</script></body></html>
"""


def app(store: roomdata.Store, catalog: dict, prefix: str) -> web.Application:
    """The service's routes under `prefix`. The hub's API is JUPYTERHUB_API_URL (main() puts
    WORKSHOP_HUB_API_URL there first, so the OAuth token exchange uses it too)."""
    api_url = os.environ["JUPYTERHUB_API_URL"]
    token = os.environ["JUPYTERHUB_API_TOKEN"]
    room = Room(store, catalog, api_url, token)
    auth = HubAuth(api_url=api_url, api_token=token, cache_max_age=60)
    given = {"room": room}
    return web.Application([
        (prefix, Page, given), (url_path_join(prefix, "api/room"), RoomApi, given),
        (url_path_join(prefix, "api/learner"), LearnerApi, given),
        (url_path_join(prefix, r"api/export\.(csv|json)"), ExportApi, given),
        (url_path_join(prefix, "api/clock"), ClockApi, given), (url_path_join(prefix, "api/prune"), PruneApi, given),
        (url_path_join(prefix, "api/progress"), ProgressApi, {"room": room, "auth": auth}),
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
    ], cookie_secret=os.urandom(32))  # fmt: skip


def main() -> None:
    if os.environ.get("WORKSHOP_HUB_API_URL"):  # every HubAuth of this process reads its default from here
        os.environ["JUPYTERHUB_API_URL"] = os.environ["WORKSHOP_HUB_API_URL"]
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/room/")
    store = roomdata.Store(os.environ.get("WORKSHOP_ROOM_DB") or HERE.parent / "build" / "room.sqlite3")
    catalog = json.loads(CATALOG.read_text(encoding="utf-8"))
    where = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    app(store, catalog, prefix).listen(where.port, os.environ.get("WORKSHOP_ROOM_BIND_IP") or where.hostname,
                                       max_body_size=2 * roomdata.LIMITS["body"])  # a summary is far smaller
    try:
        ioloop.IOLoop.current().start()
    except KeyboardInterrupt:  # the hub stops its services with SIGINT
        pass
    finally:
        store.close()


if __name__ == "__main__":
    main()
