"""Binder: the files repo2docker reads, and a reproduction of its build followed by every notebook
under nbval — as close to what Binder does as this machine allows (no Docker here)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BINDER = REPO / "binder"


def _requirements() -> dict[str, str]:
    pins = {}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            match = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([A-Za-z0-9_.+!\-]+)", line.strip())
            assert match, f"not a plain pin: {line!r} (no paths, URLs, -e or ranges: they break Binder's image reuse)"
            pins[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(2)
    return pins


def test_runtime_is_python_3_12():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.12"


def test_requirements_pin_every_dependency_of_the_package():
    pins = _requirements()
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    for requirement in declared:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)).lower()
        assert name in pins, f"{name} is a dependency but not pinned in binder/requirements.txt (make binder-requirements)"


def test_post_build_installs_the_package_itself_without_dependencies():
    script = (BINDER / "postBuild").read_text()
    assert script.startswith("#!/bin/bash") and "set -e" in script
    assert re.search(r"pip install --no-deps \.$", script, re.M)
    assert os.access(BINDER / "postBuild", os.X_OK)


def _python_312() -> str:
    """A working Python 3.12 (a pyenv shim on PATH may exist without that version being active)."""
    candidates = [shutil.which("python3.12"), *sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))]
    working = [str(c) for c in candidates if c and subprocess.run([str(c), "--version"], capture_output=True).returncode == 0]
    found = working[0] if working else None
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs python3.12 to reproduce the Binder build")
        pytest.skip("python3.12 not found: the Binder reproduction needs it")
    return found


def _links(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "binder/links.py", *args], cwd=root, capture_output=True, text=True,
                          timeout=60)


def _copy_for_links(tmp_path: Path) -> Path:
    """What binder/links.py reads: its own file, the READMEs, both INSTRUCTOR.md, the workshop hub's
    config and clone commands, and the notebooks' names."""
    for name in ("binder/links.py", "README.md", "README.zh-CN.md", "notebooks/INSTRUCTOR.md", "notebooks/zh-CN/INSTRUCTOR.md",
                 "workshop/jupyterhub_config.py", "workshop/README.md", "workshop/tljh.sh"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    for notebook in [*(REPO / "notebooks").glob("[0-9]*.ipynb"), *(REPO / "notebooks" / "zh-CN").glob("[0-9]*.ipynb")]:
        (tmp_path / notebook.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / notebook.relative_to(REPO)).touch()
    return tmp_path


def test_every_notebook_has_a_binder_link_in_the_readme_and_the_instructor_notes():
    done = _links(REPO)
    assert done.returncode == 0, done.stderr
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(https://mybinder.org/v2/gh/OWNER/REPO/HEAD?urlpath=lab/tree/notebooks/00_map_and_first_run.ipynb)" in readme


def test_binder_links_can_be_aimed_at_the_published_repository(tmp_path):
    root = _copy_for_links(tmp_path)
    done = _links(root, "course-org/tool-calling")  # the README's command
    assert done.returncode == 0, done.stderr
    for name, entry in (("README.md", "lab/tree"), ("notebooks/INSTRUCTOR.md", "lab/tree"),
                        ("README.zh-CN.md", "course/zh-CN"), ("notebooks/zh-CN/INSTRUCTOR.md", "course/zh-CN")):  # fmt: skip
        text = (root / name).read_text(encoding="utf-8")
        assert "OWNER/REPO" not in text
        assert text.count(f"mybinder.org/v2/gh/course-org/tool-calling/HEAD?urlpath={entry}/notebooks/") >= 12
    # The same command aims the workshop hub: its nbgitpuller links, the repository its config
    # hands out, and the clone commands of its setup.
    for name, entry in (("notebooks/INSTRUCTOR.md", "lab/tree"), ("notebooks/zh-CN/INSTRUCTOR.md", "course/zh-CN")):
        text = (root / name).read_text(encoding="utf-8")
        assert text.count("/hub/user-redirect/git-pull?repo=https://github.com/course-org/tool-calling&") >= 12
        assert text.count(f"&urlpath={entry}/tool-calling-course/notebooks/") >= 12  # each edition's entry kept
    assert 'COURSE_REPO = "https://github.com/course-org/tool-calling"' in (root / "workshop/jupyterhub_config.py").read_text()
    for name in ("workshop/README.md", "workshop/tljh.sh"):
        text = (root / name).read_text(encoding="utf-8")
        assert "OWNER/REPO" not in text and "git clone https://github.com/course-org/tool-calling " in text
    wrong = _links(root, "not a slug")
    assert (wrong.returncode, wrong.stderr) == (2, "expected org/name, got 'not a slug'\n")


def test_the_link_check_names_what_is_missing(tmp_path):
    root = _copy_for_links(tmp_path)
    readme = root / "README.md"
    readme.write_text("\n".join(line for line in readme.read_text(encoding="utf-8").splitlines()
                                if "07_parallel_calls.ipynb" not in line), encoding="utf-8")
    (root / "notebooks" / "11_new.ipynb").touch()
    done = _links(root)
    assert done.returncode == 1
    assert "README.md: no Binder link for notebooks/07_parallel_calls.ipynb" in done.stderr
    assert "notebooks/INSTRUCTOR.md: no Binder link for notebooks/11_new.ipynb" in done.stderr
    assert "notebooks/INSTRUCTOR.md: no nbgitpuller link for notebooks/11_new.ipynb" in done.stderr


def test_the_link_check_names_a_hub_config_that_hands_out_another_repository(tmp_path):
    root = _copy_for_links(tmp_path)
    config = root / "workshop" / "jupyterhub_config.py"
    config.write_text(config.read_text().replace("github.com/OWNER/REPO", "github.com/someone/else"))
    guide = root / "notebooks" / "INSTRUCTOR.md"
    guide.write_text(guide.read_text(encoding="utf-8").replace("notebooks/02_parsing_arguments.ipynb` |",
                                                               "notebooks/02_gone.ipynb` |"), encoding="utf-8")
    done = _links(root)
    assert done.returncode == 1
    assert "the links name 2 repositories, not one: OWNER/REPO, someone/else" in done.stderr
    assert "notebooks/INSTRUCTOR.md: the nbgitpuller link for notebooks/02_gone.ipynb opens nothing the course has" in done.stderr
    assert "notebooks/INSTRUCTOR.md: no nbgitpuller link for notebooks/02_parsing_arguments.ipynb" in done.stderr


def test_a_binder_like_build_runs_every_notebook(tmp_path, node_tools):
    python = _python_312()
    repo = tmp_path / "repo"
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repo / name)
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"

    def run(*command, cwd=repo, timeout=900):
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        failures = done.stdout.find("= FAILURES =")  # pytest's report: from its first failure, not only the tail
        shown = done.stdout[failures:failures + 6000] if failures >= 0 else done.stdout[-3000:]
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{shown}\n{done.stderr[-3000:]}"
        return done.stdout

    run("python", "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt")
    run("bash", "binder/postBuild")  # repo2docker runs it from the repository root
    where = run("python", "-c", "import course_lib; print(course_lib.__file__)", cwd=tmp_path)
    assert "site-packages" in where  # installed by postBuild, not found by accident in the checkout
    override = venv / "share/jupyter/lab/settings/overrides.d/tool-calling-course.json"
    assert json.loads(override.read_text())["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    extension = venv / "etc/jupyter/jupyter_server_config.d/tool-calling-course.json"  # the zh-CN links' route
    assert json.loads(extension.read_text())["ServerApp"]["jpserver_extensions"] == {"course_lib.lab_edition": True}
    runner = [req for req in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
              if req.startswith(("pytest>", "pytest-timeout", "nbval"))]  # what [tool.pytest.ini_options] needs  # fmt: skip
    assert len(runner) == 3, runner
    run("python", "-m", "pip", "install", "--quiet", *runner)
    out = run("python", "-m", "pytest", "notebooks", "--nbval", "--nbval-current-env",
              "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "-q", "-p", "no:cacheprovider")  # fmt: skip
    assert re.search(r"\d+ passed", out) and "failed" not in out.splitlines()[-1]


def test_the_lab_settings_override_is_what_the_installed_jupyterlab_reads(tmp_path):
    from jupyterlab_server.settings_utils import _get_overrides  # the function lab calls for overrides

    env = {**os.environ, "JUPYTERLAB_DIR": str(tmp_path / "lab")}  # where get_app_dir() then points
    done = subprocess.run([sys.executable, "binder/lab_settings.py"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    overrides, error = _get_overrides(str(tmp_path / "lab" / "settings"))
    assert error == ""
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    # The setting really exists in the installed JupyterLab, and "false" is one of its values.
    schema = Path(sys.prefix) / "share/jupyter/lab/schemas/@jupyterlab/apputils-extension/notification.json"
    fetch_news = json.loads(schema.read_text())["properties"]["fetchNews"]
    assert {"const": "false", "title": "Never"} in fetch_news["oneOf"]


def test_post_build_installs_the_lab_settings_override():
    assert re.search(r"^python binder/lab_settings\.py$", (BINDER / "postBuild").read_text(), re.M)


# ---- one server, both editions: the zh-CN links set JupyterLab's own language ----------------------


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab_server(tmp_path):
    """JupyterLab as Binder's image runs it: after binder/lab_settings.py (postBuild), from the repository
    root, one server for every link. The learner's settings live under tmp_path, not this machine's home."""
    import httpx

    done = subprocess.run([sys.executable, "binder/lab_settings.py"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    port, token = _free_port(), "binder-test"
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--ServerApp.token={token}", *(["--allow-root"] if os.geteuid() == 0 else [])]  # fmt: skip
    server = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        import time

        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, f"jupyter lab exited: {server.stderr.read()[-3000:]}"
            try:
                if httpx.get(f"{url}/api/status?token={token}", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "jupyter lab did not answer within 120 s"
            time.sleep(0.3)
        yield url, token, tmp_path / "user-settings"
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr:
            server.stderr.close()


def _locale(url: str, token: str) -> str:
    import httpx

    plugin = "@jupyterlab/translation-extension:plugin"
    settings = httpx.get(f"{url}/lab/api/settings/{plugin}?token={token}", timeout=30).json()
    return settings["settings"].get("locale", settings["schema"]["properties"]["locale"]["default"])


def test_one_server_opens_the_english_link_in_english_and_the_zh_cn_link_in_chinese(lab_server):
    import httpx

    url, token, user_settings = lab_server
    english = "notebooks/00_map_and_first_run.ipynb"
    chinese = "notebooks/zh-CN/00_map_and_first_run.ipynb"
    # The English link, as README.md hands it out (urlpath=lab/tree/…): JupyterLab's own default language.
    page = httpx.get(f"{url}/lab/tree/{english}?token={token}", timeout=30)
    assert page.status_code == 200 and "JupyterLab" in page.text
    assert _locale(url, token) == "default" and not user_settings.exists()
    # The zh-CN link (urlpath=course/zh-CN/…): the locale is set for the learner, then the notebook opens.
    entry = httpx.get(f"{url}/course/zh-CN/{chinese}?token={token}", timeout=30)
    assert entry.status_code == 302 and entry.headers["location"] == f"/lab/tree/{chinese}?token={token}"
    page = httpx.get(f"{url}{entry.headers['location']}", timeout=30)
    assert page.status_code == 200 and "JupyterLab" in page.text
    assert _locale(url, token) == "zh_CN"
    pack = httpx.get(f"{url}/lab/api/translations/zh_CN?token={token}", timeout=30).json()
    assert pack["data"]["jupyterlab"]["menu\x04File"] == ["文件"]  # what the page then draws its menus with
    # The same route for English (not what README.md links; a way back), and a name that is no edition.
    back = httpx.get(f"{url}/course/en/{english}?token={token}", timeout=30)
    assert back.status_code == 302 and _locale(url, token) == "en"
    assert httpx.get(f"{url}/course/fr/{english}?token={token}", timeout=30).status_code == 404
    # Without the token the route is the server's like any other: log in first, nothing written.
    before = (user_settings / "@jupyterlab/translation-extension/plugin.jupyterlab-settings").read_text()
    anonymous = httpx.get(f"{url}/course/zh-CN/{chinese}", timeout=30)
    assert anonymous.status_code == 302 and anonymous.headers["location"].startswith("/login?")
    assert (user_settings / "@jupyterlab/translation-extension/plugin.jupyterlab-settings").read_text() == before


def test_post_build_enables_the_course_server_extension(tmp_path):
    env = {**os.environ, "JUPYTERLAB_DIR": str(tmp_path / "lab")}
    done = subprocess.run([sys.executable, "binder/lab_settings.py"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    from jupyter_core.paths import ENV_CONFIG_PATH

    config = json.loads((Path(ENV_CONFIG_PATH[0]) / "jupyter_server_config.d" / "tool-calling-course.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"course_lib.lab_edition": True}}}
    from course_lib import lab_edition

    assert lab_edition._jupyter_server_extension_points() == [{"module": "course_lib.lab_edition"}]
