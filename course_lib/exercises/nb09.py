"""Checks for notebook 09 (the capstone: the notes assistant and its evaluation).

- `check_citation_correct(fn)`: the learner's `citation_correct(answer, read_paths) -> bool` is run
  first on a few cases chosen so that each usual mistake meets the case that explains it, then on
  every answer of the evaluation (and a crafted one citing three notes) with the notes it read,
  without each note it cites, with only the notes it cites and with none; the right verdict comes from the library's own parsing
  (`evaluation.cited_sources`): correct exactly when the answer cites at least one note and every
  note it cites — in its `Sources:` line or after a quoted sentence — was actually read.
- `check_tool_selection_accuracy(fn)`: the learner's `tool_selection_accuracy(traces) -> float`
  is run on chosen variants of the real traces, then on every trace alone, on every set of the
  three tools called for every set a question expects (the whole space the metric is defined on),
  and on the whole evaluation in both orders; the right value comes from `evaluation.tool_selection`.

Whatever the learner's function does — raise, return None or a string, take the wrong arguments,
change the traces it is given — the check answers with one line naming it, never a traceback.

Both checks run the offline model, whatever backend the notebook uses: a check must give the same
verdict on every machine. They run the edition's own evaluation: in the zh-CN edition the Chinese
questions over the Chinese notes, whose answers cite in a `来源：a、b` line, and crafted answers in the
same form. Every message the checks write themselves follows the edition's language (`course_lib.lang.say`).
"""

from __future__ import annotations

import inspect
import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations
from typing import Any

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.lang import say

_LEARNER_ERRORS = (Exception, SystemExit)  # whatever the learner's function raises, except Ctrl-C


def _shown(value: Any) -> str:
    """repr(value), or its type's name when its own repr fails (a check never shows a traceback)."""
    try:
        text = repr(value)
    except _LEARNER_ERRORS:
        return f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:79] + "…"


def _error(error: BaseException) -> str:
    try:
        return str(error)
    except _LEARNER_ERRORS:
        return ""


def _takes(fn: Callable[..., Any], count: int) -> bool:
    """Whether `fn` can be called with `count` positional arguments (True when Python cannot tell)."""
    try:
        inspect.signature(fn).bind(*range(count))
    except TypeError:
        return False
    except (ValueError, RuntimeError):  # no signature to read (some builtins): let the call decide
        return True
    return True


def _traces() -> tuple[Any, ...]:
    """Every evaluation question of the running edition, run once on the offline model."""
    from course_lib.lang import language

    return _edition_traces(language())


@lru_cache(maxsize=2)
def _edition_traces(edition: str) -> tuple[Any, ...]:
    """The edition's questions over its notes (the zh-CN edition asks in Chinese over the Chinese
    notes), run once (cached: the runs are deterministic)."""
    from course_lib.evaluation import edition_notes, load_questions, questions_file, run_eval
    from course_lib.exercises.offline import offline_client

    questions = load_questions(questions_file(edition))
    with offline_client() as client:
        return tuple(run_eval(questions, client=client, root=edition_notes(edition)))


def _by_id() -> dict[str, Any]:
    return {t.question.id: t for t in _traces()}


def _reference_citation(answer: str, read_paths: set[str]) -> bool:
    """The verdict the exercise defines (notebook 09, Exercise 1): a path in a `Sources:` line, or in
    the `[path]` / `[path:line]` after a quoted sentence, is a citation; every one must have been read.
    Written once, as the reference solution; the evaluation's own reader (`evaluation.cited_sources`)
    reads more forms (markdown, `(path, line 4)`) and keeps only note-shaped paths, so it is not the
    exercise's rule."""
    return _citation_solution(answer, read_paths)


# ---- exercise 1: citation_correct -----------------------------------------------------------------

