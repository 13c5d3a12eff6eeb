"""What the room view knows about the course: every exercise with its title in both editions, and
INSTRUCTOR.md's two plans, block by block, with the exercises each block gives the room.

    python -m workshop.catalog           # rewrite workshop/room_catalog.json from the notebooks and guides
    python -m workshop.catalog --check   # exit 1, saying what changed, when the file is stale

The room view runs in the hub's Python, where neither the notebooks nor `course_lib` may be (a
Kubernetes hub gets room.py, roomdata.py and this JSON as mounted files): so the catalog is made
here, from the sources, and committed; `tests/test_workshop_room.py` fails when it is stale.

Sources, read as text (no kernel, no import of the course):
- exercises, in course order: `course_lib.progress.course_exercises()` (each module's SOLUTIONS);
- each exercise's title: the `### …` heading above the first code cell that calls its check, in the
  English notebook and in its zh-CN twin (`### Exercise 1 · …`, `### 练习 1 · …`, `### Drill 7 · …`);
- the plans: the tables under "## Workshop plans" in notebooks/INSTRUCTOR.md and its zh-CN edition,
  one row per block: its clock times, what it covers, and the exercises it gives (backticked ids).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CATALOG = Path(__file__).resolve().parent / "room_catalog.json"
GUIDES = {"en": REPO / "notebooks" / "INSTRUCTOR.md", "zh-CN": REPO / "notebooks" / "zh-CN" / "INSTRUCTOR.md"}
FOLDERS = {"en": REPO / "notebooks", "zh-CN": REPO / "notebooks" / "zh-CN"}
PLAN_IDS = ("90-minutes", "half-day")  # the plans' order in the guides
_ROW = re.compile(r"^\| (\d:\d\d)–(\d:\d\d) \|(.*)\|\s*$")
_EXERCISE = re.compile(r"`(nb\w+\.check_\w+)`")
_NOTEBOOK = re.compile(r"(?<![§–\d.:])\b(\d\d[a-z]?)\b")


class CatalogError(ValueError):
    """A guide or notebook does not say what the catalog needs (the message says where)."""


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def exercise_titles(notebook: Path) -> dict[str, str]:
    """check name → the `###` heading above the first code cell of `notebook` that calls it (a
    heading titles the first cell that calls a check after it, and no other)."""
    titles: dict[str, str] = {}
    heading = ""
    for cell in _cells(notebook):
        text = _source(cell)
        if cell["cell_type"] == "markdown":
            for line in text.splitlines():
                if line.startswith("### "):
                    heading = line[4:].strip()
                elif line.startswith("## "):
                    heading = ""
        elif cell["cell_type"] == "code" and heading:
            calls = [check for check in re.findall(r"\b(check_\w+)\(", text) if check not in titles]
            for check in calls:
                titles[check] = heading
            if calls:
                heading = ""  # one heading titles one exercise: the next needs its own
    return titles


def _notebook_files(folder: Path) -> dict[str, Path]:
    return {path.name.split("_", 1)[0]: path for path in sorted(folder.glob("[0-9][0-9]*_*.ipynb"))}


def _notebook_title(path: Path) -> str:
    first = _source(_cells(path)[0])
    return next((line[2:].strip() for line in first.splitlines() if line.startswith("# ")), path.stem)


def plans(guide: Path) -> list[dict[str, Any]]:
    """The plan tables of one guide: [{title, blocks: [{start, end, cells, exercises}]}], in order."""
    text = guide.read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)
    section = next((s for s in sections[1:] if s.startswith(("Workshop plans", "工作坊方案"))), None)
    if section is None:
        raise CatalogError(f"{guide}: no '## Workshop plans' section")
    found = []
    for part in re.split(r"^### ", section, flags=re.M)[1:]:
        blocks = []
        for line in part.splitlines():
            match = _ROW.match(line)
            if match:
                cells = [cell.strip() for cell in match[3].split("|")]
                blocks.append({"start": match[1], "end": match[2], "cells": cells,
                               "exercises": _EXERCISE.findall(cells[-1]) if cells else []})  # fmt: skip
        if blocks:
            found.append({"title": part.splitlines()[0].strip(), "blocks": blocks})
    return found


def build() -> dict[str, Any]:
    """The catalog, from the notebooks and guides of this checkout.

    Raises:
        CatalogError: an exercise without a title in an edition, a plan naming an unknown exercise,
            or the two guides' plans not in step.
    """
    sys.path.insert(0, str(REPO))
    try:
        from course_lib.progress import course_exercises
    finally:
        sys.path.remove(str(REPO))
    files = {edition: _notebook_files(folder) for edition, folder in FOLDERS.items()}
    titles = {edition: {number: exercise_titles(path) for number, path in found.items()}
              for edition, found in files.items()}  # fmt: skip
    exercises = []
    for exercise in course_exercises():
        module, check = exercise.split(".")
        number = module[2:]
        title = {}
        for edition in FOLDERS:
            found = titles[edition].get(number, {}).get(check)
            if not found:
                raise CatalogError(f"{exercise}: no '### …' heading above a cell calling {check} in "
                                   f"{FOLDERS[edition].relative_to(REPO)}/{number}_*.ipynb")  # fmt: skip
            title[edition] = found
        exercises.append({"id": exercise, "notebook": number, "title": title})
    notebooks = {number: {edition: _notebook_title(files[edition][number]) for edition in FOLDERS if number in files[edition]}
                 for number in files["en"]}  # fmt: skip
    known = {e["id"] for e in exercises}
    guides = {edition: plans(path) for edition, path in GUIDES.items()}
    if [[(b["start"], b["end"], b["exercises"]) for b in p["blocks"]] for p in guides["en"]] != \
            [[(b["start"], b["end"], b["exercises"]) for b in p["blocks"]] for p in guides["zh-CN"]]:  # fmt: skip
        raise CatalogError("the plans of notebooks/INSTRUCTOR.md and notebooks/zh-CN/INSTRUCTOR.md differ in their "
                           "times or exercises")  # fmt: skip
    if len(guides["en"]) != len(PLAN_IDS):
        raise CatalogError(f"notebooks/INSTRUCTOR.md has {len(guides['en'])} plan tables, not {len(PLAN_IDS)}")
    catalog_plans = []
    for plan_id, english, chinese in zip(PLAN_IDS, guides["en"], guides["zh-CN"], strict=True):
        blocks = []
        for index, (en, zh) in enumerate(zip(english["blocks"], chinese["blocks"], strict=True)):
            unknown = [e for e in en["exercises"] if e not in known]
            if unknown:
                raise CatalogError(f"INSTRUCTOR.md, plan {english['title']!r}, {en['start']}: unknown exercises {unknown}")
            covers = en["cells"][0] if plan_id == "90-minutes" else en["cells"][1]
            blocks.append({
                "id": f"{plan_id}/{index + 1}", "start": en["start"], "end": en["end"], "exercises": en["exercises"],
                "notebooks": sorted(set(_NOTEBOOK.findall(covers))),
                "label": {"en": " · ".join(c for c in en["cells"][:2] if c),
                          "zh-CN": " · ".join(c for c in zh["cells"][:2] if c)},
            })  # fmt: skip
        catalog_plans.append({"id": plan_id, "title": {"en": english["title"], "zh-CN": chinese["title"]},
                              "blocks": blocks})  # fmt: skip
    return {"exercises": exercises, "notebooks": notebooks, "plans": catalog_plans}


def render(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, ensure_ascii=False, indent=1) + "\n"


def load(path: Path = CATALOG) -> dict[str, Any]:
    """The committed catalog (what room.py reads)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        fresh = render(build())
    except CatalogError as error:
        print(f"workshop.catalog: {error}", file=sys.stderr)
        return 1
    if "--check" in argv:
        if not CATALOG.exists() or CATALOG.read_text(encoding="utf-8") != fresh:
            print(f"{CATALOG.relative_to(REPO)} is stale: run `python -m workshop.catalog`", file=sys.stderr)
            return 1
        return 0
    CATALOG.write_text(fresh, encoding="utf-8")
    print(f"wrote {CATALOG.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
