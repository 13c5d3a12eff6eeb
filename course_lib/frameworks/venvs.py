"""Venvs of their own for what cannot share the course's: LangGraph, the Claude Agent SDK, Phoenix.

    python(name)        # build/<name>-venv/bin/python, built first if missing or out of date
    ensure(name)        # build it (pip, from tests/outside/<name>-requirements.txt), once
    python -m course_lib.frameworks.venvs langgraph claude phoenix     # what `make outside-venvs` runs

Why each has its own:

- `langgraph`: LangChain's MCP adapter (langchain-mcp-adapters 0.3.2) requires `mcp<2`; the course
  runs `mcp` 2.x. The venv has mcp 1.x; the course's servers still run from the course's venv, and
  the two meet on stdio, as any client and server do.
- `claude`: the Claude Agent SDK's wheel bundles the Claude Code CLI, a 400 MB binary; the venv
  installs the SDK from its source instead and the scripts point it at the CLI pinned in tests/node.
- `phoenix`: the trace viewer brings its own web server, database layer and data stack.

Each venv's pins are a requirements file in tests/outside; a venv is rebuilt when its file changes
(the file's hash is kept in `build/<name>-venv/.installed`). pip reaches only the package index (or
its cache); nothing is fetched at run time.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from course_lib.lang import say
from course_lib.paths import node_dir

NAMES = ("langgraph", "claude", "phoenix")
_TIMEOUT = 1800.0  # seconds for one venv's pip install (a cold cache on a slow line)


class VenvFailed(RuntimeError):
    """A venv could not be built; the message holds what pip said."""


def repo_dir() -> Path:
    """The course repository (the folder holding tests/ and build/)."""
    return node_dir().parent.parent


def requirements(name: str) -> Path:
    return repo_dir() / "tests" / "outside" / f"{name}-requirements.txt"


def venv_dir(name: str) -> Path:
    return repo_dir() / "build" / f"{name}-venv"


def _stamp(name: str) -> str:
    return hashlib.sha256(requirements(name).read_bytes()).hexdigest()


def ready(name: str) -> bool:
    """The venv exists and was built from the requirements file as it is now."""
    marker = venv_dir(name) / ".installed"
    return marker.exists() and marker.read_text().strip() == _stamp(name)


def ensure(name: str, *, timeout: float = _TIMEOUT) -> Path:
    """Build `build/<name>-venv` from its requirements file unless it is ready; its folder.

    Raises:
        ValueError: `name` is not one of NAMES.
        VenvFailed: venv or pip failed (their output is in the message).
    """
    if name not in NAMES:
        raise ValueError(f"unknown venv {name!r}: one of {', '.join(NAMES)}")
    folder = venv_dir(name)
    if ready(name):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    steps = [[sys.executable, "-m", "venv", str(folder)],
             [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "-r", str(requirements(name))]]  # fmt: skip
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            raise VenvFailed(say("building the {n} venv took longer than {s:.0f} s", "构建 {n} venv 超过了 {s:.0f} 秒",
                                 n=name, s=timeout)) from expired
        if done.returncode != 0:
            raise VenvFailed(say("building the {n} venv failed:", "构建 {n} venv 失败：", n=name)
                             + f"\n{' '.join(step[:4])} …\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    (folder / ".installed").write_text(_stamp(name) + "\n")
    return folder


def python(name: str) -> Path:
    """The venv's Python, the venv built first when it is missing or out of date (see `ensure`)."""
    return ensure(name) / "bin" / "python"


def main(argv: list[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or list(NAMES)
    for name in names:
        try:
            print(say("{n}: {p}", "{n}：{p}", n=name, p=ensure(name)))
        except (ValueError, VenvFailed) as error:
            print(error, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
