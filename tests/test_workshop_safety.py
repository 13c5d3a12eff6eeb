"""The workshop hub on a real network: throttled logins, the name rule said at the form, a cap on
servers, and a launcher that never orphans the hub. Real JupyterHub (PyPI), real
configurable-http-proxy (npm), Chromium for the form, through `python -m workshop.hub` (`make hub`).

The throttling figures are made small for the test (3 wrong passwords per name, 6 per address, a
3-second wait) with the config's own WORKSHOP_LOGIN_* settings; the real ones are in
workshop/jupyterhub_config.py (LOGIN_*).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import requests

from test_hub import STEP_MS, Hub, _free_ports, _run_hub, browser  # noqa: F401 — browser is a fixture
from workshop.learner import Learner, LearnerError

REPO = Path(__file__).resolve().parents[1]
LOCK = 3.0
THROTTLE = {"WORKSHOP_LOGIN_NAME_TRIES": "3", "WORKSHOP_LOGIN_ADDRESS_TRIES": "6",
            "WORKSHOP_LOGIN_LOCK_SECONDS": str(LOCK), "WORKSHOP_MAX_SERVERS": "1"}  # fmt: skip


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Hub:
    yield from _run_hub(tmp_path_factory, "file:///no-course-pulled-here", **THROTTLE)


def _refused(hub: Hub, name: str, password: str) -> str:
    with pytest.raises(LearnerError, match="login refused") as refusal:
        Learner(hub.url, name, password).log_in()
    return str(refusal.value)


def test_a_name_waits_after_its_wrong_passwords_and_others_do_not(hub):
    for _ in range(3):
        assert "HTTP 403 Invalid username or password" in _refused(hub, "gus", "not the password")
    # The fourth try waits, the right password included: no password is checked for gus now.
    said = _refused(hub, "gus", hub.password)
    assert re.search(r"HTTP 429 Too many wrong passwords for this name: wait [1-3] s, then try again\.", said), said
    assert Learner(hub.url, "hal", hub.password).log_in().status_code == 302  # another name is not held up
    time.sleep(LOCK + 0.5)
    assert Learner(hub.url, "gus", hub.password).log_in().status_code == 302
    assert "HTTP 403" in _refused(hub, "gus", "not the password")  # a success cleared gus's count


def test_an_address_waits_after_wrong_passwords_for_many_names(hub):
    said, tries = "", 0
    while "HTTP 429" not in said and tries < 6:
        said = _refused(hub, f"ivy{tries}", "not the password")
        tries += 1
    # Six failures from this address (the earlier test's included) and it waits, whatever the name.
    assert "HTTP 429 Too many wrong passwords from this network address: wait" in said, said
    assert "from this network address" in _refused(hub, "a-new-name", hub.password)
    time.sleep(LOCK + 0.5)
    assert Learner(hub.url, "a-new-name", hub.password).log_in().status_code == 302


def test_the_name_rule_is_said_at_the_form_and_a_bad_name_keeps_it_and_costs_nothing(hub):
    page = requests.get(f"{hub.url}/hub/login", timeout=60).content.decode()  # the page says utf-8 in its <meta>
    assert "Choose any name: 1–32 letters a–z, digits, “.”, “_” or “-”" in page
    assert "The instructor sees how your exercise checks went (the room view)" in page  # what is recorded, said
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=60)
    for _ in range(5):  # more than a name's allowance: a refused name never counts as a wrong password
        answer = session.post(f"{hub.url}/hub/login", allow_redirects=False, timeout=60,
                              data={"username": "Ana Lee", "password": hub.password,
                                    "_xsrf": session.cookies.get("_xsrf", path="/hub/")})  # fmt: skip
        text = answer.content.decode()
        assert answer.status_code == 403
        assert "“ana lee” cannot be a name here: use 1–32 letters a–z" in text
        assert "Your password was not checked." in text
        assert 'value="Ana Lee"' in text and hub.password not in text  # the name kept, not the password


def test_the_browser_checks_the_name_before_the_form_is_sent(hub, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(STEP_MS)
        posts = []
        page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
        page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
        page.fill("#username_input", "Ana Lee")
        page.fill("#password_input", hub.password)
        page.click("#login_submit")
        page.wait_for_timeout(1000)
        state = page.evaluate("""() => { const u = document.getElementById('username_input');
            return {mismatch: u.validity.patternMismatch, title: u.title, password: document.getElementById('password_input').value}; }""")
        rule = page.locator("#name-rule").inner_text()
        url = page.url
    finally:
        context.close()
    assert posts == [] and "/hub/login" in url  # the browser kept the form: nothing was sent
    assert state == {"mismatch": True, "title": rule, "password": hub.password}  # the typed password is still there
    assert rule.startswith("Choose any name:")


def test_no_more_servers_than_the_machine_holds(hub):
    first = Learner(hub.url, "jo", hub.password, timeout=240)
    first.log_in()
    first.spawn()
    second = Learner(hub.url, "kim", hub.password, timeout=240)
    second.log_in()
    try:
        with pytest.raises(LearnerError, match="HTTP 429 .*Active user limit exceeded"):
            second.spawn()
    finally:
        first._hub_api("DELETE", "/users/jo/server")


# ---- the launcher: refuses without passwords, never orphans ---------------------------------------


def _launcher(state: Path, **env: str) -> subprocess.Popen:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSHOP_", "OPENAI_", "COURSE_"))}
    return subprocess.Popen([sys.executable, "-m", "workshop.hub", "--port", str(_free_ports()), "--state", str(state)],
                            cwd=REPO, env={**clean, "PYTHONUNBUFFERED": "1", **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip


def test_without_the_admin_password_the_launcher_refuses_in_one_line_and_starts_nothing(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    passwords = state / "passwords.env"
    passwords.write_text("WORKSHOP_PASSWORD=a-learner-password\nWORKSHOP_ADMINS=instructor\n")
    process = _launcher(state)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and out == ""
    assert err.splitlines() == [f"workshop hub not started: {passwords} has no WORKSHOP_ADMIN_PASSWORD (the admin "
                                "password, 32+ characters); add it, or delete the file to have both made"]  # fmt: skip
    assert sorted(p.name for p in state.iterdir()) == ["passwords.env"]  # no hub, no database, no log


def _running(process: psutil.Process) -> bool:
    """Still running: a zombie has ended (it waits only to be collected by PID 1)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _descendants(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_to_the_launcher_stops_everything_it_started(tmp_path, sig):
    """SIGINT (Ctrl-C), SIGTERM (a service manager, `kill`), SIGHUP (the terminal closed): the hub,
    its proxy, the culler, the room view, a learner's server and its kernel are all gone after."""
    process = _launcher(tmp_path / "state")
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(line.rstrip() for line in process.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not any(line.startswith("Ctrl-C") for line in printed):
            assert process.poll() is None and time.monotonic() < deadline, (printed, process.stderr.read())
            time.sleep(0.2)
        url = re.search(r"Workshop hub: (\S+)", printed[0])[1]
        password = dict(line.split("=", 1) for line in (tmp_path / "state" / "passwords.env").read_text().splitlines())
        learner = Learner(url, "lee", password["WORKSHOP_PASSWORD"], timeout=240)
        learner.log_in()
        learner.spawn()
        learner.open_server()
        learner.session.post(f"{learner.server}/api/kernels", json={"name": "python3"},
                             headers=learner._server_headers(), timeout=120).raise_for_status()  # fmt: skip
        deadline = time.monotonic() + 60
        while not any("ipykernel" in " ".join(p.cmdline()) for p in _descendants(process.pid)):
            assert time.monotonic() < deadline, "the kernel did not start"
            time.sleep(0.3)
        family = _descendants(process.pid)
        commands = [" ".join(p.cmdline()) for p in family]
        for part in ("jupyterhub -f", "configurable-http-proxy", "jupyterhub_idle_culler", "room.py",
                     "jupyterhub.singleuser", "ipykernel_launcher"):  # fmt: skip
            assert any(part in command for command in commands), (part, commands)
        os.kill(process.pid, sig)
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    reader.join(10)
    process.stdout.close()
    process.stderr.close()
    gone, alive = psutil.wait_procs(family, timeout=15)
    alive = [p for p in alive if _running(p)]
    assert alive == [], [" ".join(p.cmdline()) for p in alive]
    assert process.returncode == 0
    assert printed[-1] == (f"Stopped ({'Ctrl-C' if sig == signal.SIGINT else sig.name}): the hub, its proxy, "
                           "services and learners' servers.")  # fmt: skip
