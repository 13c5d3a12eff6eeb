"""Checks for notebook 09 (the capstone: the notes assistant and its evaluation).

- `check_citation_correct(fn)`: the learner's `citation_correct(answer, read_paths) -> bool` is run
  on answers the assistant really gave (from fresh offline runs of evaluation questions) and on a
  few crafted ones; the right verdict comes from the library's own parsing
  (`evaluation.cited_sources`): correct exactly when the answer cites at least one note and every
  note it cites — in its `Sources:` line or after a quoted sentence — was actually read.
- `check_tool_selection_accuracy(fn)`: the learner's `tool_selection_accuracy(traces) -> float`
  is run on the real traces of the whole evaluation and on variants of them; the right value
  comes from `evaluation.tool_selection`.

Both checks run the offline model, whatever backend the notebook uses: a check must give the same
verdict on every machine. Every message the checks write themselves follows the edition's language
(`course_lib.lang.say`); the answers they quote (the evaluation's English runs) stay as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Any

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.lang import say


@lru_cache(maxsize=1)
def _traces() -> tuple[Any, ...]:
    """Every evaluation question, run once on the offline model (cached: the runs are deterministic)."""
    from course_lib.evaluation import run_eval
    from course_lib.exercises.offline import offline_client

    with offline_client() as client:
        return tuple(run_eval(client=client))


def _by_id() -> dict[str, Any]:
    return {t.question.id: t for t in _traces()}


def _reference_citation(answer: str, read_paths: set[str]) -> bool:
    from course_lib.evaluation import cited_sources

    cited = cited_sources(answer)
    return bool(cited) and set(cited) <= set(read_paths)


# ---- exercise 1: citation_correct -----------------------------------------------------------------

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
}  # fmt: skip
"""label → (answer, paths read): crafted answers; the verdict still comes from the reference."""

HINTS = {
    "two sources, both read": ("split the Sources line at commas and strip the spaces.",
                               "在逗号处切开 Sources 行，并去掉空格。"),
    "an answer from memory that cites a note nobody read": ("every cited path must be in read_paths.",
                                                            "每个被引用的路径都必须在 read_paths 里。"),
    "a source named by its prefix only (/notes/retries is not /notes/retries.md)":
        ("compare whole paths (set membership), not substrings.", "比较完整的路径（集合成员关系），而不是子串。"),
    "a quoted sentence tagged with a note that was never read":
        ("the [path] after each quoted sentence is a citation too.", "每个引用句子后面的 [path] 也是引用。"),
    "two notes read, only one cited (the other was a stub)":
        ("a note read but not cited is fine: check cited ⊆ read, not read ⊆ cited.",
         "读过却没引用的笔记没有问题：检查 引用 ⊆ 读过，而不是 读过 ⊆ 引用。"),
    "q01": ("take the paths from the line that starts with 'Sources:'.", "从以 'Sources:' 开头的那一行取出路径。"),
    "q15": ("an answer that cites nothing cannot have correct citations: return False.",
            "什么都没引用的回答谈不上引用正确：返回 False。"),
    "q18": ("a path mentioned in the text (\"… is only a stub\") is not a citation; only Sources: and [path] are.",
            "正文里提到的路径（\"… is only a stub\"）不是引用；只有 Sources: 和 [path] 才是。"),
    "q24": ("the Sources: line is not always the last line: a paragraph about the saved gap follows it.",
            "Sources: 行不一定是最后一行：它后面还有一段关于已保存缺口的话。"),
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
    "q01 (one search, then two reads in one turn)": "q01（一次搜索，然后同一轮里两次读取）",
    "q13 and q14, with a search added to q13 (chit-chat that searched anyway)": "q13 和 q14，q13 加上了一次搜索（照样做了搜索的闲聊）",
    "q01 answered after the search alone (read_note never called)": "只搜索就回答的 q01（从没调用 read_note）",
    "q20 (the save was proposed, then rejected by the user)": "q20（提议了保存，随后被用户拒绝）",
    "q23 (read_note called twice: once NOT_FOUND, once ok)": "q23（read_note 调用了两次：一次 NOT_FOUND，一次 ok）",
    "all the real traces of the evaluation": "评估的全部真实轨迹",
}  # fmt: skip
"""The cases' labels in Chinese (the English label is the key)."""


