"""Notebook 10, drill 7: diagnose the trace, in either edition's words.

`check_diagnoses(answers)`: `{trace name: (row, first check)}` for every recorded broken trace of
`course_lib.drills`, judged against its `ANSWERS`. The row and the check are read as a learner
writes them in either edition: the row by its letter (`"D"`, `"d"`, a full-width `"Ｄ"`, `"D 行"`,
`"row D"`) or by its symptom (the course's English or the source's own Chinese, `Row.text`); the
check by its name in the failure table (`"call trace"`), by its Chinese name
(`failure_table.CHECKS_ZH`: `"调用轨迹"`), or as the zh-CN table prints it (`"call trace（调用轨迹）"`).
What it explains (the evidence, why this check first, why not a tempting row) comes from
`drills.ANSWERS` in the edition's language.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any

from course_lib.drills import ANSWERS, EXERCISE_TRACES
from course_lib.exercises import failed, not_answered, passed
from course_lib.exercises.answers import as_dict, shown, type_name
from course_lib.exercises.guard import guard_checks
from course_lib.failure_table import CHECKS_ZH, DIAGNOSIS_ROWS, ROWS
from course_lib.lang import say


def _plain(text: str) -> str:
    """`text` as the check compares it: full-width forms folded (NFKC), spaces collapsed, lower case."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).lower()


_ROW_WORDS = re.compile(r"^(?:row\s*)?([a-z])(?:\s*(?:行|row))?$")
"""A row by its letter: `d`, `row d`, `d 行`, `d row` (after `_plain`)."""
_BY_SYMPTOM = {_plain(text): row.letter for row in DIAGNOSIS_ROWS for text in (row.symptom, row.source)}
_CHECK_NAMES = {_plain(name): name for row in DIAGNOSIS_ROWS for name in row.checks}
_CHECK_NAMES |= {_plain(CHECKS_ZH.get(name, name)): name for row in DIAGNOSIS_ROWS for name in row.checks}
_GLOSSED = re.compile(r"^(.+?)\s*\((.+)\)$")
"""`call trace (调用轨迹)`: a check and its gloss, as the zh-CN table prints them (after `_plain`)."""


def read_row(text: str) -> str | None:
    """The row letter `text` names (by letter or by symptom, in either language), or None."""
    plain = _plain(text)
    if match := _ROW_WORDS.match(plain):
        return match.group(1).upper()
    return _BY_SYMPTOM.get(plain)


def read_check(text: str) -> str | None:
    """The failure table's name of the check `text` names (in English, in Chinese, or both as the
    zh-CN table prints them), or None."""
    plain = _plain(text)
    if plain in _CHECK_NAMES:
        return _CHECK_NAMES[plain]
    if match := _GLOSSED.match(plain):
        names = {_CHECK_NAMES.get(part.strip()) for part in match.groups()}
        if len(names) == 1 and None not in names:
            return names.pop()
    return None


def _glossed(check: str) -> str:
    """A check as the edition shows it: `'call trace'`, or in the zh-CN edition `'call trace'（调用轨迹）`."""
    gloss = CHECKS_ZH.get(check, check)
    return say("{check!r}", "{check!r}（{gloss}）", check=check, gloss=gloss) if gloss != check else repr(check)


def _row(letter: str) -> str:
    """`row D (the tool succeeded but the answer is wrong)`, in the edition's language."""
    return say("row {letter} ({symptom})", "{letter} 行（{symptom}）", letter=letter, symptom=ROWS[letter].text)