_SOURCES_LINE = re.compile(r"^(?:Sources:|来源：).*$", re.M)
READ_ONE = {"/notes/retries.md"}
CRAFTED = {
    "two sources, both read": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md]\n"
        "- The same key returns the stored result. [/notes/idempotency.md]\n\n"
        "Sources: /notes/retries.md, /notes/idempotency.md",
        {"/notes/retries.md", "/notes/idempotency.md"}),
    "an answer from memory that cites a note nobody read": (
        "Freeze the backbone, then train the head with a small learning rate.\n\nSources: /notes/strict-mode.md", set()),
    "two notes read, only one cited (the other was a stub)": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md]\n\nSources: /notes/retries.md",
        {"/notes/retries.md", "/notes/workflow-vs-agent.md"}),
    "a source named by its prefix only (/notes/retries is not /notes/retries.md)": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md]\n\nSources: /notes/retries",
        READ_ONE),
    "a quoted sentence tagged with a note that was never read": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md]\n"
        "- Writes need an idempotency key. [/notes/idempotency.md]\n\nSources: /notes/retries.md",
        READ_ONE),
    "three sources, all read": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md]\n"
        "- The same key returns the stored result. [/notes/idempotency.md]\n"
        "- A write runs only after a person approved it. [/notes/approval.md]\n\n"
        "Sources: /notes/retries.md, /notes/idempotency.md, /notes/approval.md",
        {"/notes/retries.md", "/notes/idempotency.md", "/notes/approval.md"}),
    "quoted sentences cited with their lines ([path:3], [path:2-4])": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md:3]\n"
        "- The same key returns the stored result. [/notes/idempotency.md:2-4]\n\n"
        "Sources: /notes/retries.md, /notes/idempotency.md",
        {"/notes/retries.md", "/notes/idempotency.md"}),
    "a quoted sentence cited with its line, from a note never read": (
        "From your notes:\n- Retry only failures that can recover. [/notes/retries.md:3]\n"
        "- Writes need an idempotency key. [/notes/idempotency.md:5]\n\nSources: /notes/retries.md",
        READ_ONE),
}  # fmt: skip
"""label → (answer, paths read): crafted answers; the verdict still comes from the reference."""
CRAFTED_ZH = {
    "two sources, both read": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md]\n"
        "- 同一个键返回已存的结果。 [/notes/idempotency.md]\n\n"
        "来源：/notes/retries.md、/notes/idempotency.md",
        {"/notes/retries.md", "/notes/idempotency.md"}),
    "an answer from memory that cites a note nobody read": (
        "先冻结主干网络，再用较小的学习率训练分类头。\n\n来源：/notes/strict-mode.md", set()),
    "two notes read, only one cited (the other was a stub)": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md]\n\n来源：/notes/retries.md",
        {"/notes/retries.md", "/notes/workflow-vs-agent.md"}),
    "a source named by its prefix only (/notes/retries is not /notes/retries.md)": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md]\n\n来源：/notes/retries",
        READ_ONE),
    "a quoted sentence tagged with a note that was never read": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md]\n"
        "- 写入需要一个幂等键。 [/notes/idempotency.md]\n\n来源：/notes/retries.md",
        READ_ONE),
    "three sources, all read": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md]\n"
        "- 同一个键返回已存的结果。 [/notes/idempotency.md]\n"
        "- 只有在一个人批准之后，写入才会执行。 [/notes/approval.md]\n\n"
        "来源：/notes/retries.md、/notes/idempotency.md、/notes/approval.md",
        {"/notes/retries.md", "/notes/idempotency.md", "/notes/approval.md"}),
    "quoted sentences cited with their lines ([path:3], [path:2-4])": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md:3]\n"
        "- 同一个键返回已存的结果。 [/notes/idempotency.md:2-4]\n\n"
        "来源：/notes/retries.md、/notes/idempotency.md",
        {"/notes/retries.md", "/notes/idempotency.md"}),
    "a quoted sentence cited with its line, from a note never read": (
        "根据你的笔记：\n- 只重试那些能自己恢复的失败。 [/notes/retries.md:3]\n"
        "- 写入需要一个幂等键。 [/notes/idempotency.md:5]\n\n来源：/notes/retries.md",
        READ_ONE),
}  # fmt: skip
"""The same crafted answers as the zh-CN edition's assistant writes them (根据你的笔记： … 来源：a、b)."""


def _crafted_answers() -> dict[str, tuple[str, set[str]]]:
    from course_lib.lang import language

    return CRAFTED_ZH if language() == "zh-CN" else CRAFTED


