"""The launch links in the READMEs and the instructor guides (English and zh-CN): check them, or aim them.

    python binder/links.py            # check (exit 1 and say what is wrong)
    python binder/links.py org/name   # point every link at github.com/org/name, then check

Two kinds of link open a notebook, and one command aims both once the public location is known.

A link is https://mybinder.org/v2/gh/<org>/<name>/HEAD?urlpath=lab/tree/notebooks/<notebook>,
which builds the repository's default branch and opens JupyterLab on that notebook. The check:
every link names the same repository, opens a notebook that exists, and each file has a link for
every notebook (each README's badge opens notebook 00). The Chinese README and guide link a notebook's
zh-CN twin (`notebooks/zh-CN/<name>`) where one exists and the English notebook until then, and
enter through urlpath=course/zh-CN/<path> instead of lab/tree/<path>: the course's server extension
(`course_lib.lab_edition`, enabled by postBuild) sets JupyterLab's own language to Chinese, then
opens lab/tree/<path>, since one Binder server serves both editions (ENTRY; the check wants each
file's own). Until the course is published the repository is the placeholder OWNER/REPO.
repo2docker ignores this file.

The nbgitpuller links of a workshop hub (the instructor guides' "Running the room on JupyterHub")
are <hub>/hub/user-redirect/git-pull?repo=https://github.com/<org>/<name>&targetpath=tool-calling-course&urlpath=lab/tree/tool-calling-course/<notebook>
(slashes left as they are, so the notebook's path reads as in a Binder link): the learner logs in, nbgitpuller copies the course into ~/tool-calling-course (or
pulls the instructor's changes, keeping the learner's edits) and JupyterLab opens the notebook; the
Chinese guide's links enter through urlpath=course/zh-CN/tool-calling-course/<notebook>, as its
Binder links do.
The hub's address is each instructor's own, so it stays the placeholder https://YOUR-HUB. The
check: each guide has one for every notebook, opening a notebook that exists (the Chinese guide:
the twin or, until there is one, the English notebook), they name the Binder links' repository, and so does workshop/jupyterhub_config.py (COURSE_REPO, where a
learner lands after logging in: git_pull_link's path, for notebook 00).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

REPO = Path(__file__).resolve().parents[1]
FILES = ("README.md", "notebooks/INSTRUCTOR.md", "README.zh-CN.md", "notebooks/zh-CN/INSTRUCTOR.md")
EDITIONS = {"README.zh-CN.md": "notebooks/zh-CN", "notebooks/zh-CN/INSTRUCTOR.md": "notebooks/zh-CN"}
"""A translated file links each notebook's twin in its edition's folder, where the twin exists."""


def edition_of_file(name: str) -> str:
    """The edition a file is written for: "zh-CN" for the files of EDITIONS, else "en"."""
    return Path(EDITIONS[name]).name if name in EDITIONS else "en"
PLACEHOLDER = "OWNER/REPO"
ENTRY = {"en": "lab/tree", "zh-CN": "course/zh-CN"}
"""Where a link of each edition enters the server: JupyterLab itself, or the course's server extension
(course_lib.lab_edition.entry_path), which sets JupyterLab's language first. English stays lab/tree."""
LINK = re.compile(r"https://mybinder\.org/v2/gh/(?P<repo>[^/\s]+/[^/\s]+)/HEAD\?urlpath="
                  r"(?P<entry>lab/tree|course/[A-Za-z-]+)/(?P<path>[^\s)`|]+)")
SLUG = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
HUB_FILES = ("notebooks/INSTRUCTOR.md", "notebooks/zh-CN/INSTRUCTOR.md")
"""The files with nbgitpuller links, one per notebook."""
HUB_PLACEHOLDER = "https://YOUR-HUB"
TARGET = "tool-calling-course"
"""The folder nbgitpuller makes in each learner's home (workshop/jupyterhub_config.py's TARGET)."""
GIT_PULL = re.compile(re.escape(HUB_PLACEHOLDER) + r"/hub/user-redirect/git-pull\?[^\s)`|]+")
HUB_CONFIG = "workshop/jupyterhub_config.py"
CLONE_FILES = ("workshop/README.md", "workshop/tljh.sh")
"""Files that clone the course onto a hub's machine (`git clone https://github.com/<org>/<name>`)."""
CLONE = re.compile(r"git clone https://github\.com/(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)")
COURSE_REPO = re.compile(r'^COURSE_REPO = "https://github\.com/(?P<repo>[^"]+)"', re.M)


def git_pull_link(repo: str, notebook: str, edition: str = "en") -> str:
    """The nbgitpuller link that copies github.com/`repo` into a learner's home and opens `notebook`
    (for `edition`: the zh-CN one enters through the course's server extension, in Chinese)."""
    query = urlencode({"repo": f"https://github.com/{repo}", "targetpath": TARGET,
                       "urlpath": f"{ENTRY[edition]}/{TARGET}/{notebook}"}, safe="/:")  # fmt: skip
    return f"{HUB_PLACEHOLDER}/hub/user-redirect/git-pull?{query}"


