"""A real workshop hub: JupyterHub from PyPI, configurable-http-proxy from npm, workshop/jupyterhub_config.py.

The hub is the one `make hub` starts (`python -m workshop.hub`, which loads workshop/local_config.py:
the one config plus a local spawner, each learner a home of their own under a temp folder). The
course it hands out is a git repository made from this checkout's tracked files, pulled by
nbgitpuller into each learner's home. Three learners log in through the hub's form, get a server,
pull the course and run notebook 00 in their own kernel through the hub's proxy (REST for the
session, the kernel websocket for each cell); every output must equal the stored one after the
same sanitizer nbval uses. Then a fourth learner logs in with Chromium and lands in JupyterLab on
notebook 00 with no pop-up, and the instructor projects the room view in Chromium at 1280×720, in
both languages, and acts on it, while learners of both editions answer: their own servers send
their progress to the room (course_lib.progress's relay), through the hub.

Login throttling, the name rule, the server cap and the launcher's signals are
tests/test_workshop_safety.py's; the files of the other deployments, tests/test_workshop_files.py's
and tests/test_workshop_tljh.py's. What only a real VM or cluster can test is named in
workshop/README.md.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
import requests

from workshop.learner import Learner, LearnerError, checkout_repo

REPO = Path(__file__).resolve().parents[1]
PROXY = REPO / "tests" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
NOTEBOOK = "notebooks/00_map_and_first_run.ipynb"
TARGET = "tool-calling-course"
LEARNERS = ("ana", "bo", "chen")
STEP_MS = 120_000
SCREENSHOTS = REPO / "test-artifacts"


def _missing(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the hub test must run in CI)")
    pytest.skip(message)


def _free_ports(count: int = 4) -> int:
    """A base port with `count` free ports in a row (the hub, its API, the proxy's API, the room view)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        taken = []
        for port in range(base, base + count):
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    taken.append(port)
        if not taken:
            return base
    raise RuntimeError("no free ports")


@pytest.fixture(scope="module")
def course_repo(tmp_path_factory) -> str:
    """A git repository of this checkout's tracked files (as they are in the worktree), as a file:// URL."""
    if shutil.which("git") is None:
        _missing("git is not installed (nbgitpuller needs it)")
    return checkout_repo(tmp_path_factory.mktemp("course"))


class Hub:
    """`python -m workshop.hub` running, with what it printed."""

    def __init__(self, process: subprocess.Popen, url: str, state: Path, printed: list[str]) -> None:
        self.process, self.url, self.state, self.printed = process, url, state, printed
        settings = dict(line.split("=", 1) for line in (state / "passwords.env").read_text().splitlines())
        self.password = settings["WORKSHOP_PASSWORD"]
        self.admin = (settings["WORKSHOP_ADMINS"], settings["WORKSHOP_ADMIN_PASSWORD"])

    def home(self, name: str) -> Path:
        return self.state / "homes" / name

    def lines_until(self, predicate, timeout: float = 30) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.printed):
                return self.printed
            time.sleep(0.2)
        raise AssertionError(f"not printed within {timeout} s; printed so far: {self.printed}")


@pytest.fixture(scope="module")
def hub(tmp_path_factory, course_repo) -> Hub:
    yield from _run_hub(tmp_path_factory, course_repo)