HINTS = {
    "two sources, both read": ("split the Sources line at commas and strip the spaces.",
                               "在“、”处切开“来源：”行，并去掉空格。"),
    "an answer from memory that cites a note nobody read": ("every cited path must be in read_paths.",
                                                            "每个被引用的路径都必须在 read_paths 里。"),
    "a source named by its prefix only (/notes/retries is not /notes/retries.md)":
        ("compare whole paths (set membership), not substrings.", "比较完整的路径（集合成员关系），而不是子串。"),
    "a quoted sentence tagged with a note that was never read":
        ("the [path] after each quoted sentence is a citation too.", "每个引用句子后面的 [path] 也是引用。"),
    "three sources, all read": ("split the Sources line at every comma: an answer may cite more than two notes.",
                                "在每个“、”处切开“来源：”行：一个回答可以引用两篇以上的笔记。"),
    "two notes read, only one cited (the other was a stub)":
        ("a note read but not cited is fine: check cited ⊆ read, not read ⊆ cited.",
         "读过却没引用的笔记没有问题：检查 引用 ⊆ 读过，而不是 读过 ⊆ 引用。"),
    "quoted sentences cited with their lines ([path:3], [path:2-4])":
        ("the line comes after a colon: [/notes/retries.md:3] cites /notes/retries.md; cut the path at the colon.",
         "行号跟在冒号后面：[/notes/retries.md:3] 引用的是 /notes/retries.md；在冒号处把路径截断。"),
    "a quoted sentence cited with its line, from a note never read":
        ("a [path:line] after a quoted sentence is a citation too, its line aside.",
         "引用句子后面的 [path:行号] 也是引用，行号不算。"),
    "q01": ("take the paths from the line that starts with 'Sources:'.", "从以“来源：”开头的那一行取出路径。"),
    "q15": ("an answer that cites nothing cannot have correct citations: return False.",
            "什么都没引用的回答谈不上引用正确：返回 False。"),
    "q18": ("a path mentioned in the text (\"… is only a stub\") is not a citation; only Sources: and [path] are.",
            "正文里提到的路径（“… 只是一个草稿”）不是引用；只有“来源：”行和 [path] 才是。"),
    "q24": ("the Sources: line is not always the last line: a paragraph about the saved gap follows it.",
            "“来源：”行不一定是最后一行：它后面还有一段关于已保存缺口的话。"),
    "q23": ("cite the path actually read (/notes/archive/...), not the one that was NOT_FOUND.",
            "要看真正读过的路径（/notes/archive/...），而不是那个 NOT_FOUND 的路径。"),
}
"""label → (English, Chinese) hint for the case the learner's function judged wrongly."""

LABELS_ZH = {
    "two sources, both read": "两个来源，都读过",
    "an answer from memory that cites a note nobody read": "一个凭记忆的回答，引用了一篇没人读过的笔记",
    "two notes read, only one cited (the other was a stub)": "读了两篇笔记，只引用了一篇（另一篇是草稿）",
    "a source named by its prefix only (/notes/retries is not /notes/retries.md)":
        "一个只写了前缀的来源（/notes/retries 不是 /notes/retries.md）",
    "a quoted sentence tagged with a note that was never read": "一个引用句子标注了一篇从没读过的笔记",
    "three sources, all read": "三个来源，都读过",
    "quoted sentences cited with their lines ([path:3], [path:2-4])": "引用句子带着行号（[path:3]、[path:2-4]）",
    "a quoted sentence cited with its line, from a note never read": "一个带行号的引用句子，出自一篇从没读过的笔记",
    "q01 (one search, then two reads in one turn)": "q01（一次搜索，然后同一轮里两次读取）",
    "q13 and q14, with a search added to q13 (chit-chat that searched anyway)": "q13 和 q14，q13 加上了一次搜索（照样做了搜索的闲聊）",
    "q01 answered after the search alone (read_note never called)": "只搜索就回答的 q01（从没调用 read_note）",
    "q20 (the save was proposed, then rejected by the user)": "q20（提议了保存，随后被用户拒绝）",
    "q23 (read_note called twice: once NOT_FOUND, once ok)": "q23（read_note 调用了两次：一次 NOT_FOUND，一次 ok）",
    "all the real traces of the evaluation": "评估的全部真实轨迹",
}  # fmt: skip
"""The cases' labels in Chinese (the English label is the key)."""


@dataclass(frozen=True)
class CitationCase:
    """One answer the check judges: where it comes from (both languages), the answer, the paths read,
    and the hint for a wrong verdict (the key of `HINTS`, or None: said from the case itself)."""

    where_en: str
    where_zh: str
    answer: str
    read: frozenset[str]
    hint: str | None = None

    def where(self) -> str:
        return say(self.where_en, self.where_zh)


def _crafted(label: str) -> CitationCase:
    answer, read = _crafted_answers()[label]
    return CitationCase(f"the case '{label}'", f"在例子“{LABELS_ZH[label]}”上", answer, frozenset(read), label)