def check_diagnoses(answers: Any) -> bool:
    """Check `{trace name: (row, first check)}` for every exercise trace; explain the first wrong
    one: the evidence in the trace, and why this check comes first."""
    example = say('("A", "call trace") as for the worked example', '("A", "call trace") 或 ("A", "调用轨迹")，如同讲解过的例子')  # no exercise's answer
    if not_answered(answers):
        return failed(say("Not answered yet: fill in answers = {{trace name: (row letter, first check)}} and run the "
                          "cell again.",
                          "还没有作答：填写 answers = {{轨迹名: (行字母, 先检查的项)}}，再运行这个单元格。"))
    given_all = as_dict(answers)
    if given_all is None:
        return failed(say("answers must be a dict {{trace name: (row letter, first check)}}; you gave {kind} {value}.",
                          "answers 必须是一个 dict {{轨迹名: (行字母, 先检查的项)}}；你给的是 {kind} {value}。",
                          kind=type_name(answers), value=shown(answers)))
    if unknown := [name for name in given_all if name not in ANSWERS]:
        close = difflib.get_close_matches(unknown[0], list(ANSWERS), n=1) if isinstance(unknown[0], str) else []
        near = say(" (did you mean {name!r}?)", "（你是不是想写 {name!r}？）", name=close[0]) if close else ""
        return failed(say("{name} is not a trace{near}; the traces are: {traces}.",
                          "{name} 不是一条轨迹{near}；轨迹有：{traces}。",
                          name=shown(unknown[0]), near=near, traces=", ".join(EXERCISE_TRACES)))
    # the worked example of section 4 may be answered too: it is judged like the others, never required
    for name in [*(n for n in ANSWERS if n not in EXERCISE_TRACES and n in given_all), *EXERCISE_TRACES]:
        given = given_all.get(name, ...)
        if not_answered(given) or (isinstance(given, tuple | list) and any(part is ... for part in given)):
            return failed(say("Not answered yet: {name} still needs (row letter, first check), e.g. {example}.",
                              "还没有作答：{name} 还需要 (行字母, 先检查的项)，例如 {example}。", name=name, example=example))
        if not (isinstance(given, tuple | list) and len(given) == 2 and all(isinstance(part, str) for part in given)):
            return failed(say("{name}: give a pair (row letter, first check), e.g. {example}; you gave {value}.",
                              "{name}：请给出一对 (行字母, 先检查的项)，例如 {example}；你给的是 {value}。",
                              name=name, example=example, value=shown(given)))
        expected = ANSWERS[name]
        letter = read_row(given[0])
        if letter is None or letter not in ROWS:
            return failed(say("{name}: {row} is not a row; the rows are A–H (show_diagnosis_table()), by letter or by "
                              "symptom.",
                              "{name}：{row} 不是表里的行；行是 A–H（show_diagnosis_table()），写字母或写症状都可以。",
                              name=name, row=shown(given[0])))
        if letter != expected.row:
            why = expected.confusions.get(letter) or say("look at the evidence again: {evidence}",
                                                         "再看一遍证据：{evidence}", evidence=expected.evidence)
            return failed(say("{name}: not {row}: {why}.", "{name}：不是 {row}：{why}。", name=name, row=_row(letter),
                              why=why))
        check = read_check(given[1])
        if check is None or check not in ROWS[letter].checks:
            checks = ROWS[letter].checks
            return failed(say("{name}: {check} is not one of row {letter}'s checks: {checks}.",
                              "{name}：{check} 不是 {letter} 行要检查的项；它们是：{checks}。",
                              name=name, check=shown(given[1]), letter=letter,
                              checks=say(", ".join(checks), "、".join(map(_glossed, checks)))))
        if check != expected.check:
            return failed(say("{name}: row {letter} is right, but check {want} first, not {got}: {why}.",
                              "{name}：{letter} 行是对的，但应该先检查 {want}，不是 {got}：{why}。",
                              name=name, letter=letter, want=_glossed(expected.check), got=_glossed(check),
                              why=expected.why_first))
    return passed(say("all {n} traces diagnosed: the right row and the right first check for each.",
                      "{n} 条轨迹全部诊断完毕：每一条都选对了行，也选对了先检查的项。", n=len(EXERCISE_TRACES)))


def _diagnoses_solution() -> dict[str, tuple[str, str]]:
    return {name: (ANSWERS[name].row, ANSWERS[name].check) for name in EXERCISE_TRACES}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