def _label(label: str) -> str:
    return say(label, LABELS_ZH.get(label, label))


def citation_cases() -> list[tuple[str, str, set[str]]]:
    """(label, answer, paths read) for every case the check runs, in order."""
    real = _by_id()
    cases = [(label, *CRAFTED[label]) for label in list(CRAFTED)[:3]]
    for qid in ("q01", "q15", "q18", "q24", "q23"):
        trace = real[qid]
        cases.append((qid, trace.answer or "", set(trace.read)))
    cases += [(label, *CRAFTED[label]) for label in list(CRAFTED)[3:]]
    return cases


def check_citation_correct(fn: Callable[[str, set[str]], bool]) -> bool:
    """Run `fn` on real and crafted answers; name the first one it judges wrongly."""
    if not_answered(fn):
        return failed(say("Not answered yet: define citation_correct(answer, read_paths) and pass the function itself.",
                          "还没有作答：定义 citation_correct(answer, read_paths)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (citation_correct, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（citation_correct，不带括号）；你传入的是 {fn!r}。", fn=fn))
    for label, answer, read in citation_cases():
        where = (say("the real answer to {label}", "在 {label} 的真实回答上", label=label) if label.startswith("q")
                 else say("the case '{label}'", "在例子“{label}”上", label=_label(label)))  # fmt: skip
        try:
            verdict = fn(answer, set(read))
        except Exception as error:
            return failed(say("citation_correct raised {kind}: {error} on {where}.",
                              "citation_correct {where}抛出了 {kind}：{error}。",
                              kind=type(error).__name__, error=error, where=where))
        if verdict is ...:
            return failed(say("Not answered yet: citation_correct still returns ...; return True or False.",
                              "还没有作答：citation_correct 仍然返回 ...；请返回 True 或 False。"))
        if not isinstance(verdict, bool):
            return failed(say("citation_correct must return True or False; it returned {verdict!r} on {where}.",
                              "citation_correct 必须返回 True 或 False；它{where}返回了 {verdict!r}。",
                              verdict=verdict, where=where))
        right = _reference_citation(answer, read)
        if verdict != right:
            return failed(say("on {where} you said the citations are {said}, but they are {truth}: {hint}",
                              "{where}，你判断引用{said}，但实际上引用{truth}：{hint}",
                              where=where, said=say("correct", "正确") if verdict else say("wrong", "有错"),
                              truth=say("correct", "正确") if right else say("not", "不正确"),
                              hint=say(*HINTS[label])))  # fmt: skip
    return passed(say("all {n} answers judged right: only Sources: and [path] count, and every cited note must have "
                      "been read.", "{n} 个回答全部判断正确：只有 Sources: 和 [path] 算引用，而且每篇被引用的笔记都必须读过。",
                      n=len(citation_cases())))  # fmt: skip


def _citation_solution(answer: str, read_paths: set[str]) -> bool:
    import re

    cited = set()
    for line in answer.splitlines():
        if line.startswith("Sources:"):
            cited |= {p.strip() for p in line.removeprefix("Sources:").split(",") if p.strip()}
        tag = re.fullmatch(r"- .+ \[(/\S+)\]", line.strip())
        if tag:
            cited.add(tag.group(1))
    return bool(cited) and cited <= set(read_paths)


# ---- exercise 2: tool selection accuracy from raw traces -----------------------------------------