def _run_hub(tmp_path_factory, course_repo: str, **settings: str):
    """`make hub` (python -m workshop.hub) on free ports with WORKSHOP_* `settings`, until the generator closes."""
    try:
        import jupyterhub  # noqa: F401
        import nbgitpuller  # noqa: F401
    except ImportError as missing:
        _missing(f"the workshop extra is not installed ({missing.name}): pip install -e '.[test,workshop]' (make test does)")
    if not PROXY.exists():
        if shutil.which("npm") is None:
            _missing("configurable-http-proxy is not installed and npm is missing: install Node.js, then `make node-tools`")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=REPO / "tests" / "node", check=True,
                       capture_output=True, timeout=600)  # fmt: skip
    # The "Jupyter news?" pop-up answered "no" in this environment, as `make hub` (and `make lab`) do.
    subprocess.run([sys.executable, str(REPO / "binder" / "lab_settings.py")], check=True, capture_output=True)
    state = tmp_path_factory.mktemp("hub")
    port = _free_ports()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSHOP_", "OPENAI_", "COURSE_"))}
    env.update(WORKSHOP_COURSE_REPO=course_repo, PYTHONUNBUFFERED="1", **settings)
    process = subprocess.Popen([sys.executable, "-m", "workshop.hub", "--port", str(port), "--state", str(state)],
                               cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)  # fmt: skip
    printed: list[str] = []

    def read() -> None:
        for line in process.stdout:
            printed.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not any(line.startswith("Ctrl-C") for line in printed):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log = (state / "hub.log").read_text(errors="replace")[-4000:] if (state / "hub.log").exists() else ""
            pytest.fail(f"make hub did not start: {printed}\n{log}")
        time.sleep(0.2)
    yield Hub(process, f"http://127.0.0.1:{port}", state, printed)
    process.send_signal(signal.SIGINT)  # what Ctrl-C in `make hub` does
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    reader.join(10)
    process.stdout.close()
    assert process.returncode == 0, printed


# ---- notebook 00 through the hub, compared the way nbval compares -------------------------------


def _sanitizers() -> list[tuple[str, str]]:
    from nbval.plugin import get_sanitize_patterns

    return get_sanitize_patterns((REPO / "tests" / "nbval_sanitize.cfg").read_text())


