"""The workshop recipe in notebooks/INSTRUCTOR.md for a room without network: build a wheelhouse
once, then install from it alone. The commands are taken from INSTRUCTOR.md itself, so the recipe
and this test cannot drift apart."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INSTRUCTOR = (REPO / "notebooks" / "INSTRUCTOR.md").read_text(encoding="utf-8")


def _recipe() -> tuple[list[str], list[list[str]]]:
    """The wheelhouse build command, and the offline install commands, as INSTRUCTOR.md gives them."""
    section = INSTRUCTOR[INSTRUCTOR.index("**Pre-installed wheels.**"):INSTRUCTOR.index("**A local PyPI mirror**")]
    build, install = re.findall(r"```bash\n(.*?)```", section, re.S)
    [build_line] = [line for line in build.splitlines() if line.strip()]
    install_lines = [line.split("#")[0].strip() for line in install.splitlines() if line.strip()]
    return shlex.split(build_line), [shlex.split(line) for line in install_lines]


def test_the_recipe_is_the_one_this_test_runs():
    build, install = _recipe()
    assert build[:4] == ["python3", "-m", "pip", "wheel"] and "wheelhouse" in build
    assert install[0] == ["python3", "-m", "venv", ".venv"]
    assert "--no-index" in install[1] and install[-1] == ["make", "lab"]


def test_a_wheelhouse_installs_the_course_with_no_index(tmp_path):
    build, install = _recipe()
    repo = tmp_path / "repo"
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repo / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "VIRTUAL_ENV", "PIP_"))}
    python = sys.executable  # stands in for the recipe's python3: the same version the tests run on

    warnings: list[str] = []

    def run(command: list[str], **extra: str) -> str:
        command = [python if part == "python3" else part for part in command]
        done = subprocess.run(command, cwd=repo, env={**env, **extra}, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        warnings.extend(line for line in done.stderr.splitlines() if "BuildBackendWarning" in line)
        return done.stdout

    run(build)  # on a machine with network (PyPI)
    # In the room: no index at all, and any attempt to reach one would fail through a dead proxy.
    offline = {"PIP_NO_INDEX": "1", "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    *setup, make_lab = install
    for command in setup:
        run(command, **offline)
    # The first thing a newcomer reads: the install says nothing (no setuptools deprecation wall).
    assert warnings == []
    plan = run(["make", "-n", *make_lab[1:]], **offline)
    assert "pip install" not in plan and "jupyter lab notebooks/00_map_and_first_run.ipynb" in plan
    venv_python = str(repo / ".venv" / "bin" / "python")
    answer = run([venv_python, "-c", "from course_lib.course import start_course\n"
                  "course = start_course(quiet=True)\n"
                  "print(course.run('Show the first 2 lines of /workspace/notes.txt').status)\n"
                  "course.close()"], **offline)  # fmt: skip
    assert answer == "completed\n"
    assert run([str(repo / ".venv" / "bin" / "jupyter"), "lab", "--version"]).strip()