def _real(qid: str, read: set[str], left_out: str | None = None, only_cited: bool = False) -> CitationCase:
    answer = _by_id()[qid].answer or ""
    if left_out:
        return CitationCase(f"the real answer to {qid}, with {left_out} left out of read_paths",
                            f"在 {qid} 的真实回答上（read_paths 里去掉了 {left_out}）", answer, frozenset(read))  # fmt: skip
    if only_cited:
        return CitationCase(f"the real answer to {qid}, with read_paths = exactly the notes it cites",
                            f"在 {qid} 的真实回答上（read_paths 恰好是它引用的笔记）", answer, frozenset(read))  # fmt: skip
    if not read and _by_id()[qid].read:
        return CitationCase(f"the real answer to {qid}, with nothing read", f"在 {qid} 的真实回答上（什么都没读）",
                            answer, frozenset())  # fmt: skip
    return CitationCase(f"the real answer to {qid}", f"在 {qid} 的真实回答上", answer, frozenset(read),
                        qid if qid in HINTS else None)  # fmt: skip


def citation_cases() -> list[CitationCase]:
    """Every case the check runs, in order: the chosen ones (each usual mistake meets first the case
    whose hint explains it), then the sweep: every answer of the evaluation with the notes it read,
    without each note it cites, with exactly the notes it cites, and with nothing read."""
    from course_lib.evaluation import cited_sources

    real = _by_id()
    cases = [_crafted(label) for label in list(CRAFTED)[:3]]
    cases += [_real(qid, set(real[qid].read)) for qid in ("q01", "q15", "q18", "q24", "q23")]
    cases += [_crafted(label) for label in list(CRAFTED)[3:]]
    three = _crafted_answers()["three sources, all read"]
    cases += [CitationCase(f"the case 'three sources', with {path} left out of read_paths",
                           f"在例子“三个来源”上（read_paths 里去掉了 {path}）", three[0], frozenset(three[1] - {path}))
              for path in cited_sources(three[0])]  # fmt: skip
    for qid, trace in real.items():
        cited = cited_sources(trace.answer)
        cases.append(_real(qid, set(trace.read)))
        cases += [_real(qid, set(trace.read) - {path}, left_out=path) for path in cited if path in trace.read]
        if cited:
            cases.append(_real(qid, set(cited), only_cited=True))
        if trace.read:
            cases.append(_real(qid, set()))
    return cases


def _citation_hint(case: CitationCase, right: bool) -> str:
    """What the learner missed on `case`: its own hint, else what makes the verdict right there."""
    from course_lib.evaluation import cited_sources

    if case.hint is not None:
        return say(*HINTS[case.hint])
    cited = cited_sources(case.answer)
    if not cited:
        return say(*HINTS["q15"])
    unread = [path for path in cited if path not in case.read]
    if unread and unread[0] not in cited_sources("\n".join(_SOURCES_LINE.findall(case.answer))):
        return say(*HINTS["a quoted sentence tagged with a note that was never read"])
    if unread:
        return say("it cites {path}, which is not in read_paths: every cited note must have been read, not only the "
                   "first ones.", "它引用了 {path}，而它不在 read_paths 里：每篇被引用的笔记都必须读过，不只是前几篇。",
                   path=unread[0])  # fmt: skip
    return say("it cites {paths}, and every one of them is in read_paths: that is correct, whatever else was read.",
               "它引用了 {paths}，每一篇都在 read_paths 里：这就是正确的，不管还读了别的什么。", paths=", ".join(cited))


def _tags(answer: str, keep_line: bool = False) -> list[str]:
    """The paths in the `[path]` / `[path:line]` after each quoted sentence (`keep_line`: with the
    `:line` left on, as a learner who forgot to cut it reads them)."""
    found = re.findall(r"^- .+ \[(/[^\]\s:]+)(:[^\]\s]*)?\][ \t]*$", answer, re.M)
    return [path + line if keep_line else path for path, line in found]


def _sources_line(answer: str, last_only: bool = False) -> list[str]:
    """The paths of the `Sources:` (or `来源：`) lines, or of the last line only when it is one."""
    lines = answer.splitlines()[-1:] if last_only else answer.splitlines()
    return [p.strip() for line in lines for prefix in ("Sources:", "来源：") if line.startswith(prefix)
            for p in re.split("[,、]", line.removeprefix(prefix)) if p.strip()]  # fmt: skip