def _comparable(outputs: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """nbval's view of a cell's outputs: streams coalesced, outputs flattened by key (MIME types
    included), the keys nbval skips dropped, every string sanitized with tests/nbval_sanitize.cfg."""
    from nbval.plugin import coalesce_streams, transform_streams_for_comparison

    skip = {"metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
            "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg"}  # nbval's skip_compare
    patterns = _sanitizers()

    def clean(value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "".join(value)
        if isinstance(value, str):
            for regex, replace in patterns:
                value = re.sub(regex, replace, value)
        return value

    flat: dict[str, list[Any]] = defaultdict(list)
    nodes = [nbformat.from_dict(json.loads(json.dumps(o))) for o in outputs]
    for output in transform_streams_for_comparison(coalesce_streams(nodes)):
        for key, value in output.items():
            if key in skip:
                continue
            if key == "data":
                for mime, data in value.items():
                    if mime not in skip:
                        flat[mime].append(clean(data))
            else:
                flat[key].append(clean(value))
    return dict(flat)


def _stored_outputs() -> dict[int, list[dict[str, Any]]]:
    notebook = nbformat.read(REPO / NOTEBOOK, as_version=4)
    return {i: cell.outputs for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"}


def _join(hub: Hub, name: str) -> tuple[Learner, float]:
    learner = Learner(hub.url, name, hub.password, timeout=240)
    learner.log_in()
    return learner, learner.spawn()


@pytest.fixture(scope="module")
def learners(hub) -> dict[str, Learner]:
    """Three learners logged in, their servers spawned (at the same time, as a room does)."""
    with concurrent.futures.ThreadPoolExecutor(len(LEARNERS)) as pool:
        joined = dict(zip(LEARNERS, pool.map(lambda name: _join(hub, name), LEARNERS)))
    return {name: learner for name, (learner, _) in joined.items()}


def test_learners_log_in_pull_the_course_and_run_notebook_00_through_the_proxy(hub, learners, course_repo):
    stored = _stored_outputs()

    def attend(learner: Learner):
        pulled = learner.pull(course_repo)
        return pulled, learner.run_notebook(f"{TARGET}/{NOTEBOOK}")

    with concurrent.futures.ThreadPoolExecutor(len(learners)) as pool:
        results = dict(zip(learners, pool.map(attend, learners.values())))
    for name, (pulled, runs) in results.items():
        home = hub.home(name)
        assert (home / TARGET / NOTEBOOK).is_file(), pulled  # nbgitpuller cloned the course into the home
        assert subprocess.run(["git", "remote", "get-url", "origin"], cwd=home / TARGET, capture_output=True,
                              text=True).stdout.strip() == course_repo  # fmt: skip
        assert [run.index for run in runs] == list(stored)
        for run in runs:
            assert _comparable(run.outputs) == _comparable(stored[run.index]), (name, run.index)
        assert not any(o["output_type"] == "error" for run in runs for o in run.outputs)
        # The kernel was the learner's: its progress file is in their home, the two exercises not answered.
        from course_lib import progress

        recorded = progress.attempts(home / progress.IN_HOME)
        assert [(a.exercise, a.outcome) for a in recorded] == [
            ("nb00.check_kinds", "unanswered"), ("nb00.check_final_text", "unanswered")]  # fmt: skip
    # The learner's server runs with the config's kernel culling (how a learner stays inside MEM_LIMIT).
    import psutil

    servers = [p for p in psutil.process_iter(["cmdline", "cwd"]) if p.info["cwd"] == str(hub.home("ana"))
               and "jupyterhub.singleuser" in (p.info["cmdline"] or [])]  # fmt: skip
    assert len(servers) == 1 and "--MappingKernelManager.cull_idle_timeout=1800" in servers[0].info["cmdline"]
    # Its kernels talk to it over Unix sockets in a private folder (course_lib.hub_kernels): no TCP
    # port to race other learners' servers for.
    session = learners["ana"].start_kernel(f"{TARGET}/{NOTEBOOK}")
    try:
        [kernel] = [p for p in servers[0].children(recursive=True) if session["kernel"]["id"] in " ".join(p.cmdline())]
        connection = next(part for part in kernel.cmdline() if part.endswith(".json"))
        assert json.loads(Path(connection).read_text())["transport"] == "ipc"
        assert Path(connection).parent.name.startswith("kernels-") and Path(connection).parent.stat().st_mode & 0o077 == 0
        assert [c for c in kernel.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN] == []
    finally:
        learners["ana"].stop_kernel(session)
    # make hub printed one line per learner who logged in.
    assert sorted(line for line in hub.printed if line.startswith("logged in: ")) == [
        f"logged in: {name}" for name in LEARNERS]  # fmt: skip


def test_make_hub_prints_where_the_passwords_are(hub):
    assert hub.printed[0] == f"Workshop hub: {hub.url}  (any name + the learners' password)"
    assert hub.printed[1].startswith(f"Passwords: {hub.state / 'passwords.env'}  (learners: WORKSHOP_PASSWORD;")
    assert (hub.state / "passwords.env").stat().st_mode & 0o077 == 0  # readable by its owner only


def test_a_wrong_password_a_bad_name_and_a_learner_as_admin_are_refused(hub):
    with pytest.raises(LearnerError, match="login refused"):
        Learner(hub.url, "eve", "not the password").log_in()
    with pytest.raises(LearnerError, match="login refused"):
        Learner(hub.url, "Robert'); DROP", hub.password).log_in()
    name, admin_password = hub.admin
    with pytest.raises(LearnerError, match="login refused"):
        Learner(hub.url, name, hub.password).log_in()  # the instructor's name needs the admin password
    assert Learner(hub.url, name, admin_password).log_in().status_code == 302


# ---- the browser: a learner's first screen, the instructor's room view ---------------------------


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed; pip install -e '.[test]'")
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if path is None:
        _missing("Chromium not found; install Debian's chromium: apt-get install chromium")
    from test_browser import CHROMIUM_ARGS

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True, timeout=60_000)
        try:
            yield chromium
        finally:
            chromium.close()


def _log_in(page, hub: Hub, name: str, password: str) -> None:
    page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")


def test_a_learner_logs_in_with_chromium_and_lands_on_notebook_00_with_no_pop_up(hub, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(STEP_MS)
        _log_in(page, hub, "dee", hub.password)
        # The hub spawns the server; its default URL is nbgitpuller's, which pulls the course into the
        # home and then opens notebook 00 in JupyterLab.
        page.wait_for_url(re.compile(rf"/user/dee/lab/tree/{TARGET}/{re.escape(NOTEBOOK)}"), timeout=STEP_MS)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=STEP_MS)
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel").inner_text()
        page.wait_for_timeout(4000)  # the news question would pop up a few seconds after start
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "hub-first-screen.png"))
        # The notification settings as the learner's server serves them (with the XSRF header JupyterLab sends).
        fetch_news = page.evaluate("""async () => {
            const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || '';
            const r = await fetch('/user/dee/lab/api/settings/@jupyterlab/apputils-extension:notification',
                                  {headers: {'X-XSRFToken': decodeURIComponent(xsrf)}});
            const text = await r.text();
            try { return JSON.parse(text).schema.properties.fetchNews.default; } catch (e) { return r.status + ' ' + text.slice(0, 300); }
        }""")
    finally:
        context.close()
    assert tab == Path(NOTEBOOK).name
    assert not [t for t in toasts if "news" in t.lower()], toasts
    assert fetch_news == "false"  # the course's override, as the learner's server serves it
    assert (hub.home("dee") / TARGET / NOTEBOOK).is_file()
    # The English edition lands on JupyterLab's own language: no locale was written for the learner.
    assert not (hub.home("dee") / ".jupyter/lab/user-settings/@jupyterlab/translation-extension").exists()


