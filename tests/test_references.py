"""Every pointer into the course leads somewhere real: "notebook 06b", "notebook 05, section 6",
"06b §6", "section 3" / "§3" (in a notebook: that notebook), "笔记本 06b 第 6 节", "第 3 节", ranges
("sections 4–5", "Notebooks 00–07") and lists ("notebooks 02 and 03") name a notebook that exists and a
numbered heading (`## 6. …`) it has.

Read in both editions: every cell of every notebook, the guides a learner or instructor opens
(README, INSTRUCTOR, GLOSSARY), the interview cards (fixtures/interview_cards*.json) and the strings of
course_lib (check messages, drills, cards' code), where only pointers that name their notebook count.
A 简体中文 cell points where its English cell does, and so does each Chinese card. Counts the prose
states beside a check are the counts the check computes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
EDITIONS = {"en": NOTEBOOKS, "zh-CN": NOTEBOOKS / "zh-CN"}
GUIDES = [REPO / "README.md", REPO / "README.zh-CN.md", *sorted(NOTEBOOKS.glob("*.md")),
          *sorted((NOTEBOOKS / "zh-CN").glob("*.md"))]  # fmt: skip
CARDS = [REPO / "fixtures" / "interview_cards.json", REPO / "fixtures" / "interview_cards.zh-CN.json"]

_NB = r"\d\d[a-c]?(?!\w|\.\d)"
_NUM = r"\d+(?!\d|\.\d)"  # a course section is a whole number; "§3.1" is an RFC's
_MORE_NB = rf"(?:\s*(?:[–-]|,|、|和|与|或| and | or | to )\s*{_NB})*"
_MORE_NUM = rf"(?:\s*(?:[–-]|,|、|和|与|或| and | or | to )\s*(?:§\s*)?{_NUM})*"
NOTEBOOK = re.compile(rf"(?:\b[Nn]otebooks? |笔记本 ?)(?P<nbs>{_NB}{_MORE_NB})"
                      rf"(?:(?:,? (?:[Ss]ections? |§ ?)| ?§ ?)(?P<secs>{_NUM}{_MORE_NUM})"
                      rf"|(?: ?的|[，,] ?)? ?第 ?(?P<zh>{_NUM}{_MORE_NUM}) ?节)?")
# "06b §6", "05 §1–3": a notebook number right before a §, not preceded by a word or a § (RFC 6750 §3.1)
SHORT = re.compile(rf"(?<![\w.§/])(?P<nbs>{_NB}) ?§ ?(?P<secs>{_NUM}{_MORE_NUM})")
BARE = re.compile(rf"(?<![\w§])(?:[Ss]ections? |§ ?)(?P<secs>{_NUM}{_MORE_NUM})|第 ?(?P<zh>{_NUM}{_MORE_NUM}) ?节")
# A pointer the source wraps over two lines ("notebook\n02", "notebooks 05\nand 06") reads as one.
WRAPPED = re.compile(r"(?:(?<=otebook)|(?<=otebooks)|(?<=ection)|(?<=ections)|(?<=§))[ \t]*\n[ \t]*"
                     r"|(?<=\d)[ \t]*\n[ \t]*(?=(?:and|or|to|[–-]) ?§? ?\d)")
HEADING = re.compile(r"^#{1,6} (\d+)\. ", re.M)
RFC = re.compile(r"\b(?:RFC|SEP|spec|ECMA|ISO)[ -]?\d*[^.;|]{0,12}$")


@dataclass(frozen=True)
class Ref:
    """One pointer: the notebook it names (None: the notebook the text is in) and its sections."""

    notebook: str | None
    sections: tuple[int, ...]
    text: str


def _numbers(spec: str) -> list[str]:
    """'4–5' → 4, 5; '02 and 03' → 02, 03; '3、§6' → 3, 6 (a range's ends are what must exist)."""
    return re.findall(r"\d\d[a-c]?(?!\w)|\d+", spec)


def references(text: str, *, bare: bool) -> list[Ref]:
    """The pointers in `text`, line by line. `bare`: count "section 3", "§3", "第 3 节" without a
    notebook too (they point into the notebook the text is in). Outside a notebook a bare "§6" right
    after "05 §1–3, " continues that notebook (as the guides write "05 §1–3, §6"); elsewhere it is
    not counted: RFC and spec sections ("RFC 6750 §3.1") are never pointers."""
    found: list[Ref] = []
    for line in WRAPPED.sub(" ", text).splitlines():
        taken: list[tuple[int, int]] = []
        last: str | None = None
        for match in sorted([*NOTEBOOK.finditer(line), *SHORT.finditer(line)], key=lambda m: m.start()):
            if any(a <= match.start() < b for a, b in taken):
                continue
            taken.append(match.span())
            notebooks = _numbers(match["nbs"])
            sections = tuple(int(n) for n in _numbers(match.groupdict().get("secs") or match.groupdict().get("zh") or ""))
            for notebook in notebooks:
                found.append(Ref(notebook, sections if notebook == notebooks[-1] else (), match[0]))
            last = notebooks[-1]
        for match in BARE.finditer(line):
            if any(a <= match.start() < b for a, b in taken) or RFC.search(line[: match.start()]):
                continue
            sections = tuple(int(n) for n in _numbers(match["secs"] or match["zh"]))
            before = [span for span in taken if span[1] <= match.start()]
            if bare:
                found.append(Ref(None, sections, match[0]))
            elif before and re.fullmatch(r"[,、，;；\s]*", line[before[-1][1]: match.start()]) and last:
                found.append(Ref(last, sections, match[0]))
    return found


@cache
def notebook_files(edition: str = "en") -> dict[str, Path]:
    """'06b' → its file."""
    return {path.name.split("_")[0]: path for path in sorted(EDITIONS[edition].glob("[0-9]*.ipynb"))}


@cache
def section_numbers(path: Path) -> frozenset[int]:
    """The numbers of a notebook's numbered headings (`## 6. …` → 6)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return frozenset(int(n) for c in cells if c["cell_type"] == "markdown" for n in HEADING.findall("".join(c["source"])))


def unresolved(refs: list[Ref], here: str | None, edition: str = "en") -> list[str]:
    """The pointers among `refs` that lead nowhere, read from notebook `here` (None: from a guide)."""
    wrong = []
    for ref in refs:
        notebook = ref.notebook or here
        path = notebook_files(edition).get(notebook or "")
        if path is None:
            wrong.append(f"{ref.text!r}: no notebook {notebook}")
        elif missing := [n for n in ref.sections if n not in section_numbers(path)]:
            wrong.append(f"{ref.text!r}: {path.name} has no section {', '.join(map(str, missing))}")
    return wrong


def cell_texts(path: Path) -> dict[str, str]:
    """Cell id → source, every cell (a code cell's comments and printed words point too)."""
    return {c["id"]: "".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]}


def _card_texts(path: Path) -> dict[int, str]:
    """Card number → all its prose (question, answers, follow-ups)."""
    cards = json.loads(path.read_text(encoding="utf-8"))["cards"]
    return {c["number"]: json.dumps({k: v for k, v in c.items() if k not in ("see", "code")}, ensure_ascii=False)
            for c in cards}  # fmt: skip


# ---- the reader itself ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("(notebook 06, section 9)", [("06", (9,))]),
    ("Notebook 06b §6 shows those requests", [("06b", (6,))]),
    ("the agent's tools (09b §2) and (09b §4)", [("09b", (2,)), ("09b", (4,))]),
    ("| 2:05–3:00 | 04 §3–12; 05 §1–3, §6 and the common mistake |", [("04", (3, 12)), ("05", (1, 3, 6))]),
    ("what notebooks 02 and 03 did by hand", [("02", ()), ("03", ())]),
    ("Notebooks 00–07 followed one read", [("00", ()), ("07", ())]),
    ("笔记本 06b 第 7 节运行它；第 3 节", [("06b", (7,))]),
    ("笔记本 00–09b 的全部内容", [("00", ()), ("09b", ())]),
    ("RFC 6750 (§3.1) says; RFC 8259 §6 lets", []),
    ("the section 2 table; and the protocol error of section 3", []),
])  # fmt: skip
def test_the_reader_finds_each_form_of_pointer(text, expected):
    assert [(r.notebook, r.sections) for r in references(text, bare=False)] == expected