CITATION_MISTAKES: list[tuple[Callable[[str, set[str]], bool], tuple[str, str]]] = [
    (lambda a, r: any(p in r for p in _sources_line(a) + _tags(a)),
     ("every cited note must have been read: all of them, not any of them.",
      "每篇被引用的笔记都必须读过：要全部读过，而不是读过其中一篇就行。")),
    (lambda a, r: set(_sources_line(a) + _tags(a)) <= r, HINTS["q15"]),
    (lambda a, r: bool(_sources_line(a) + _tags(a)) and set(_sources_line(a) + _tags(a)) == r,
     HINTS["two notes read, only one cited (the other was a stub)"]),
    (lambda a, r: bool(_sources_line(a)) and set(_sources_line(a)) <= r,
     HINTS["a quoted sentence tagged with a note that was never read"]),
    (lambda a, r: bool(_sources_line(a, last_only=True)) and set(_sources_line(a, last_only=True)) <= r, HINTS["q24"]),
    (lambda a, r: bool(cited := re.findall(r"/notes/[\w./-]+?\.md", a)) and set(cited) <= r, HINTS["q18"]),
    (lambda a, r: bool(cited := _sources_line(a) + _tags(a)) and all(any(p in q for q in r) for p in cited),
     HINTS["a source named by its prefix only (/notes/retries is not /notes/retries.md)"]),
    (lambda a, r: bool(cited := _sources_line(a) + _tags(a, keep_line=True)) and set(cited) <= r,
     HINTS["quoted sentences cited with their lines ([path:3], [path:2-4])"]),
    (lambda a, r: bool(cited := _sources_line(a) + _tags(a)) and all(p in r for p in cited[:2]),
     ("every cited note must have been read, not only the first ones.", "每篇被引用的笔记都必须读过，不只是前几篇。")),
]  # fmt: skip
"""Wrong answers learners write, each as the function it amounts to, and what is wrong (English,
Chinese). When the learner's verdicts match one of them on every case so far, its message is the one
shown: it names the mistake, not only the case."""


def _citation_mistake(fn: Callable[[str, set[str]], bool], seen: list[tuple[CitationCase, bool]]) -> tuple[str, str] | None:
    """The known mistake that gives every verdict in `seen` (the failing case last), if one does.
    When several do, the learner's function is also run on every case, and the mistake that agrees
    with it most often is named."""

    def gives(wrong: Callable[[str, set[str]], bool], verdicts: list[tuple[CitationCase, bool]]) -> bool:
        return all(wrong(case.answer, set(case.read)) == verdict for case, verdict in verdicts)

    candidates = [(wrong, message) for wrong, message in CITATION_MISTAKES if gives(wrong, seen)]
    if len(candidates) > 1:
        try:
            probes = [(case, fn(case.answer, set(case.read))) for case in citation_cases()]
        except _LEARNER_ERRORS:
            probes = []
        # the one that agrees with the learner's function on the most cases (the first, on a tie)
        agree = [sum(wrong(case.answer, set(case.read)) == verdict for case, verdict in probes) for wrong, _ in candidates]
        candidates = [candidates[agree.index(max(agree))]]
    return candidates[0][1] if candidates else None


def check_citation_correct(fn: Callable[[str, set[str]], bool]) -> bool:
    """Run `fn` on chosen and real answers (every answer of the evaluation, with several sets of notes
    read); name the first one it judges wrongly."""
    if not_answered(fn):
        return failed(unassigned("citation_correct", "citation_correct(answer, read_paths)"))
    if not callable(fn):
        return failed(say("Pass the function itself (citation_correct, without parentheses); you passed {fn}.",
                          "请传入函数本身（citation_correct，不带括号）；你传入的是 {fn}。", fn=_shown(fn)))
    if not _takes(fn, 2):
        return failed(say("citation_correct must take two arguments, (answer, read_paths); yours cannot be called "
                          "with two.", "citation_correct 必须接受两个参数 (answer, read_paths)；你的函数不能用两个参数调用。"))
    cases = citation_cases()
    seen: list[tuple[CitationCase, bool]] = []
    for case in cases:
        try:
            verdict = fn(case.answer, set(case.read))
        except _LEARNER_ERRORS as error:
            return failed(say("citation_correct raised {kind}: {error} on {where}.",
                              "citation_correct {where}抛出了 {kind}：{error}。",
                              kind=type(error).__name__, error=_error(error), where=case.where()))
        if verdict is ...:
            return failed(say("Not answered yet: citation_correct still returns ...; return True or False.",
                              "还没有作答：citation_correct 仍然返回 ...；请返回 True 或 False。"))
        if not isinstance(verdict, bool):
            return failed(say("citation_correct must return True or False; it returned {verdict} on {where}.",
                              "citation_correct 必须返回 True 或 False；它{where}返回了 {verdict}。",
                              verdict=_shown(verdict), where=case.where()))
        right = _reference_citation(case.answer, set(case.read))
        seen.append((case, verdict))
        if verdict != right:
            mistake = _citation_mistake(fn, seen)  # the mistake that gives all these verdicts, else what this case tests
            return failed(say("on {where} you said the citations are {said}, but they are {truth}: {hint}",
                              "{where}，你判断引用{said}，但实际上引用{truth}：{hint}",
                              where=case.where(), said=say("correct", "正确") if verdict else say("wrong", "有错"),
                              truth=say("correct", "正确") if right else say("not", "不正确"),
                              hint=say(*mistake) if mistake else _citation_hint(case, right)))  # fmt: skip
    return passed(say("all {n} answers judged right: only Sources: and [path] count, and every cited note must have "
                      "been read.", "{n} 个回答全部判断正确：只有“来源：”行和 [path] 算引用，而且每篇被引用的笔记都必须读过。",
                      n=len(cases)))  # fmt: skip