@pytest.fixture(scope="module")
def zh_hub(tmp_path_factory, course_repo) -> Hub:
    """The same hub for a 简体中文 workshop (WORKSHOP_EDITION=zh-CN in its settings)."""
    yield from _run_hub(tmp_path_factory, course_repo, WORKSHOP_EDITION="zh-CN")


def test_a_zh_cn_workshop_lands_the_learner_on_the_twin_with_jupyterlab_in_chinese(zh_hub, browser):
    notebook = "notebooks/zh-CN/00_map_and_first_run.ipynb"
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")  # an English browser
    try:
        page = context.new_page()
        page.set_default_timeout(STEP_MS)
        _log_in(page, zh_hub, "fei", zh_hub.password)
        # nbgitpuller pulls the course, then hands over to course/zh-CN/…, which sets JupyterLab's
        # locale for the learner and redirects to the notebook in lab/tree.
        page.wait_for_url(re.compile(rf"/user/fei/lab/tree/{TARGET}/{re.escape(notebook)}"), timeout=STEP_MS)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=STEP_MS)
        menus = page.locator("#jp-menu-panel .lm-MenuBar-itemLabel").all_inner_texts()
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "hub-first-screen-zh-CN.png"))
        locale = page.evaluate("""async () => {
            const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || '';
            const r = await fetch('/user/fei/lab/api/settings/@jupyterlab/translation-extension:plugin',
                                  {headers: {'X-XSRFToken': decodeURIComponent(xsrf)}});
            const text = await r.text();
            try { return JSON.parse(text).settings.locale; } catch (e) { return r.status + ' ' + text.slice(0, 300); }
        }""")
    finally:
        context.close()
    assert locale == "zh_CN"  # JupyterLab's own translation setting, as the learner's server serves it
    assert menus[:2] == ["文件", "编辑"], menus  # drawn from the zh_CN language pack
    assert (zh_hub.home("fei") / TARGET / notebook).is_file()
    # The name rule is said at the login form in the workshop's language.
    login = requests.get(f"{zh_hub.url}/hub/login", timeout=60).content.decode()
    assert "任意取一个名字：1–32 个字符，可用字母 a–z、数字" in login


# ---- the room view: progress sent by the learners' servers, projected and acted on ----------------