def _git_pull_target(link: str) -> tuple[str, str, str]:
    """(repo slug, notebook path, entry) of an nbgitpuller link; ("", "", "") for one that is not ours."""
    query = parse_qs(urlsplit(link).query)
    repo, urlpath = query.get("repo", [""])[0], query.get("urlpath", [""])[0]
    entry = next((entry for entry in ENTRY.values() if urlpath.startswith(f"{entry}/{TARGET}/")), None)
    if not repo.startswith("https://github.com/") or entry is None:
        return "", "", ""
    return repo.removeprefix("https://github.com/"), urlpath.removeprefix(f"{entry}/{TARGET}/"), entry


def current_repo(root: Path = REPO) -> str:
    """The repository the README's Binder badge names (OWNER/REPO until the course is published)."""
    found = LINK.search((root / "README.md").read_text(encoding="utf-8"))
    return found["repo"] if found else PLACEHOLDER


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
        entry = ENTRY[edition_of_file(name)]
        found += [f"{name}: the Binder link for {path} enters through {wrong}, not {entry}"
                  for path, wrong in sorted({(link["path"], link["entry"]) for link in links if link["entry"] != entry})]  # fmt: skip
        paths = {link["path"] for link in links}
        for path in sorted(paths - notebooks):
            found.append(f"{name}: opens {path}, which does not exist" if not (root / path).exists()
                         else f"{name}: opens {path}, not its {edition or 'English'} edition")  # fmt: skip
        found += [f"{name}: no Binder link for {path}" for path in sorted(notebooks - paths)]
        first = opened[0] if opened else "notebooks/00_map_and_first_run.ipynb"
        if name.startswith("README"):
            badge = re.search(r"\[!\[Launch on Binder\]\([^)]+\)\]\((\S+)\)", text)
            if not badge or not badge[1].endswith(f"urlpath={entry}/{first}"):
                found.append(f"{name}: the Binder badge does not open {first}")
    for name in HUB_FILES:
        edition = EDITIONS.get(name)
        targets = [_git_pull_target(link[0]) for link in GIT_PULL.finditer((root / name).read_text(encoding="utf-8"))]
        repos.update(repo for repo, _, _ in targets if repo)
        paths = {path for _, path, _ in targets if path}
        entry = ENTRY[edition_of_file(name)]
        found += [f"{name}: the nbgitpuller link for {path} enters through {wrong}, not {entry}"
                  for path, wrong in sorted({(path, wrong) for _, path, wrong in targets if path and wrong != entry})]  # fmt: skip
        found += [f"{name}: the nbgitpuller link for {path} opens nothing the course has"
                  for path in sorted(paths) if not (root / path).is_file()]  # fmt: skip
        linked = {Path(path).name for path in paths if (root / path).is_file()
                  and path in (f"notebooks/{Path(path).name}", f"{edition}/{Path(path).name}")}  # fmt: skip
        found += [f"{name}: no nbgitpuller link for notebooks/{nb}" for nb in english if nb not in linked]
    if (root / HUB_CONFIG).exists():
        configured = COURSE_REPO.search((root / HUB_CONFIG).read_text(encoding="utf-8"))
        if configured is None:
            found.append(f"{HUB_CONFIG}: no COURSE_REPO = \"https://github.com/org/name\" line")
        else:
            repos.add(configured["repo"])
    for name in CLONE_FILES:
        if (root / name).exists():
            repos.update(clone["repo"] for clone in CLONE.finditer((root / name).read_text(encoding="utf-8")))
    if len(repos) != 1:
        found.append(f"the links name {len(repos)} repositories, not one: {', '.join(sorted(repos)) or 'none'}")
    return found


def aim(repo: str, root: Path = REPO) -> None:
    """Point every Binder link in FILES, every nbgitpuller link and the hub config at `repo` ("org/name")."""
    if not SLUG.fullmatch(repo):
        raise ValueError(f"expected org/name, got {repo!r}")
    for name in FILES:
        path = root / name
        text = LINK.sub(lambda link: link[0].replace(link["repo"], repo, 1), path.read_text(encoding="utf-8"))
        if name in HUB_FILES:
            edition = edition_of_file(name)
            text = GIT_PULL.sub(lambda link: git_pull_link(repo, _git_pull_target(link[0])[1], edition)
                                if _git_pull_target(link[0])[0] else link[0], text)  # fmt: skip
        path.write_text(text.replace(f"`{PLACEHOLDER}`", f"`{repo}`"), encoding="utf-8")
    config = root / HUB_CONFIG
    if config.exists():
        text = COURSE_REPO.sub(f'COURSE_REPO = "https://github.com/{repo}"', config.read_text(encoding="utf-8"))
        config.write_text(text, encoding="utf-8")
    for name in CLONE_FILES:
        if (root / name).exists():
            path = root / name
            path.write_text(CLONE.sub(f"git clone https://github.com/{repo}", path.read_text(encoding="utf-8")),
                            encoding="utf-8")  # fmt: skip


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
