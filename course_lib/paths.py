"""Where the course's files are: the repository folders beside the package, or — when the package
is installed elsewhere (Binder installs it into site-packages) — the nearest ones above the
current directory (a notebook runs from `notebooks/`, or from `notebooks/zh-CN/` in the Chinese
edition)."""

from __future__ import annotations

import os
from pathlib import Path

_BESIDE_PACKAGE = Path(__file__).resolve().parent.parent


def _find(relative: str, marker: str) -> Path | None:
    for base in [_BESIDE_PACKAGE, Path.cwd(), *Path.cwd().parents]:
        if (base / relative / marker).exists():
            return base / relative
    return None


def fixtures_dir() -> Path:
    """The `fixtures/` folder (`$COURSE_FIXTURES` overrides).

    Raises:
        FileNotFoundError: no `fixtures/workspace` folder could be found.
    """
    if env := os.environ.get("COURSE_FIXTURES"):
        return Path(env).resolve()
    found = _find("fixtures", "workspace")
    if found is None:
        raise FileNotFoundError("no fixtures/workspace folder found; set COURSE_FIXTURES to the repo's fixtures/")
    return found


def workspace_dir() -> Path:
    """The real folder that the files server exposes to the model as `/workspace`."""
    return fixtures_dir() / "workspace"


def node_dir() -> Path:
    """The folder with the pinned npm packages' `package.json` (`tests/node`).

    Raises:
        FileNotFoundError: it could not be found.
    """
    found = _find("tests/node", "package.json")
    if found is None:
        raise FileNotFoundError("no tests/node/package.json found: run from inside the course repository")
    return found