ROOM = "/services/room/"
BLOCK = "plan=half-day&block=half-day/1"  # INSTRUCTOR.md's half day, 0:00–1:00 "the loop": 00's two exercises
LONG = "a-learner-with-a-long-name"  # 26 characters: TLJH would give it a hashed Unix name
VIEWPORT = {"width": 1280, "height": 720}
ZH_NOTEBOOK = "notebooks/zh-CN/00_map_and_first_run.ipynb"


def _run_in_kernel(learner: Learner, source: str, notebook: str = NOTEBOOK) -> str:
    """Run `source` in a kernel of `notebook` (its folder decides the edition: zh-CN for the twin)."""
    session = learner.start_kernel(f"{TARGET}/{notebook}")
    try:
        with learner.kernel(session) as kernel:
            run = kernel.execute(source)
    finally:
        learner.stop_kernel(session)
    return "".join(o.get("text", "") for o in run.outputs)


FINAL_TEXT = "from course_lib.exercises.nb00 import SOLUTIONS, check_final_text, check_kinds, OBJECTS\n"


@pytest.fixture(scope="module")
def answered(hub, learners, course_repo) -> dict[str, Learner]:
    """Learners of both editions answer 00's exercises in their own kernels, at once; a learner with a
    long name too, and fay, who logs in and never opens a notebook."""
    joined = {}
    for name in (LONG, "fay"):
        joined[name] = Learner(hub.url, name, hub.password, timeout=240)
        joined[name].log_in()
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        list(pool.map(lambda learner: learner.spawn(), joined.values()))
        list(pool.map(lambda learner: learner.pull(course_repo), [*learners.values(), joined[LONG]]))
        answers = [
            (learners["ana"], FINAL_TEXT + "check_final_text(SOLUTIONS['check_final_text']())\n"
                                           "check_kinds({name: 'rule' for name in OBJECTS})", NOTEBOOK),
            (learners["bo"], FINAL_TEXT + "check_kinds(...)\ncheck_final_text(lambda response: '')", NOTEBOOK),  # kinds: the starter
            (learners["chen"], FINAL_TEXT + "check_final_text(lambda response: '')", ZH_NOTEBOOK),  # the 简体中文 twin
            (joined[LONG], FINAL_TEXT + "check_final_text(lambda response: 'x')", NOTEBOOK),
        ]  # fmt: skip
        said = list(pool.map(lambda answer: _run_in_kernel(*answer), answers))
    assert said[0].startswith("✓") and "✗" in said[0] and all(s.startswith("✗") for s in said[1:]), said
    assert said[2].startswith("✗ 例子 '")  # chen's kernel speaks Chinese
    return {**learners, **joined}


def _admin_page(context, hub: Hub, query: str):
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    page.goto(f"{hub.url}{ROOM}?{query}", wait_until="domcontentloaded")
    if "/hub/login" in page.url:
        name, password = hub.admin
        page.fill("#username_input", name)
        page.fill("#password_input", password)
        page.click("#login_submit")
        page.wait_for_url(lambda url: ROOM in url)
    return page


def _api(page, path: str, body: Any = None) -> Any:
    """A call of the room's API from the page, as its own script makes one (the XSRF header included)."""
    return page.evaluate("""async ([path, body]) => {
        const xsrf = decodeURIComponent((document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "");
        const init = {headers: {"X-XSRFToken": xsrf, "Content-Type": "application/json"}};
        if (body !== null) { init.method = "POST"; init.body = JSON.stringify(body); }
        const r = await fetch(path, init);
        const text = await r.text();
        try { return {status: r.status, json: JSON.parse(text)}; } catch (e) { return {status: r.status, text}; }
    }""", [path, body])


def _until(page, query: str, ready, timeout: float = 60) -> dict[str, Any]:
    """The room's view (api/room?query) once `ready(view)` holds: the relays send every few seconds."""
    deadline = time.monotonic() + timeout
    while True:
        view = _api(page, f"api/room?{query}")["json"]
        if ready(view) or time.monotonic() > deadline:
            return view
        time.sleep(1)