def _citation_solution(answer: str, read_paths: set[str]) -> bool:
    cited = set()
    for line in answer.splitlines():
        for prefix, separator in (("Sources:", ","), ("来源：", "、")):  # the English and the zh-CN assistant
            if line.startswith(prefix):
                cited |= {p.strip() for p in line.removeprefix(prefix).split(separator) if p.strip()}
        tag = re.fullmatch(r"- .+ \[(/[^\]\s:]+)(?::[^\]\s]*)?\]", line.strip())  # [path] or [path:line]
        if tag:
            cited.add(tag.group(1))
    return bool(cited) and cited <= set(read_paths)


# ---- exercise 2: tool selection accuracy from raw traces -----------------------------------------


@dataclass(frozen=True)
class SelectionCase:
    """One list of traces the check gives the learner's function: its label (both languages), the
    traces, and the hint for a wrong value when no known mistake explains it (English, Chinese)."""

    label_en: str
    label_zh: str
    traces: tuple[Any, ...]
    hint: tuple[str, str] = ("count the tasks whose set of tools equals the expected set, divided by the number of tasks.",
                             "数出工具集合等于预期集合的任务，再除以任务总数。")  # fmt: skip

    def label(self) -> str:
        return say(self.label_en, self.label_zh)


def _fresh(trace: Any) -> Any:
    """A copy of `trace` the learner's function may change without changing the next case."""
    return replace(trace, calls=list(trace.calls), read=dict(trace.read), found=list(trace.found),
                   saved=[dict(r) for r in trace.saved])  # fmt: skip


TOOLS = ("search_notes", "read_note", "save_learning_gap")


def _chosen(label: str, traces: list[Any], hint: tuple[str, str]) -> SelectionCase:
    return SelectionCase(label, LABELS_ZH[label], tuple(traces), hint)


def selection_cases() -> list[SelectionCase]:
    """Every case the check runs, in order: chosen variants (each usual mistake meets first the case
    whose hint explains it), then the sweep: every real trace alone, every trace with each of its
    tools taken out and with one search more, and the whole evaluation in both orders."""
    real = _by_id()
    chat, other_chat, q01 = real["q13"], real["q14"], real["q01"]
    searched_chat = replace(chat, calls=real["q15"].calls)
    search_only = replace(q01, calls=[c for c in q01.calls if c.name == "search_notes"])
    cases = [
        _chosen("q01 (one search, then two reads in one turn)", [q01],
                ("compare the set of server tool names called (call.name) with set(question.expected_tools).",
                 "把调用过的服务器工具名集合（call.name）与 set(question.expected_tools) 比较。")),
        _chosen("q13 and q14, with a search added to q13 (chit-chat that searched anyway)", [searched_chat, other_chat],
                ("chit-chat expects no tool at all: any call makes the task wrong.",
                 "闲聊预期一个工具都不调用：任何一次调用都会让这个任务算错。")),
        _chosen("q01 answered after the search alone (read_note never called)", [search_only],
                ("every expected tool must have been called: compare sets for equality, not inclusion.",
                 "每个预期的工具都必须调用过：比较集合是否相等，而不是是否包含。")),
        _chosen("q20 (the save was proposed, then rejected by the user)", [real["q20"]],
                ("a call the model made counts as chosen even if it failed or was rejected: do not filter on ok.",
                 "模型发出的调用，即使失败或被拒绝，也算被选中了：不要按 ok 过滤。")),
        _chosen("q23 (read_note called twice: once NOT_FOUND, once ok)", [real["q23"]],
                ("a tool called twice is still one tool: compare sets, not lists.",
                 "一个工具调用两次仍然算一个工具：比较集合，而不是列表。")),
        _chosen("all the real traces of the evaluation", list(real.values()),
                ("count the tasks whose set of tools equals the expected set, divided by the number of tasks.",
                 "数出工具集合等于预期集合的任务，再除以任务总数。")),
    ]  # fmt: skip
    cases += [SelectionCase(f"{qid} alone", f"单独的 {qid}", (trace,)) for qid, trace in real.items()]
    # Every set of tools a task can call, for every set of tools a question expects: the whole space
    # the metric is defined on. The calls are real ones (the save is q20's, stopped and then rejected).
    calls = {c.name: c for qid in ("q20", "q01") for c in real[qid].calls}
    expected = {frozenset(t.question.expected_tools): t for t in real.values()}
    for trace in expected.values():
        for size in range(len(TOOLS) + 1):
            for chosen in combinations(TOOLS, size):
                qid, en, zh = trace.question.id, ", ".join(chosen), "、".join(chosen)
                cases.append(SelectionCase(f"{qid} made to call {en}" if chosen else f"{qid} made to call no tool",
                                           f"改成调用 {zh} 的 {qid}" if chosen else f"改成不调用工具的 {qid}",
                                           (replace(trace, calls=[calls[name] for name in chosen]),)))  # fmt: skip
    cases.append(SelectionCase("all the real traces in reverse order", "倒序排列的全部真实轨迹", tuple(reversed(real.values()))))
    return cases


