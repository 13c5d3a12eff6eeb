"""The Binder launch links in the READMEs and the instructor guides (English and zh-CN): check them, or aim them.

    python binder/links.py            # check (exit 1 and say what is wrong)
    python binder/links.py org/name   # point every link at github.com/org/name, then check

A link is https://mybinder.org/v2/gh/<org>/<name>/HEAD?urlpath=lab/tree/notebooks/<notebook>,
which builds the repository's default branch and opens JupyterLab on that notebook. The check:
every link names the same repository, opens a notebook that exists, and each file has a link for
every notebook (each README's badge opens notebook 00). The Chinese README and guide link a notebook's
zh-CN twin (`notebooks/zh-CN/<name>`) where one exists and the English notebook until then. Until
the course is published the repository is the placeholder OWNER/REPO. repo2docker ignores this file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = ("README.md", "notebooks/INSTRUCTOR.md", "README.zh-CN.md", "notebooks/zh-CN/INSTRUCTOR.md")
EDITIONS = {"README.zh-CN.md": "notebooks/zh-CN", "notebooks/zh-CN/INSTRUCTOR.md": "notebooks/zh-CN"}
"""A translated file links each notebook's twin in its edition's folder, where the twin exists."""
PLACEHOLDER = "OWNER/REPO"
LINK = re.compile(r"https://mybinder\.org/v2/gh/(?P<repo>[^/\s]+/[^/\s]+)/HEAD\?urlpath=lab/tree/(?P<path>[^\s)`|]+)")
SLUG = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def problems(root: Path = REPO) -> list[str]:
    """Everything wrong with the links under `root`; empty when they are right."""
    english = sorted(p.name for p in (root / "notebooks").glob("[0-9]*.ipynb"))
    found: list[str] = []
    repos = set()
    for name in FILES:
        edition = EDITIONS.get(name)
        opened = [f"{edition}/{nb}" if edition and (root / edition / nb).exists() else f"notebooks/{nb}"
                  for nb in english]  # fmt: skip
        notebooks = set(opened)
        text = (root / name).read_text(encoding="utf-8")
        links = list(LINK.finditer(text))
        repos.update(link["repo"] for link in links)
        paths = {link["path"] for link in links}
        for path in sorted(paths - notebooks):
            found.append(f"{name}: opens {path}, which does not exist" if not (root / path).exists()
                         else f"{name}: opens {path}, not its {edition or 'English'} edition")  # fmt: skip
        found += [f"{name}: no Binder link for {path}" for path in sorted(notebooks - paths)]
        first = opened[0] if opened else "notebooks/00_map_and_first_run.ipynb"
        if name.startswith("README"):
            badge = re.search(r"\[!\[Launch on Binder\]\([^)]+\)\]\((\S+)\)", text)
            if not badge or not badge[1].endswith(f"urlpath=lab/tree/{first}"):
                found.append(f"{name}: the Binder badge does not open {first}")
    if len(repos) != 1:
        found.append(f"the links name {len(repos)} repositories, not one: {', '.join(sorted(repos)) or 'none'}")
    return found


def aim(repo: str, root: Path = REPO) -> None:
    """Point every Binder link in FILES at `repo` ("org/name")."""
    if not SLUG.fullmatch(repo):
        raise ValueError(f"expected org/name, got {repo!r}")
    for name in FILES:
        path = root / name
        text = LINK.sub(lambda link: link[0].replace(link["repo"], repo, 1), path.read_text(encoding="utf-8"))
        path.write_text(text.replace(f"`{PLACEHOLDER}`", f"`{repo}`"), encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv:
        try:
            aim(argv[0])
        except ValueError as wrong:
            print(wrong, file=sys.stderr)
            return 2
    found = problems()
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