def _stuck_on_final_text(view: dict[str, Any]) -> bool:
    rows = {r["exercise"]: r for r in view.get("rows", [])}
    final = rows.get("nb00.check_final_text", {})
    return sorted(final.get("stuck", [])) == sorted(["bo", "chen", LONG]) and "ana" in final.get("passed", [])


def _visible_names(page, names) -> list[str]:
    text = page.locator("body").inner_text()  # what is drawn: hidden elements are left out
    return [n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]


def _fits(page) -> list[str]:
    """The rows that do not fit in the viewport (a projector shows no more)."""
    height = page.viewport_size["height"]
    return [row.get_attribute("data-exercise") for row in page.locator("#room tbody tr").all()
            if row.bounding_box()["y"] + row.bounding_box()["height"] > height]  # fmt: skip


def test_the_room_on_the_projector_in_both_languages(hub, answered, browser):
    names = list(answered)
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    try:
        page = _admin_page(context, hub, f"{BLOCK}&projector=1&lang=en")
        view = _until(page, f"{BLOCK}&lang=en", _stuck_on_final_text)
        assert _stuck_on_final_text(view), view
        page.wait_for_function("() => document.querySelectorAll('#room tbody tr .mistake').length >= 2")
        page.wait_for_timeout(500)
        rows = page.locator("#room tbody tr").evaluate_all("rows => rows.map(r => r.dataset.exercise)")
        titles = page.locator("#room tbody tr .title").all_inner_texts()
        final = page.locator('tr[data-exercise="nb00.check_final_text"]')
        groups = final.locator(".mistake").all()
        group = {"n": groups[0].locator(".words .n").inner_text(), "title": groups[0].locator(".template").inner_text(),
                 "details": groups[0].locator(".distinct").all_inner_texts()}  # fmt: skip
        hidden, fits = _visible_names(page, names), _fits(page)
        size = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('#room td')).fontSize)")
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "room-projector.png"))
        page.check("#names")  # shown on demand
        page.wait_for_timeout(300)
        shown = _visible_names(page, ["bo", "chen", LONG])
        # The same room, for a browser that asks for Chinese.
        zh = browser.new_context(viewport=VIEWPORT, locale="zh-CN", extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
                                 storage_state=context.storage_state())  # fmt: skip
        try:
            chinese = _admin_page(zh, hub, f"{BLOCK}&projector=1")
            chinese.wait_for_function("() => document.querySelectorAll('#room tbody tr .mistake').length >= 2")
            chinese.wait_for_timeout(500)
            zh_title = chinese.locator("h1").inner_text()
            zh_titles = chinese.locator("#room tbody tr .title").all_inner_texts()
            zh_group = chinese.locator('tr[data-exercise="nb00.check_final_text"] .mistake').first
            zh_details = zh_group.locator(".distinct .message").all_inner_texts()
            zh_template = zh_group.locator(".template").inner_text()
            zh_hidden, zh_fits = _visible_names(chinese, names), _fits(chinese)
            chinese.screenshot(path=str(SCREENSHOTS / "room-projector-zh-CN.png"))
        finally:
            zh.close()
    finally:
        context.close()
    # Sorted by where the room is stuck: 00's Exercise 2 (three stuck) above Exercise 1 (one).
    assert rows == ["nb00.check_final_text", "nb00.check_kinds"]
    assert titles == ["Exercise 2 · Find the final answer's text", "Exercise 1 · Rule, value or result?"]
    # One group for bo (English), chen (Chinese) and the long name: the same mistake, other values.
    assert len(groups) == 1 and group["n"] == "3 ×", group
    assert group["title"].startswith("case '…': you returned '…', the SDK's output_text gives ")
    # The detail that tells what went wrong, in the room's language, chen's included (two alike, one other).
    # (On the projector each distinct message once, with how many are stuck on it: no names.)
    [alike, other] = group["details"]
    assert re.match(r"2 ×\s+case 'the final answer, output = \[message\]': you returned '', the SDK's output_text", alike)
    assert re.match(r"1 ×\s+case 'the final answer, output = \[message\]': you returned 'x'", other), other
    # On the projector: large type, every row of the block on the 1280×720 screen, no name.
    assert size >= 24 and fits == [] and hidden == []
    assert sorted(shown) == sorted(["bo", "chen", LONG])
    assert zh_title == "课堂进度" and zh_titles == ["练习 2 · 找出最终回答的文本", "练习 1 · 规则、值还是结果？"]
    assert zh_template.startswith("例子 '…'：你返回了 '…'，而 SDK 的 output_text 给出的是 ")
    assert zh_details[0].startswith("2 × 例子 '最终回答，output = [message]'：你返回了 ''") and "'x'" in zh_details[1]
    assert zh_hidden == [] and zh_fits == []


