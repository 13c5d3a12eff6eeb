"""The zh-CN instructor guide (notebooks/zh-CN/INSTRUCTOR.md) against the English one: the same
notebooks, the same figures, the same commands, so a change to the English guide cannot leave the
Chinese one silently wrong."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "binder"))
import links as binder_links  # noqa: E402

ENGLISH_PATH = REPO / "notebooks" / "INSTRUCTOR.md"
CHINESE_PATH = REPO / "notebooks" / "zh-CN" / "INSTRUCTOR.md"
ENGLISH = ENGLISH_PATH.read_text(encoding="utf-8")
CHINESE = CHINESE_PATH.read_text(encoding="utf-8")
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("[0-9]*.ipynb"))
NUMBER = re.compile(r"\d+(?:[ ,.]\d+)*")


def _sections(text: str) -> list[str]:
    """The guide split at its `## ` headings (the text before the first one left out)."""
    return re.split(r"^## .*$", text, flags=re.M)[1:]


def _rows(section: str) -> list[list[str]]:
    """The cells of each table row in `section` whose first cell is a notebook number (00, 03b...)."""
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.fullmatch(r"\d\d[a-z]?", cells[0]):
            rows.append(cells)
    return rows


def _figures(cell: str) -> list[str]:
    """The numbers written in a table cell, digit groups joined ("2 400" → "2400")."""
    return [re.sub(r"[ ,]", "", n) for n in NUMBER.findall(re.sub(r"\([^)]*\.ipynb\)", "", cell))]


def _timings(text: str) -> dict[str, list[list[str]]]:
    """Notebook number → the figures of each column after the name (run, words, code cells, exercises, learner)."""
    return {row[0]: [_figures(cell) for cell in row[2:]] for row in _rows(_sections(text)[0])}


def test_both_guides_have_the_same_sections():
    assert len(_sections(CHINESE)) == len(_sections(ENGLISH)) == 7
    assert [len(re.findall(r"^### ", s, re.M)) for s in _sections(CHINESE)] == \
           [len(re.findall(r"^### ", s, re.M)) for s in _sections(ENGLISH)]  # fmt: skip


def test_the_timings_table_lists_every_notebook_and_links_its_zh_cn_twin():
    numbers = [name.split("_")[0] for name in NOTEBOOKS]
    assert {"03b", "03c", "04b", "04c", "10"} <= set(numbers)
    english_rows, chinese_rows = _rows(_sections(ENGLISH)[0]), _rows(_sections(CHINESE)[0])
    assert [row[0] for row in english_rows] == [row[0] for row in chinese_rows] == numbers
    for name, row in zip(NOTEBOOKS, chinese_rows, strict=True):
        links = re.findall(r"\]\(([^)]+)\)", row[1])
        assert links == [name], (row[0], links)  # the twin, in the same folder as this guide


def test_the_timings_figures_equal_the_english_table():
    english, chinese = _timings(ENGLISH), _timings(CHINESE)
    assert chinese == english
    assert english["00"] == [["5"], ["2500"], ["22"], ["2"], ["55"]]  # the parser reads real figures
    assert english["10"][3] == ["8", "1"] and english["10"][4] == ["160"]


def test_the_other_figures_equal_the_english_ones():
    """The plans' clock times and sections, the live-coding rows, notebook 10's minutes, the course totals."""
    def plan_times(text: str) -> list[str]:
        return re.findall(r"^\| (\d:\d\d–\d:\d\d) \|", _sections(text)[1], re.M)

    assert plan_times(CHINESE) == plan_times(ENGLISH) and len(plan_times(ENGLISH)) == 14

    def sections_named(text: str) -> list[str]:
        return re.findall(r"§\s?\d+(?:–\d+)?", text)

    assert sections_named(CHINESE) == sections_named(ENGLISH)

    def live_notebooks(text: str) -> list[str]:
        return [line.split("|")[1].strip() for line in _sections(text)[2].splitlines() if re.match(r"\| \d\d ", line)]

    assert live_notebooks(CHINESE) == live_notebooks(ENGLISH) == ["00", "02", "03", "04", "05", "06", "07", "10"]

    def prose_figures(text: str) -> list[str]:
        timing = _sections(text)[0]
        after_table = timing[timing.rindex("| 10 |"):].split("\n", 1)[1]
        return [n for n in NUMBER.findall(after_table)]

    assert prose_figures(CHINESE) == prose_figures(ENGLISH)
    assert "40" in prose_figures(ENGLISH) and "17" in prose_figures(ENGLISH)


def test_commands_and_code_are_unchanged():
    def blocks(text: str, comments: bool = True) -> list[str]:
        found = re.findall(r"```bash\n(.*?)```", text, re.S)
        return found if comments else [re.sub(r"[ \t]+#[^\n]*", "", block) for block in found]

    # The commands are the English ones; only their comments are translated (as in the notebooks).
    assert blocks(CHINESE, comments=False) == blocks(ENGLISH, comments=False) and len(blocks(ENGLISH)) == 2
    assert "# 这样 make lab 就跳过安装这一步" in blocks(CHINESE)[1]
    spans = set(re.findall(r"`([^`\n]+)`", ENGLISH))
    missing = sorted(span for span in spans - set(re.findall(r"`([^`\n]+)`", CHINESE))
                     if "mybinder.org" not in span and "/git-pull?" not in span)  # fmt: skip
    assert missing == []


def test_its_binder_links_open_the_twins_and_are_checked_and_aimed(tmp_path):
    assert "notebooks/zh-CN/INSTRUCTOR.md" in binder_links.FILES
    assert binder_links.problems() == []
    opened = re.findall(r"mybinder\.org/\S+?urlpath=course/zh-CN/(\S+?\.ipynb)", CHINESE)
    assert [Path(path).name for path in opened] == NOTEBOOKS
    assert [path for path in opened if (REPO / "notebooks" / "zh-CN" / Path(path).name).exists()] == \
           [f"notebooks/zh-CN/{name}" for name in NOTEBOOKS if (REPO / "notebooks" / "zh-CN" / name).exists()]  # fmt: skip
    for name in binder_links.FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    for notebook in [*(REPO / "notebooks").glob("[0-9]*.ipynb"), *(REPO / "notebooks" / "zh-CN").glob("[0-9]*.ipynb")]:
        (tmp_path / notebook.relative_to(REPO)).touch()
    binder_links.aim("course-org/tool-calling", tmp_path)
    aimed = (tmp_path / "notebooks" / "zh-CN" / "INSTRUCTOR.md").read_text(encoding="utf-8")
    assert "OWNER/REPO" not in aimed and aimed.count("/gh/course-org/tool-calling/HEAD?") == len(NOTEBOOKS)


def test_the_guide_uses_the_glossary_and_is_linked_from_the_chinese_readme():
    glossary = (REPO / "notebooks" / "zh-CN" / "GLOSSARY.md").read_text(encoding="utf-8")
    banned = [word for line in glossary.splitlines() if line.startswith("| ") and line.count("|") == 5
              for word in line.split("|")[3].strip().split("、") if word and word != "不要写作"]  # fmt: skip
    assert {"规范", "审批", "验证", "最终答案"} <= set(banned)
    assert [word for word in banned if word in CHINESE] == []
    readme = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "](notebooks/zh-CN/INSTRUCTOR.md)" in readme
    for target in re.findall(r"\]\((?!https?:)([^)#]+)", CHINESE):
        assert (CHINESE_PATH.parent / target).resolve().relative_to(REPO)
        assert target.endswith(".ipynb") or (CHINESE_PATH.parent / target).exists(), target


@pytest.mark.parametrize("figure", ["| 04 | feedback loop | 5 s | 2 100 | 21 | 2 | ~60 min |",
                                    "| 04 | feedback loop | 5 s | 2 100 | 22 | 2 | ~55 min |"])
def test_a_changed_english_figure_is_caught(figure):
    changed = ENGLISH.replace("| 04 | feedback loop | 5 s | 2 100 | 21 | 2 | ~55 min |", figure)
    assert changed != ENGLISH
    assert _timings(changed) != _timings(CHINESE)