def _rate(traces: list[Any], same: Callable[[Any], bool]) -> float:
    return sum(map(same, traces)) / len(traces)


def _names(trace: Any) -> set[str]:
    return {call.name for call in trace.calls}


SELECTION_MISTAKES: list[tuple[Callable[[list[Any]], float], tuple[str, str]]] = [
    (lambda ts: 100 * _rate(ts, lambda t: _names(t) == set(t.question.expected_tools)),
     ("that is a percentage: return a fraction from 0 to 1 (a table may show it as %, the metric is a rate).",
      "这是百分数：请返回 0 到 1 之间的比例（表格可以显示成 %，指标本身是比率）。")),
    (lambda ts: _rate(ts, lambda t: {c.tool for c in t.calls} == set(t.question.expected_tools)),
     ("call.tool is the model-side alias (notes__read_note); expected_tools holds server names: compare call.name.",
      "call.tool 是模型一侧的别名（notes__read_note）；expected_tools 里是服务器的工具名：请比较 call.name。")),
    (lambda ts: float(sum(_names(t) == set(t.question.expected_tools) for t in ts)),
     ("that is a count of tasks, not a rate: divide by the number of tasks.",
      "这是任务的个数，不是比率：请除以任务总数。")),
    (lambda ts: _rate(ts, lambda t: _names(t) <= set(t.question.expected_tools)),
     ("every expected tool must have been called: compare the sets for equality, not ⊆.",
      "每个预期的工具都必须调用过：比较集合是否相等，而不是 ⊆。")),
    (lambda ts: _rate(ts, lambda t: set(t.question.expected_tools) <= _names(t)),
     ("a tool the task did not need makes the choice wrong (chit-chat that searched): equality, not ⊇.",
      "任务不需要的工具也会让选择出错（做了搜索的闲聊）：要相等，而不是 ⊇。")),
    (lambda ts: _rate(ts, lambda t: {c.name for c in t.calls if c.ok} == set(t.question.expected_tools)),
     ("a call the model made counts as chosen even if it failed or was rejected: do not filter on ok.",
      "模型发出的调用，即使失败或被拒绝，也算被选中了：不要按 ok 过滤。")),
    (lambda ts: _rate(ts, lambda t: [c.name for c in t.calls] == list(t.question.expected_tools)),
     ("a tool called twice (or a retry) is still one tool: compare sets, not lists of calls.",
      "一个工具调用两次（或一次重试）仍然算一个工具：比较集合，而不是调用的列表。")),
    (lambda ts: sum(_names(t) == set(t.question.expected_tools) for t in ts) / max(1, sum(len(t.calls) for t in ts)),
     ("divide by the number of tasks, not the number of calls.", "请除以任务数，而不是调用数。")),
    (lambda ts: 1 - _rate(ts, lambda t: _names(t) == set(t.question.expected_tools)),
     ("that is the share of tasks that chose wrongly: count the ones whose set equals the expected set.",
      "这是选错的任务所占的比例：请数出集合等于预期集合的那些任务。")),
]  # fmt: skip
"""Wrong answers learners write, each as a function giving the value it computes, and what is wrong
(English, Chinese)."""


