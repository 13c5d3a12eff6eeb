"""A Chinese learner may answer in the glossary's words: every check that reads a kind of object
(rule / value / result) or a row of the failure table accepts the Chinese term of
`notebooks/zh-CN/GLOSSARY.md` (and of `course_lib.failure_table`) beside the English, in both
editions, and judges it exactly as the English."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course_lib.drills import SOLUTION as DIAGNOSES
from course_lib.exercises.nb00 import KINDS, KINDS_ZH, SOLUTIONS, check_kinds
from course_lib.exercises.nb08 import GROUP_OF_NAME, check_tail_parse_only
from course_lib.exercises.nb10 import check_diagnoses
from course_lib.failure_table import CHECKS_ZH, DIAGNOSIS_ROWS

GLOSSARY = Path(__file__).resolve().parents[2] / "notebooks" / "zh-CN" / "GLOSSARY.md"


def glossary_term(english: str) -> str:
    """The 中文 column of the glossary's row for `english`."""
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) >= 2 and cells[0].strip("*") == english:
            return cells[1]
    raise AssertionError(f"{english!r} is not in the glossary")


def test_the_checks_use_the_glossary_s_terms_for_the_three_kinds():
    assert KINDS_ZH == {kind: glossary_term(kind) for kind in KINDS}
    assert {zh: GROUP_OF_NAME[zh] for zh in KINDS_ZH.values()} == {zh: kind for kind, zh in KINDS_ZH.items()}


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_check_kinds_accepts_the_chinese_kinds(corpus, lang):
    chinese = {name: KINDS_ZH[kind] for name, kind in SOLUTIONS["check_kinds"]().items()}
    returned, printed = corpus.run(check_kinds, chinese, lang)
    assert returned is True and printed.startswith("✓ "), printed
    mixed = {name: (KINDS_ZH[kind] + "。" if i % 2 else f" {kind.upper()} ")
             for i, (name, kind) in enumerate(SOLUTIONS["check_kinds"]().items())}  # fmt: skip
    assert corpus.run(check_kinds, mixed, lang)[0] is True


def test_a_wrong_chinese_kind_is_judged_like_the_english_one(corpus):
    wrong = {**{name: KINDS_ZH[kind] for name, kind in SOLUTIONS["check_kinds"]().items()},
             "tools/list: inputSchema": "值"}  # fmt: skip
    corpus.wrong(check_kinds, wrong, ["'tools/list: inputSchema' is a rule, not a value"], ["是规则，不是值"])
    forbidden = {**SOLUTIONS["check_kinds"](), "tools/list: inputSchema": "规范"}  # the glossary's "do not write" form
    corpus.wrong(check_kinds, forbidden, ["'规范' is not a kind"], ["'规范' 不是一种种类"])


def test_a_kind_named_where_a_panel_belongs_is_told_its_panels_in_chinese_too(corpus):
    corpus.wrong(check_tail_parse_only, {"值"}, ["'值' is a kind of object, not a panel"],
                 ["'值' 是对象的种类，不是面板", "arguments, parsed, mcp_arguments"])


def test_every_check_of_the_failure_table_is_accepted_by_its_chinese_name(corpus):
    """The failure table's names, read through `failure_table.CHECKS_ZH` (what the zh-CN table shows)."""
    assert {check for row in DIAGNOSIS_ROWS for check in row.checks} == set(CHECKS_ZH)
    assert all(re.search("[\u4e00-\u9fff]", zh) or zh == check for check, zh in CHECKS_ZH.items())
    corpus.right(check_diagnoses, {name: (row, CHECKS_ZH[check]) for name, (row, check) in DIAGNOSES.items()})


def test_a_wrong_chinese_check_is_named_with_both_names(corpus):
    answers = {**DIAGNOSES, "blind_retry": ("F", "状态查询")}
    corpus.wrong(check_diagnoses, answers, ["check 'idempotency key' first, not 'status query'"],
                 ["应该先检查 'idempotency key'（幂等键），不是 'status query'（状态查询）"])
    answers = {**DIAGNOSES, "injection": ("H", "范围")}
    corpus.wrong(check_diagnoses, answers, ["'范围' is not one of row H's checks"],
                 ["'范围' 不是 H 行要检查的项", "'resource scope'（资源范围）"])
