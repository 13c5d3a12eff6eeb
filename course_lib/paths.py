"""Where the course's files are: the fixtures folder and the sandboxed workspace."""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


def fixtures_dir() -> Path:
    """The `fixtures/` folder: `$COURSE_FIXTURES` if set, else the one beside the package, else
    the nearest one above the current directory (a notebook runs from `notebooks/`).

    Raises:
        FileNotFoundError: no `fixtures/` folder could be found.
    """
    if env := os.environ.get("COURSE_FIXTURES"):
        return Path(env).resolve()
    candidates = [_REPO / "fixtures"] + [p / "fixtures" for p in [Path.cwd(), *Path.cwd().parents]]
    for candidate in candidates:
        if (candidate / "workspace").is_dir():
            return candidate
    raise FileNotFoundError("no fixtures/workspace folder found; set COURSE_FIXTURES to the repo's fixtures/")


def workspace_dir() -> Path:
    """The real folder that the files server exposes to the model as `/workspace`."""
    return fixtures_dir() / "workspace"