def test_bare_sections_point_into_the_notebook_they_are_in():
    refs = references("*Hint:* section 5; sections 4–5 do not; §1 `/etc/passwd`; 见第 6–7 节。Section 6 lets", bare=True)
    assert [(r.notebook, r.sections) for r in refs] == [(None, (5,)), (None, (4, 5)), (None, (1,)), (None, (6, 7)),
                                                        (None, (6,))]  # fmt: skip


def test_a_pointer_to_a_section_or_notebook_that_does_not_exist_is_reported():
    refs = references("(notebook 06, section 9); notebook 11; 06b §6", bare=False)
    assert unresolved(refs, None) == ["'notebook 06, section 9': 06_approval_and_side_effects.ipynb has no section 9",
                                      "'notebook 11': no notebook 11"]  # fmt: skip


# ---- the course's pointers -----------------------------------------------------------------------------


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_pointer_in_the_notebooks_leads_to_a_real_heading(edition):
    wrong = {f"{path.name} {cell}": problems
             for here, path in notebook_files(edition).items()
             for cell, text in cell_texts(path).items()
             if (problems := unresolved(references(text, bare=True), here, edition))}  # fmt: skip
    assert wrong == {}


@pytest.mark.parametrize("path", GUIDES + CARDS, ids=lambda p: p.name)
def test_every_pointer_in_the_guides_and_cards_leads_to_a_real_heading(path):
    text = path.read_text(encoding="utf-8")
    assert references(text, bare=False), "the reader found no pointer at all: has the wording changed?"
    assert unresolved(references(text, bare=False), None) == []


def test_every_pointer_in_course_lib_leads_to_a_real_heading():
    wrong = {str(path.relative_to(REPO)): problems for path in sorted((REPO / "course_lib").rglob("*.py"))
             if (problems := unresolved(references(path.read_text(encoding="utf-8"), bare=False), None))}  # fmt: skip
    assert wrong == {}


