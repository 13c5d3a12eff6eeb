"""Every notebook's "next" link follows the README's order, and the last one says the course ends."""

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ORDER = re.findall(r"^\| (\d\d[a-z]?) \| \[", (REPO / "README.md").read_text(encoding="utf-8"), re.M)
NOTEBOOKS = {path.name[:3].rstrip("_"): path for path in sorted((REPO / "notebooks").glob("[0-9]*.ipynb"))}


def _markdown(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "markdown"]


def test_the_readme_lists_every_notebook_once_in_order():
    assert ORDER == sorted(ORDER) and set(ORDER) == set(NOTEBOOKS)


@pytest.mark.parametrize("number", ORDER[:-1])
def test_next_points_forward_in_the_readme_order(number):
    # Regression: 10 said "next: notebook 09" while 09 said "next: notebook 10".
    targets = re.findall(r"Next: \[?notebook (\d\d[a-z]?)", _markdown(NOTEBOOKS[number])[-1])
    assert targets, f"{number}: the last cell names no next notebook"
    assert all(ORDER.index(t) > ORDER.index(number) for t in targets), f"{number} sends the learner back to {targets}"
    following = ORDER[ORDER.index(number) + 1]
    assert targets == [following], f"{number} skips {following}: its next is {targets}"


def test_the_last_notebook_ends_the_course_and_its_intro_counts_every_notebook_before_it():
    last = _markdown(NOTEBOOKS[ORDER[-1]])
    assert "Next: notebook" not in last[-1] and "the course ends here" in last[-1]
    assert f"notebooks 00–{ORDER[-2]}" in last[0]  # regression: 10's intro listed 00–08


ZH_NOTEBOOKS = {path.name[:3].rstrip("_"): path for path in sorted((REPO / "notebooks" / "zh-CN").glob("[0-9]*.ipynb"))}


def test_the_zh_cn_edition_has_a_twin_of_every_notebook():
    assert set(ZH_NOTEBOOKS) == set(NOTEBOOKS)


@pytest.mark.parametrize("number", [n for n in ORDER[:-1] if n in ZH_NOTEBOOKS])
def test_the_zh_cn_next_points_at_the_very_next_notebook(number):
    """The same order in the 简体中文 edition ("下一步：笔记本 NN"), linking in its own folder when it links."""
    last = _markdown(ZH_NOTEBOOKS[number])[-1]
    targets = re.findall(r"下一步：\[?笔记本 (\d\d[a-z]?)", last)
    assert targets == [ORDER[ORDER.index(number) + 1]], f"zh-CN {number}: its next is {targets}"
    for link in re.findall(r"\]\(([^)]+\.ipynb)\)", last):
        assert "/" not in link or link.startswith("../zh-CN/"), f"zh-CN {number} links out of the edition: {link}"


def test_the_zh_cn_last_notebook_ends_the_course():
    last = _markdown(ZH_NOTEBOOKS[ORDER[-1]])
    assert "下一步：" not in last[-1] and "课程到此结束" in last[-1]