def selection_cases() -> list[tuple[str, list[Any], tuple[str, str]]]:
    """(label, traces, (English, Chinese) hint) for every case the check runs, in order."""
    real = _by_id()
    chat, other_chat, q01 = real["q13"], real["q14"], real["q01"]
    searched_chat = replace(chat, calls=real["q15"].calls)
    search_only = replace(q01, calls=[c for c in q01.calls if c.name == "search_notes"])
    return [
        ("q01 (one search, then two reads in one turn)", [q01],
         ("compare the set of server tool names called (call.name) with set(question.expected_tools).",
          "把调用过的服务器工具名集合（call.name）与 set(question.expected_tools) 比较。")),
        ("q13 and q14, with a search added to q13 (chit-chat that searched anyway)", [searched_chat, other_chat],
         ("chit-chat expects no tool at all: any call makes the task wrong.",
          "闲聊预期一个工具都不调用：任何一次调用都会让这个任务算错。")),
        ("q01 answered after the search alone (read_note never called)", [search_only],
         ("every expected tool must have been called: compare sets for equality, not inclusion.",
          "每个预期的工具都必须调用过：比较集合是否相等，而不是是否包含。")),
        ("q20 (the save was proposed, then rejected by the user)", [real["q20"]],
         ("a call the model made counts as chosen even if it failed or was rejected: do not filter on ok.",
          "模型发出的调用，即使失败或被拒绝，也算被选中了：不要按 ok 过滤。")),
        ("q23 (read_note called twice: once NOT_FOUND, once ok)", [real["q23"]],
         ("a tool called twice is still one tool: compare sets, not lists.",
          "一个工具调用两次仍然算一个工具：比较集合，而不是列表。")),
        ("all the real traces of the evaluation", list(real.values()),
         ("count the tasks whose set of tools equals the expected set, divided by the number of tasks.",
          "数出工具集合等于预期集合的任务，再除以任务总数。")),
    ]  # fmt: skip


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
        try:
            probes = [([t], fn([t])) for t in _traces()] + [(list(_traces()), fn(list(_traces())))]
        except Exception:  # the learner's function fails on a probe: keep the first candidate
            probes = []
        candidates = [c for c in candidates if reproduces(c[0], probes)] or candidates
    return candidates[0][1] if candidates else None


def check_tool_selection_accuracy(fn: Callable[[list[Any]], float]) -> bool:
    """Run `fn` on real traces and variants; compare with `evaluation.tool_selection`."""
    from course_lib.evaluation import tool_selection

    if not_answered(fn):
        return failed(say("Not answered yet: define tool_selection_accuracy(traces) and pass the function itself.",
                          "还没有作答：定义 tool_selection_accuracy(traces)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (tool_selection_accuracy, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（tool_selection_accuracy，不带括号）；你传入的是 {fn!r}。", fn=fn))
    seen: list[tuple[list[Any], float]] = []
    for label, traces, hint in selection_cases():
        try:
            value = fn(list(traces))
        except Exception as error:
            return failed(say("tool_selection_accuracy raised {kind}: {error} on {label}.",
                              "tool_selection_accuracy 在 {label} 上抛出了 {kind}：{error}。",
                              kind=type(error).__name__, error=error, label=_label(label)))
        if value is ...:
            return failed(say("Not answered yet: tool_selection_accuracy still returns ...; return a number from 0 to 1.",
                              "还没有作答：tool_selection_accuracy 仍然返回 ...；请返回 0 到 1 之间的数。"))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return failed(say("tool_selection_accuracy must return a number from 0 to 1; it returned {value!r} on {label}.",
                              "tool_selection_accuracy 必须返回 0 到 1 之间的数；它在 {label} 上返回了 {value!r}。",
                              value=value, label=_label(label)))
        right = tool_selection(list(traces)).rate
        seen.append((list(traces), value))
        if not math.isclose(value, right, abs_tol=1e-9):
            why = _mistake(fn, seen, right) or hint  # the mistake it matches, else what this case tests
            return failed(say("on {label} you computed {value:g}, the traces give {right:g}: {why}",
                              "在 {label} 上你算出 {value:g}，轨迹给出的是 {right:g}：{why}",
                              label=_label(label), value=value, right=right, why=say(*why)))
    return passed(say("right on every case: a task counts when the set of tools it called equals the expected set.",
                      "每个例子都对了：一个任务只有在它调用过的工具集合等于预期集合时才算数。"))


def _selection_solution(traces: list[Any]) -> float:
    right = sum({call.name for call in t.calls} == set(t.question.expected_tools) for t in traces)
    return right / len(traces)


SOLUTIONS: Solutions = {
    "check_citation_correct": lambda: _citation_solution,
    "check_tool_selection_accuracy": lambda: _selection_solution,
}
