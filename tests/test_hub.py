"""A real workshop hub: JupyterHub from PyPI, configurable-http-proxy from npm, workshop/jupyterhub_config.py.

The hub is the one `make hub` starts (`python -m workshop.hub`, which loads workshop/local_config.py:
the one config plus a local spawner, each learner a home of their own under a temp folder). The
course it hands out is a git repository made from this checkout's tracked files, pulled by
nbgitpuller into each learner's home. Three learners log in through the hub's form, get a server,
pull the course and run notebook 00 in their own kernel through the hub's proxy (REST for the
session, the kernel websocket for each cell); every output must equal the stored one after the
same sanitizer nbval uses. Then a fourth learner logs in with Chromium and lands in JupyterLab on
notebook 00 with no pop-up, and the instructor watches the room view in Chromium, in both
languages, while learners answer.

The parts of the workshop that only a real VM or cluster can test (TLJH's installer and systemd
units, Kubernetes pods and volumes) are named in workshop/README.md; what can be checked here about
their files — they load this same config, and agree with it — is checked at the end.
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
import pytest
import yaml

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


def _run_in_kernel(learner: Learner, source: str) -> str:
    session = learner.start_kernel(f"{TARGET}/{NOTEBOOK}")
    try:
        with learner.kernel(session) as kernel:
            run = kernel.execute(source)
    finally:
        learner.stop_kernel(session)
    return "".join(o.get("text", "") for o in run.outputs)


def _room_row(page, exercise: str) -> dict[str, Any]:
    row = page.locator(f'tr[data-exercise="{exercise}"]')
    return {"passed": row.locator(".passed").inner_text(), "not_started": row.locator(".not-started").inner_text(),
            "stuck": [(m.locator(".n").inner_text(), m.locator(".template").inner_text(), m.locator(".who").inner_text())
                      for m in row.locator(".mistake").all()]}  # fmt: skip


def test_the_instructor_sees_the_room_live_in_both_languages(hub, learners, browser):
    ana, bo, chen = (learners[name] for name in LEARNERS)
    answers = {  # run in each learner's own kernel, at the same time
        ana: "from course_lib.exercises.nb00 import SOLUTIONS, check_final_text\n"
             "check_final_text(SOLUTIONS['check_final_text']())",
        bo: "from course_lib.exercises.nb00 import check_final_text\ncheck_final_text(lambda response: '')",
    }
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        said = dict(zip(answers, pool.map(lambda item: _run_in_kernel(*item), answers.items())))
    assert said[ana].startswith("✓") and said[bo].startswith("✗"), said
    # A learner may not open the room view: the hub's OAuth refuses them (their role has no access:services).
    denied = bo.session.get(f"{hub.url}/services/room/api/room", timeout=60)
    assert denied.status_code == 403 and "/hub/api/oauth2/authorize" in denied.url, (denied.status_code, denied.url)
    name, admin_password = hub.admin
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(STEP_MS)
        _log_in(page, hub, name, admin_password)
        page.wait_for_url(lambda url: "/hub/login" not in url)
        page.goto(f"{hub.url}/services/room/", wait_until="domcontentloaded")
        page.wait_for_selector('tr[data-exercise="nb00.check_final_text"]')
        title, headers = page.locator("h1").inner_text(), page.locator("thead th").all_inner_texts()
        before = _room_row(page, "nb00.check_final_text")
        kinds_before = _room_row(page, "nb00.check_kinds")
        # Live: chen answers while the page is open; a refresh a few seconds later shows it.
        wrong_kinds = _run_in_kernel(chen, "from course_lib.exercises.nb00 import OBJECTS, check_kinds\n"
                                           "check_kinds({name: 'rule' for name in OBJECTS})")  # fmt: skip
        assert wrong_kinds.startswith("✗")
        page.wait_for_function("""() => document.querySelector('tr[data-exercise="nb00.check_kinds"] .mistake')""")
        kinds_after = _room_row(page, "nb00.check_kinds")
        status = page.locator("#status").inner_text()
        page.screenshot(path=str(SCREENSHOTS / "room-view.png"), full_page=True)
        zh = context.browser.new_context(locale="zh-CN", extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
                                         storage_state=context.storage_state())  # fmt: skip
        try:
            chinese = zh.new_page()
            chinese.set_default_timeout(STEP_MS)
            chinese.goto(f"{hub.url}/services/room/", wait_until="domcontentloaded")
            chinese.wait_for_selector('tr[data-exercise="nb00.check_final_text"]')
            zh_title, zh_headers = chinese.locator("h1").inner_text(), chinese.locator("thead th").all_inner_texts()
            chinese.screenshot(path=str(SCREENSHOTS / "room-view-zh-CN.png"), full_page=True)
            chinese.click("#toggle")  # the toggle: the same view in English
            chinese.wait_for_function("() => document.querySelector('h1').innerText === 'The room'")
        finally:
            zh.close()
    finally:
        context.close()
    assert title == "The room"
    assert headers == ["exercise", "passed", "stuck on (last try failed, never passed)", "not started"]
    assert status.startswith(f"learners: {len(LEARNERS) + 1} · updated"), status  # dee is a learner too
    total = len(LEARNERS) + 1
    assert before["passed"] == f"1 / {total}"
    [(count, words, who)] = before["stuck"]
    assert (count, who) == ("1 ×", "bo") and words.startswith("case '…': you returned '…', the SDK's output_text gives")
    assert before["not_started"] == f"{total - 2} / {total}"
    assert kinds_before["stuck"] == [] and kinds_before["not_started"] == f"{total} / {total}"
    [(count, words, who)] = kinds_after["stuck"]
    assert (count, who) == ("1 ×", "chen") and "is a value, not a rule" in words
    assert zh_title == "课堂进度"
    assert zh_headers == ["练习", "已通过", "卡在（最后一次失败，从未通过）", "还没开始"]


# ---- the other deployments' files: the same config, and they agree with it ----------------------


def _load_config(loader_namespace: dict[str, Any] | None = None, **env: str):
    """Load workshop/jupyterhub_config.py as traitlets does for `jupyterhub -f` (TLJH's load_subconfig
    is the same loader), with WORKSHOP_* settings from `env`."""
    from traitlets.config.loader import PyFileConfigLoader

    saved = {k: v for k, v in os.environ.items() if k.startswith("WORKSHOP_")}
    for key in saved:
        del os.environ[key]
    os.environ.update({"WORKSHOP_PASSWORD": "a-learner-password", "WORKSHOP_PASSWORD_FILE": "/nonexistent", **env})
    try:
        return PyFileConfigLoader("jupyterhub_config.py", str(REPO / "workshop")).load_config()
    finally:
        for key in [k for k in os.environ if k.startswith("WORKSHOP_")]:
            del os.environ[key]
        os.environ.update(saved)


def test_the_default_url_is_the_git_pull_link_binder_links_hands_out():
    sys.path.insert(0, str(REPO / "binder"))
    try:
        import links
    finally:
        sys.path.remove(str(REPO / "binder"))
    for edition, folder in (("en", "notebooks"), ("zh-CN", "notebooks/zh-CN")):
        config = _load_config(WORKSHOP_EDITION=edition)
        link = links.git_pull_link(links.current_repo(), f"{folder}/00_map_and_first_run.ipynb", edition)
        assert link.endswith(config.Spawner.default_url), (link, config.Spawner.default_url)
        assert link.startswith(f"{links.HUB_PLACEHOLDER}/hub/user-redirect/git-pull?")
        # English lands in lab/tree as before; zh-CN through the course's server extension, which it loads.
        entry = {"en": "lab/tree", "zh-CN": "course/zh-CN"}[edition]
        assert f"&urlpath={entry}/{TARGET}/{folder}/" in config.Spawner.default_url
        loads = "--ServerApp.jpserver_extensions=course_lib.lab_edition=True" in config.Spawner.args
        assert loads is (edition == "zh-CN")


def test_the_config_refuses_to_start_without_a_password():
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKSHOP_")}
    done = subprocess.run([sys.executable, "-c", "import sys; from traitlets.config.loader import PyFileConfigLoader as L;"
                           f" L('jupyterhub_config.py', {str(REPO / 'workshop')!r}).load_config()"],
                          env={**env, "WORKSHOP_PASSWORD_FILE": "/nonexistent"}, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode != 0 and "workshop: no learner password" in done.stderr


def test_under_tljh_and_z2jh_there_is_one_culler_and_the_room_view():
    # TLJH: its jupyterhub_config.py sets its culler, then load_subconfig()s each file of
    # jupyterhub_config.d — a separate Config merged in: the workshop's list replaces TLJH's.
    from traitlets.config import Config

    tljh = Config()
    tljh.JupyterHub.services = [{"name": "cull-idle", "admin": True, "command": ["python3", "-m", "jupyterhub_idle_culler"]}]
    tljh.merge(_load_config())
    assert [s["name"] for s in tljh.JupyterHub.services] == ["idle-culler", "room"]
    # z2jh: exec()s each file of jupyterhub_config.d in its own namespace, with its services and roles in `c`.
    z2jh = Config()
    z2jh.JupyterHub.services = [{"name": "jupyterhub-idle-culler", "command": ["python3", "-m", "jupyterhub_idle_culler"]},
                                {"name": "other", "url": "http://other:8000"}]  # fmt: skip
    z2jh.JupyterHub.load_roles = [{"name": "jupyterhub-idle-culler", "services": ["jupyterhub-idle-culler"]}]
    source = (REPO / "workshop" / "jupyterhub_config.py").read_text()
    os.environ.update({"WORKSHOP_PASSWORD": "a-learner-password", "WORKSHOP_PASSWORD_FILE": "/nonexistent",
                       "WORKSHOP_ROOM_SCRIPT": "/usr/local/etc/jupyterhub/room/workshop/room.py"})  # fmt: skip
    try:
        exec(compile(source, "jupyterhub_config.py", "exec"), {"c": z2jh, "__file__": "/usr/local/etc/jupyterhub/jupyterhub_config.py"})
    finally:
        for key in ("WORKSHOP_PASSWORD", "WORKSHOP_PASSWORD_FILE", "WORKSHOP_ROOM_SCRIPT"):
            os.environ.pop(key)
    assert [s["name"] for s in z2jh.JupyterHub.services] == ["other", "idle-culler", "room"]
    assert [r["name"] for r in z2jh.JupyterHub.load_roles] == ["idle-culler", "room"]
    assert z2jh.JupyterHub.services[2]["command"][1] == "/usr/local/etc/jupyterhub/room/workshop/room.py"


def _yaml_quantity(value: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(value[:-1]) * units[value[-1]]) if value[-1] in units else int(value)


def test_the_kubernetes_config_mounts_the_one_config_and_repeats_its_limits():
    values = yaml.safe_load((REPO / "workshop" / "kubernetes" / "config.yaml").read_text())
    files = values["hub"]["extraFiles"]
    assert files["workshop-config"]["mountPath"].startswith("/usr/local/etc/jupyterhub/jupyterhub_config.d/")
    assert files["workshop-config"]["mountPath"].endswith(".py")
    assert values["cull"]["enabled"] is False  # the workshop config runs the culler
    config = _load_config()
    single = values["singleuser"]
    assert _yaml_quantity(single["memory"]["limit"]) == _yaml_quantity(config.Spawner.mem_limit)
    assert _yaml_quantity(single["memory"]["guarantee"]) == _yaml_quantity(config.Spawner.mem_guarantee)
    assert single["cpu"] == {"limit": config.Spawner.cpu_limit, "guarantee": config.Spawner.cpu_guarantee}
    # The image is the one repo2docker builds from binder/ (the README's command names it).
    readme = (REPO / "workshop" / "README.md").read_text()
    assert f"--image-name {single['image']['name']}:{single['image']['tag']}" in readme


def test_the_tljh_commands_install_the_same_config_and_the_course():
    script = (REPO / "workshop" / "tljh.sh").read_text()
    assert script.startswith("#!/bin/bash") and "set -euo pipefail" in script
    lines = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    # TLJH loads every .py of jupyterhub_config.d after its own settings: the one config, linked in.
    assert 'sudo ln -sf "$COURSE/workshop/jupyterhub_config.py" /opt/tljh/config/jupyterhub_config.d/tool-calling-course.py' in lines
    # The course with the workshop extra (nbgitpuller) into the learners' environment, and its lab settings.
    assert 'sudo -E "$USER_ENV/bin/pip" install "$COURSE[workshop]"' in lines and "USER_ENV=/opt/tljh/user" in script
    assert 'sudo "$USER_ENV/bin/python" "$COURSE/binder/lab_settings.py"' in lines
    assert "sudo tljh-config set services.cull.enabled False" in lines and lines[-2] == "sudo tljh-config reload hub"
    # The passwords file it makes is the one the config reads by default.
    config = (REPO / "workshop" / "jupyterhub_config.py").read_text()
    default = re.search(r'os\.environ\.get\("WORKSHOP_PASSWORD_FILE", "([^"]+)"\)', config)[1]
    assert f"SECRETS={default}" in script
    done = subprocess.run(["bash", "-n", str(REPO / "workshop" / "tljh.sh")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
