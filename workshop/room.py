"""The room view: a JupyterHub service that shows the instructor, live, where the room stands.

One row per exercise of the course: how many learners passed it, how many are stuck on which
mistake (their last try failed and they never passed), who has not started. It reads each
learner's own progress file (`course_lib.progress`) where it lies — their home on a local or TLJH
hub, a shared volume on Kubernetes — and asks the hub only who the learners are. Nothing is sent
anywhere; the page polls this service every few seconds.

Registered by workshop/jupyterhub_config.py as the hub-managed service "room" at
/services/room/. Access goes through the hub's OAuth: only admins (the instructor) get in — their
role carries `access:services`, a learner's does not — and the handler checks the admin flag too.
The page speaks the browser's language (`Accept-Language`: Chinese first → 简体中文), or the one
chosen with `?lang=en` / `?lang=zh-CN`.

It runs in the hub's Python: the standard library, tornado and jupyterhub, and `course_lib.progress`
from the course checkout this file sits in (that module needs nothing else).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: course_lib.progress

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated  # noqa: E402
from jupyterhub.utils import url_path_join  # noqa: E402
from tornado import httpclient, ioloop, web  # noqa: E402

from course_lib import progress  # noqa: E402

REFRESH_SECONDS = 5

WORDS = {
    "en": {"title": "The room", "exercise": "exercise", "passed": "passed",
           "stuck": "stuck on (last try failed, never passed)", "not_started": "not started",
           "learners": "learners", "updated": "updated", "unreadable": "Progress files that cannot be read",
           "nobody": "No learner has logged in yet.", "other": "中文", "other_lang": "zh-CN",
           "note": "From each learner's own progress file; refreshed every {n} s."},
    "zh-CN": {"title": "课堂进度", "exercise": "练习", "passed": "已通过",
              "stuck": "卡在（最后一次失败，从未通过）", "not_started": "还没开始",
              "learners": "学员", "updated": "更新于", "unreadable": "无法读取的进度文件",
              "nobody": "还没有学员登录。", "other": "English", "other_lang": "en",
              "note": "来自每位学员自己的进度文件；每 {n} 秒刷新一次。"},
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


class AdminOnly(HubOAuthenticated, web.RequestHandler):
    def prepare(self) -> None:
        user = self.get_current_user()
        if user is None:
            return  # @web.authenticated sends them to the hub's login
        if not user.get("admin"):
            raise web.HTTPError(403, "the room view is for the workshop's instructors (admins)")


async def learners() -> list[str]:
    """The hub's users who are not admins, by name (the service's token may list users)."""
    api = os.environ["JUPYTERHUB_API_URL"]
    response = await httpclient.AsyncHTTPClient().fetch(
        url_path_join(api, "users"), headers={"Authorization": f"token {os.environ['JUPYTERHUB_API_TOKEN']}"},
        request_timeout=60)
    return sorted(user["name"] for user in json.loads(response.body) if not user.get("admin"))


def summary(names: list[str]) -> dict:
    """The room as JSON: progress.room() over each learner's file."""
    template = os.environ["WORKSHOP_PROGRESS_FILES"]
    room = progress.room({name: Path(template.format(username=name)) for name in names})
    return {"learners": room.learners, "rows": [asdict(row) for row in room.rows], "unreadable": room.unreadable}


class Page(AdminOnly):
    @web.authenticated
    def get(self) -> None:
        lang = language(self)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Language", lang)
        self.write(PAGE.replace("__LANG__", lang).replace("__WORDS__", json.dumps(WORDS[lang], ensure_ascii=False))
                   .replace("__REFRESH__", str(REFRESH_SECONDS)))


class Api(AdminOnly):
    @web.authenticated
    async def get(self) -> None:
        self.set_header("Cache-Control", "no-store")
        try:
            names = await learners()
        except (httpclient.HTTPError, OSError) as error:  # the hub busy or restarting: say so, try again
            raise web.HTTPError(503, f"the hub did not answer: {error}") from None
        # Reading the files is disk work: off the event loop, so the page and the hub's pings stay quick.
        self.write(await ioloop.IOLoop.current().run_in_executor(None, summary, names))