def test_each_chinese_cell_points_where_its_english_cell_does():
    differ = {}
    for here, path in notebook_files("en").items():
        twin = cell_texts(notebook_files("zh-CN")[here])
        for cell, text in cell_texts(path).items():
            english = sorted((r.notebook or here, r.sections) for r in references(text, bare=True))
            chinese = sorted((r.notebook or here, r.sections) for r in references(twin.get(cell, ""), bare=True))
            if english != chinese and cell in twin:
                differ[f"{path.name} {cell}"] = (english, chinese)
    assert differ == {}


def test_each_chinese_card_points_where_its_english_card_does():
    english, chinese = (_card_texts(path) for path in CARDS)
    differ = {number: (text, chinese[number]) for number, text in english.items()
              if sorted((r.notebook, r.sections) for r in references(text, bare=False))
              != sorted((r.notebook, r.sections) for r in references(chinese[number], bare=False))}  # fmt: skip
    assert list(differ) == []


# ---- counts the prose states ------------------------------------------------------------------------------


def _cell(notebook: str, cell: str, edition: str = "en") -> str:
    return cell_texts(notebook_files(edition)[notebook])[cell]


def test_05_exercise_1_says_how_many_cases_its_check_runs():
    from course_lib.exercises.nb05 import FAILURES, RETRY_CASES, _WHAT_ZH, failure_grid

    cases, failures = len(failure_grid(RETRY_CASES, _WHAT_ZH)), len(FAILURES)
    assert f"on {cases} cases: {failures} real failures" in _cell("05", "8a16f6fb")
    assert f"{cases} 个例子" in _cell("05", "8a16f6fb", "zh-CN") and f"{failures} 种真实失败" in _cell("05", "8a16f6fb", "zh-CN")


WORDS = {5: ("five", "五"), 6: ("six", "六"), 8: ("eight", "八"), 10: ("ten", "十"), 15: ("fifteen", "十五"),
         18: ("eighteen", "十八")}  # fmt: skip


def test_07_exercise_2_says_how_many_turns_its_check_plans():
    from course_lib.exercises.nb07 import LONGEST_TURN, plan_cases

    turns = len(plan_cases())
    assert f"runs it on {turns} turns: six" in _cell("07", "eedcdf56") and f"up to {LONGEST_TURN} reads" in _cell("07", "eedcdf56")
    assert f"在 {turns} 轮上运行它：先是你自己也可能写出的六轮" in _cell("07", "eedcdf56", "zh-CN")
    assert f"最多 {LONGEST_TURN} 个调用" in _cell("07", "eedcdf56", "zh-CN")


def test_06_exercise_1_says_how_many_pairs_its_check_runs():
    from course_lib.exercises.nb06 import PAIRS

    english, chinese = WORDS[len(PAIRS)]
    assert f"on {english} pairs of actions" in _cell("06", "8e7b614a") and f"在{chinese}对动作上" in _cell("06", "8e7b614a", "zh-CN")


def test_the_line_count_of_notes_txt_is_the_files():
    lines = len((REPO / "fixtures" / "workspace" / "notes.txt").read_text(encoding="utf-8").splitlines())
    for notebook, cell, english, chinese in [("02", "66ce359f", f"a surprise of {lines} lines", f"冒出 {lines} 行"),
                                              ("02", "44e3c215", f"{lines} lines", f"共 {lines} 行"),
                                              ("03b", "7f3cc563", f"all {lines} lines", f"全部 {lines} 行")]:  # fmt: skip
        assert english in _cell(notebook, cell) and chinese in _cell(notebook, cell, "zh-CN"), (notebook, cell)


def test_08_counts_the_explorers_panels():
    from course_lib.explorer import PANELS

    english, chinese = WORDS[len(PANELS)]
    for cell in ("c136f5ef", "b0b20c7e"):
        assert f"the {english} objects" in _cell("08", cell) and f"{chinese}个对象" in _cell("08", cell, "zh-CN")
    assert f"the {english} panels" in _cell("08", "d5364441") and f"{chinese}个面板" in _cell("08", "d5364441", "zh-CN")


def test_10_counts_the_cards():
    from course_lib.interview import load_cards

    cards = load_cards(lang="en")
    asked = sum(1 for card in cards if any("\u4e00" <= ch <= "\u9fff" for ch in card.source))  # the source's own questions
    assert f"Cards 1–{asked} hold the {WORDS[asked][0]} questions" in _cell("10", "05ef160b")
    assert f"cards {asked + 1}–{len(cards)} are the follow-ups" in _cell("10", "05ef160b")
    assert f"卡片 1–{asked} 是面试官关于工具调用问得最多的{WORDS[asked][1]}个问题" in _cell("10", "05ef160b", "zh-CN")
    assert f"all {WORDS[len(cards)][0]}" in _cell("10", "8532811d") and f"{WORDS[len(cards)][1]}张都过一遍" in _cell("10", "8532811d", "zh-CN")
