"""Every command the README shows is run here (or by .ci/run), so the README stays true."""

import json
import os
import re
import shlex
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
PYTHON = ".venv/bin/python"
# The Inspector declares node >= 22.19: the README starts it with the project-local Node 22, never the PATH's node.
INSPECTOR = re.escape("tests/node/node_modules/.bin/node tests/node/node_modules/.bin/mcp-inspector")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port: int, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{proc.args} exited early with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"nothing listened on port {port}")


@pytest.fixture
def venv_python():
    """The README's commands name `.venv/bin/python`; tests run from a checkout where `make` made it."""
    if not (REPO / PYTHON).exists():
        pytest.skip("no .venv here: run `make test` (it creates .venv) to exercise the README's commands")
    return PYTHON


def test_quick_start_is_exactly_two_commands_and_make_lab_opens_notebook_00():
    quick = _blocks("bash")[0]
    commands = [line.split("#")[0].strip() for line in quick.splitlines() if line.strip()]
    assert commands == ["make lab", "make test"]
    port, token = _free_port(), "readme-test"
    lab = subprocess.Popen(["make", "lab", f"LAB_ARGS=--no-browser --port={port} --ServerApp.token={token}"],
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        _wait_for(port, lab, 120)
        page = httpx.get(f"http://127.0.0.1:{port}/lab/tree/notebooks/00_map_and_first_run.ipynb?token={token}", timeout=30)
        assert page.status_code == 200 and "JupyterLab" in page.text
        # The settings the browser receives: the news pop-up is answered "never" (binder/lab_settings.py).
        plugin = "@jupyterlab/apputils-extension:notification"
        settings = httpx.get(f"http://127.0.0.1:{port}/lab/api/settings/{plugin}?token={token}", timeout=30).json()
        assert settings["schema"]["properties"]["fetchNews"]["default"] == "false"
        assert _lab_locale(port, token) != "zh_CN"  # the English edition keeps JupyterLab's own default
    finally:
        subprocess.run(["pkill", "-TERM", "-s", str(lab.pid)], check=False)
        lab.wait(timeout=30)


def _lab_locale(port: int, token: str) -> str:
    """The locale JupyterLab's translation setting gives the page (its schema default, after overrides)."""
    plugin = "@jupyterlab/translation-extension:plugin"
    settings = httpx.get(f"http://127.0.0.1:{port}/lab/api/settings/{plugin}?token={token}", timeout=30).json()
    return settings["schema"]["properties"]["locale"]["default"]


def test_make_lab_in_chinese_opens_the_zh_cn_notebook_00_with_jupyterlab_in_chinese():
    port, token = _free_port(), "readme-test-zh"
    env = {k: v for k, v in os.environ.items() if k not in {"LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"}}
    lab = subprocess.Popen(["make", "lab", f"LAB_ARGS=--no-browser --port={port} --ServerApp.token={token}"],
                           cwd=REPO, env=env | {"COURSE_LANG": "zh_CN.UTF-8"}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        _wait_for(port, lab, 120)
        page = httpx.get(f"http://127.0.0.1:{port}/lab/tree/notebooks/zh-CN/00_map_and_first_run.ipynb?token={token}",
                         timeout=30)  # fmt: skip
        assert page.status_code == 200 and "JupyterLab" in page.text
        assert _lab_locale(port, token) == "zh_CN"  # the menus the page draws come from the zh_CN language pack
        pack = httpx.get(f"http://127.0.0.1:{port}/lab/api/translations/zh_CN?token={token}", timeout=30).json()
        assert pack["data"]["jupyterlab"][""]["language"] == "zh-CN" and pack["data"]["jupyterlab"]["menu\x04File"] == ["文件"]
    finally:
        subprocess.run(["pkill", "-TERM", "-s", str(lab.pid)], check=False)
        lab.wait(timeout=30)


@pytest.mark.parametrize(("uid", "flag"), [("0", True), ("1000", False)])
def test_make_lab_adds_allow_root_only_when_run_as_root(tmp_path, uid, flag):
    fake = tmp_path / "id"  # `make` asks `id -u`; a stand-in on PATH answers as root or as a user
    fake.write_text(f"#!/bin/sh\necho {uid}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["make", "-n", "lab"], cwd=REPO, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    [lab] = [line for line in done.stdout.splitlines() if "jupyter lab" in line]
    assert ("--allow-root" in lab.split()) is flag
    assert "binder/lab_settings.py" in done.stdout  # the pop-up override is installed before lab starts


def test_the_windows_commands_match_the_makefile():
    windows = _blocks("powershell")[0]
    makefile = (REPO / "Makefile").read_text()
    assert 'pip install -e ".[test]"' in windows and 'pip install --quiet -e ".[test]"' in makefile
    assert "jupyter lab notebooks\\00_map_and_first_run.ipynb" in windows
    nbval = re.search(r"NBVAL\s*:=\s*(.*)", makefile).group(1).strip()
    assert f"pytest tests notebooks {nbval}".replace("/", "\\") in windows
    assert "python tools\\translations.py check" in windows and "\t$(BIN)/python tools/translations.py check\n" in makefile


def test_the_offline_model_server_and_the_curl_example(venv_python):
    serve, curl = _blocks("bash")[1].strip().splitlines()[0], _blocks("bash")[2].strip()
    port = _free_port()
    server = subprocess.Popen(shlex.split(serve.rstrip("&").replace("8765", str(port))), cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        _wait_for(port, server)
        done = subprocess.run(["bash", "-c", curl.replace("8765", str(port))], capture_output=True, text=True, timeout=60)
        body = json.loads(done.stdout)
        [call] = body["output"]
        assert call["type"] == "function_call" and json.loads(call["arguments"]) == {"path": "/workspace/notes.txt", "head": 5}
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_fs_server_command_and_the_inspector_commands(venv_python, node_tools):
    commands = re.findall(rf"`({INSPECTOR} --cli \.venv[^`]+)`", README)
    assert len(commands) == 2
    for command in commands:
        done = subprocess.run(shlex.split(command), cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        body, _ = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{"):])
        assert "tools" in body or body["isError"] is False
    stdio = _blocks("bash")[3].strip()
    assert stdio == f"{PYTHON} -m course_lib.fs_server --root fixtures/workspace"
    done = subprocess.run(shlex.split(stdio), cwd=REPO, input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""  # clean exit on end of input, nothing but protocol on stdout


def test_every_inspector_command_runs_on_the_project_node_in_both_readmes():
    zh = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
    for text in (README, zh):
        shown = re.findall(r"`([^`]*mcp-inspector --cli[^`]*)`", text)
        assert len(shown) == 3 and all(re.match(INSPECTOR, command) for command in shown)
    assert re.findall(r"`([^`]*mcp-inspector --cli[^`]*)`", zh) == re.findall(r"`([^`]*mcp-inspector --cli[^`]*)`", README)
    assert (REPO / "tests/node/package.json").read_text().count('"node": "22.') == 1  # the Node 22 that command names


def test_the_verify_commands(venv_python):
    for line in _blocks("bash")[4].strip().splitlines():
        command = line.split("#")[0].replace("[FILE]", "").strip()
        done = subprocess.run(shlex.split(command), cwd=REPO, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "links hold" in done.stdout


def test_every_make_target_in_the_readme_exists():
    targets = set(re.findall(r"`make ([a-z-]+)`", README))
    assert {"test", "test-fast", "notebooks", "fixtures", "verify", "node-tools", "bench", "binder-requirements"} <= targets
    for target in sorted(targets):
        done = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"make {target}: {done.stderr}"


def test_the_http_server_command_and_the_inspector_over_http(venv_python, node_tools):
    serve = _blocks("sh")[0].strip()
    assert serve == f"{PYTHON} -m course_lib.fs_server --root fixtures/workspace --http 8765"
    [inspect] = re.findall(rf"`({INSPECTOR} --cli http[^`]+)`", README)
    port = _free_port()
    server = subprocess.Popen(shlex.split(serve.replace("8765", str(port))), cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        _wait_for(port, server)
        done = subprocess.run(shlex.split(inspect.replace("8765", str(port))), cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        body, _ = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{"):])
        assert body["isError"] is False and body["structuredContent"]["lines"] == 5
    finally:
        server.terminate()
        server.wait(timeout=10)