def test_the_instructor_acts_on_the_room(hub, answered, browser):
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    try:
        page = _admin_page(context, hub, f"{BLOCK}&lang=en")
        _until(page, f"{BLOCK}&lang=en", _stuck_on_final_text)
        page.wait_for_function("() => document.querySelector('tr[data-exercise=\"nb00.check_final_text\"] button.name')")
        # Drill down: bo's exercises, how long he has been stuck, and his server for the admin.
        page.locator('tr[data-exercise="nb00.check_final_text"] .detail[data-learner="bo"] button.name').click()
        page.wait_for_selector("dialog#learner[open]")
        drilled = {"name": page.locator("#d-name").inner_text(), "server": page.locator("#d-server").get_attribute("href"),
                   "states": page.locator("dialog tbody tr").evaluate_all("rows => rows.map(r => [r.dataset.exercise, r.dataset.state])"),
                   "stuck": page.locator('dialog tr[data-exercise="nb00.check_final_text"]').inner_text()}  # fmt: skip
        page.click("#d-close")
        server = context.new_page()
        server.set_default_timeout(STEP_MS)
        server.goto(f"{hub.url}{drilled['server']}", wait_until="domcontentloaded")
        if "/oauth2/authorize" in server.url:  # JupyterHub asks an admin once before opening another's server
            server.click("button[type=submit]")
        server.wait_for_url(re.compile(r"/user/bo/lab"))
        server.close()
        # Pace against the plan: the clock started 61 minutes ago, the first block's two exercises are due.
        started = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 61 * 60))
        assert _api(page, "api/clock", {"start": started})["status"] == 200
        page.wait_for_function("() => document.getElementById('pace').innerText.startsWith('1:01')", timeout=30_000)
        pace = page.locator("#pace").inner_text()
        # Who never started a notebook: fay. Pruned, then back as soon as she opens one.
        status = page.locator("#status").inner_text()
        page.click("#prune")
        page.wait_for_function("() => document.getElementById('status').innerText.includes('pruned: 1')", timeout=30_000)
        pruned = _api(page, f"api/room?{BLOCK}")["json"]
        fay = answered["fay"]
        fay.open_server()
        opened = fay.start_kernel(f"{TARGET}/{NOTEBOOK}")  # she opens notebook 00 (and keeps it open): her server says so
        try:
            back = _until(page, f"{BLOCK}", lambda v: any("fay" in r["working"] for r in v["rows"]))
        finally:
            fay.stop_kernel(opened)
        # Export, as the links give it.
        csv_text = _api(page, f"api/export.csv?{BLOCK}&lang=zh-CN")["text"]
        exported = _api(page, f"api/export.json?{BLOCK}&lang=en")["json"]
        links = (page.locator("#csv").get_attribute("href"), page.locator("#json").get_attribute("href"))
        _api(page, "api/clock", {"start": None})
    finally:
        context.close()
    assert drilled["name"] == "bo" and drilled["server"] == "/user/bo/lab"
    assert dict(drilled["states"]) == {"nb00.check_final_text": "stuck", "nb00.check_kinds": "working"}
    assert re.search(r"stuck · stuck for \d+ min", drilled["stuck"]) and "you returned ''" in drilled["stuck"]
    assert re.fullmatch(r"1:01 into the plan \(1:00–1:50\)\. Due so far: 2 exercises; 0 of \d+ learners have passed "
                        r"them all \(median [01](\.5)?\)\.", pace), pace  # fmt: skip
    assert "never started a notebook: 1" in status
    assert "fay" not in pruned["learners"] and pruned["pruned"] == ["fay"]
    assert "fay" in back["learners"] and "fay" in {n for r in back["rows"] for n in r["working"]}
    import csv
    import io

    table = list(csv.DictReader(io.StringIO(csv_text.lstrip("\ufeff"))))
    assert list(table[0]) == ["learner", "exercise", "notebook", "title", "state", "tries", "seen_at", "first_try_at",
                              "passed_at", "last_try_at", "stuck_minutes", "mistake", "message"]  # fmt: skip
    chen = next(r for r in table if r["learner"] == "chen" and r["exercise"] == "nb00.check_final_text")
    assert chen["state"] == "stuck" and chen["title"] == "练习 2 · 找出最终回答的文本" and chen["message"].startswith("例子 '")
    assert {r["exercise"] for r in table} == {"nb00.check_kinds", "nb00.check_final_text"}
    assert set(exported) >= {"exported_at", "room", "learners"} and exported["learners"]["bo"]["server"] == "/user/bo/lab"
    assert links == ("api/export.csv?lang=en&plan=half-day&block=half-day%2F1",
                     "api/export.json?lang=en&plan=half-day&block=half-day%2F1")  # the view's choices