def _value(value: Any) -> float | None:
    """A number the learner returned, as a float; None for anything else (bool included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except _LEARNER_ERRORS:
        return None


def _mistake(fn: Callable[[list[Any]], float], seen: list[tuple[list[Any], float]],
             right: float) -> tuple[str, str] | None:
    """The message of the known mistake that reproduces every value the learner's function gave
    (`seen`: traces and value per case, the failing case last) and is not right here. When several
    do, the learner's function is also run on each real trace alone, and on all of them, to tell them apart."""

    def reproduces(wrong: Callable[[list[Any]], float], cases: list[tuple[list[Any], float]]) -> bool:
        try:
            return all(math.isclose(wrong(traces), value, abs_tol=1e-9) for traces, value in cases)
        except ZeroDivisionError:
            return False

    candidates = [(wrong, message) for wrong, message in SELECTION_MISTAKES if reproduces(wrong, seen)
                  and not math.isclose(wrong(seen[-1][0]), right, abs_tol=1e-9)]  # fmt: skip
    if len(candidates) > 1:
        probes = []
        for traces in [[t] for t in _traces()] + [list(_traces())]:
            try:
                value = _value(fn([_fresh(t) for t in traces]))
            except _LEARNER_ERRORS:  # the learner's function fails on a probe: keep the candidates as they are
                probes = []
                break
            if value is None:
                probes = []
                break
            probes.append((traces, value))
        candidates = [c for c in candidates if reproduces(c[0], probes)] or candidates
    return candidates[0][1] if candidates else None


def check_tool_selection_accuracy(fn: Callable[[list[Any]], float]) -> bool:
    """Run `fn` on variants of the real traces and on every trace (alone, with a tool taken out or a
    search added, all of them in both orders); compare with `evaluation.tool_selection`."""
    from course_lib.evaluation import tool_selection

    if not_answered(fn):
        return failed(unassigned("tool_selection_accuracy", "tool_selection_accuracy(traces)"))
    if not callable(fn):
        return failed(say("Pass the function itself (tool_selection_accuracy, without parentheses); you passed {fn}.",
                          "请传入函数本身（tool_selection_accuracy，不带括号）；你传入的是 {fn}。", fn=_shown(fn)))
    if not _takes(fn, 1):
        return failed(say("tool_selection_accuracy must take one argument, the list of traces; yours cannot be called "
                          "with one.", "tool_selection_accuracy 必须接受一个参数，也就是轨迹列表；你的函数不能用一个参数调用。"))
    seen: list[tuple[list[Any], float]] = []
    for case in selection_cases():
        label = case.label()
        try:
            returned = fn([_fresh(t) for t in case.traces])
        except _LEARNER_ERRORS as error:
            return failed(say("tool_selection_accuracy raised {kind}: {error} on {label}.",
                              "tool_selection_accuracy 在 {label} 上抛出了 {kind}：{error}。",
                              kind=type(error).__name__, error=_error(error), label=label))
        if returned is ...:
            return failed(say("Not answered yet: tool_selection_accuracy still returns ...; return a number from 0 to 1.",
                              "还没有作答：tool_selection_accuracy 仍然返回 ...；请返回 0 到 1 之间的数。"))
        value = _value(returned)
        if value is None:
            return failed(say("tool_selection_accuracy must return a number from 0 to 1; it returned {value} on {label}.",
                              "tool_selection_accuracy 必须返回 0 到 1 之间的数；它在 {label} 上返回了 {value}。",
                              value=_shown(returned), label=label))
        right = tool_selection(list(case.traces)).rate
        seen.append((list(case.traces), value))
        if not math.isclose(value, right, abs_tol=1e-9):
            why = _mistake(fn, seen, right) or case.hint  # the mistake it matches, else what this case tests
            return failed(say("on {label} you computed {value:g}, the traces give {right:g}: {why}",
                              "在 {label} 上你算出 {value:g}，轨迹给出的是 {right:g}：{why}",
                              label=label, value=value, right=right, why=say(*why)))
    return passed(say("right on every case: a task counts when the set of tools it called equals the expected set.",
                      "每个例子都对了：一个任务只有在它调用过的工具集合等于预期集合时才算数。"))


def _selection_solution(traces: list[Any]) -> float:
    right = sum({call.name for call in t.calls} == set(t.question.expected_tools) for t in traces)
    return right / len(traces)


SOLUTIONS: Solutions = {
    "check_citation_correct": lambda: _citation_solution,
    "check_tool_selection_accuracy": lambda: _selection_solution,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