PAGE = """<!doctype html>
<html lang="__LANG__"><head><meta charset="utf-8"><title>…</title>
<style>
 body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
 table { border-collapse: collapse; width: 100%; } th, td { border-bottom: 1px solid #ddd; padding: .4rem .6rem;
 text-align: left; vertical-align: top; } th { background: #f4f4f4; } td.count { white-space: nowrap; }
 .mistake { margin: .1rem 0; } .n { font-weight: 600; margin-right: .4rem; } .who { color: #666; font-size: .9em; }
 header { display: flex; justify-content: space-between; align-items: baseline; } .note { color: #666; }
</style></head>
<body><header><h1 id="title"></h1><a id="toggle"></a></header>
<p class="note" id="note"></p><p id="status"></p>
<table id="room"><thead><tr><th id="h-exercise"></th><th id="h-passed"></th><th id="h-stuck"></th>
<th id="h-not-started"></th></tr></thead><tbody></tbody></table>
<div id="unreadable"></div>
<script>
const W = __WORDS__, REFRESH = __REFRESH__;
document.title = W.title; document.getElementById("title").textContent = W.title;
document.getElementById("note").textContent = W.note.replace("{n}", REFRESH);
for (const [id, key] of [["h-exercise", "exercise"], ["h-passed", "passed"], ["h-stuck", "stuck"],
                         ["h-not-started", "not_started"]]) document.getElementById(id).textContent = W[key];
const toggle = document.getElementById("toggle");
toggle.textContent = W.other; toggle.href = "?lang=" + W.other_lang;
function cell(row, text, cls) { const td = row.insertCell(); td.textContent = text; if (cls) td.className = cls; return td; }
// The hub's OAuth accepts a cookie on a script's request only with the XSRF token it set beside it.
const xsrf = decodeURIComponent((document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "");
async function refresh() {
  const response = await fetch("api/room" + location.search, {cache: "no-store", headers: {"X-XSRFToken": xsrf}});
  if (!response.ok) { document.getElementById("status").textContent = response.status + " " + response.statusText; return; }
  const room = await response.json(), total = room.learners.length;
  document.getElementById("status").textContent = total
    ? `${W.learners}: ${total} · ${W.updated} ${new Date().toLocaleTimeString()}` : W.nobody;
  const body = document.querySelector("#room tbody"); body.replaceChildren();
  for (const r of room.rows) {
    const row = body.insertRow(); row.dataset.exercise = r.exercise;
    cell(row, r.exercise, "exercise");
    cell(row, `${r.passed.length} / ${total}`, "count passed").title = r.passed.join(", ");
    const stuck = cell(row, "", "stuck");
    for (const s of r.stuck) {
      const line = document.createElement("div"); line.className = "mistake"; line.dataset.mistake = s.mistake;
      const n = document.createElement("span"); n.className = "n"; n.textContent = s.learners.length + " ×";
      const words = document.createElement("span"); words.className = "template"; words.textContent = s.template;
      const who = document.createElement("div"); who.className = "who"; who.textContent = s.learners.join(", ");
      line.append(n, words, who); stuck.append(line);
    }
    const waiting = cell(row, `${r.not_started.length} / ${total}`, "count not-started");
    waiting.title = r.not_started.join(", ");
  }
  const bad = document.getElementById("unreadable"); bad.replaceChildren();
  const names = Object.keys(room.unreadable);
  if (names.length) {
    const h = document.createElement("h2"); h.textContent = W.unreadable; bad.append(h);
    for (const name of names) { const p = document.createElement("p"); p.textContent = `${name}: ${room.unreadable[name]}`; bad.append(p); }
  }
  document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
}
refresh(); setInterval(refresh, REFRESH * 1000);
</script></body></html>
"""


def main() -> None:
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/room/")
    app = web.Application([
        (prefix, Page), (url_path_join(prefix, "api/room"), Api),
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
    ], cookie_secret=os.urandom(32))  # fmt: skip
    where = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    app.listen(where.port, os.environ.get("WORKSHOP_ROOM_BIND_IP") or where.hostname)
    try:
        ioloop.IOLoop.current().start()
    except KeyboardInterrupt:  # the hub stops its services with SIGINT
        pass


if __name__ == "__main__":
    main()