def test_the_room_is_the_instructors_and_a_learner_speaks_only_for_themselves(hub, answered):
    bo = answered["bo"]
    # A learner may not open the room view: the hub's OAuth refuses them (their role has no access:services).
    denied = bo.session.get(f"{hub.url}{ROOM}api/room", timeout=60)
    assert denied.status_code == 403 and "/hub/api/oauth2/authorize" in denied.url, (denied.status_code, denied.url)
    progress_url = f"{hub.url}{ROOM}api/progress"
    body = {"version": 1, "exercises": {}, "open": []}
    assert requests.post(progress_url, json=body, timeout=60).status_code == 401
    assert requests.post(progress_url, json=body, headers={"Authorization": "token not-a-token"}, timeout=60).status_code == 403
    # bo's own server token (his server's environment): what it sends is kept as bo's, whatever it says.
    [server] = [p for p in psutil.process_iter(["cmdline", "cwd"]) if p.info["cwd"] == str(hub.home("bo"))
                and "jupyterhub.singleuser" in (p.info["cmdline"] or [])]  # fmt: skip
    token = server.environ()["JUPYTERHUB_API_TOKEN"]
    kept = requests.post(progress_url, json={**body, "learner": "ana"}, headers={"Authorization": f"token {token}"}, timeout=60)
    assert kept.status_code == 200 and kept.json() == {"kept": True, "learner": "bo"}
    bad = requests.post(progress_url, json={"version": 1, "exercises": {"rm -rf /": {}}},
                        headers={"Authorization": f"token {token}"}, timeout=60)  # fmt: skip
    assert bad.status_code == 400 and "not an exercise id" in bad.json()["error"]
    # The token is not the room's key either: it opens no admin page.
    assert requests.get(f"{hub.url}{ROOM}api/room", headers={"Authorization": f"token {token}"}, timeout=60,
                        allow_redirects=False).status_code in (302, 403)  # fmt: skip
    # Give bo his progress back (the relay resends within its heartbeat; the other tests may run later).
    _run_in_kernel(bo, FINAL_TEXT + "check_final_text(lambda response: '')")
