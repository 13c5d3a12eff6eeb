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
verdict on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Any

from course_lib.exercises import Solutions, failed, not_answered, passed


@lru_cache(maxsize=1)
def _traces() -> tuple[Any, ...]:
    """Every evaluation question, run once on the offline model (cached: the runs are deterministic)."""
    import httpx
    import openai

    from course_lib.backend import OFFLINE_BASE_URL
    from course_lib.evaluation import run_eval
    from course_lib.offline_model import offline_transport

    with openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, max_retries=0,
                       http_client=httpx.Client(transport=offline_transport())) as client:  # fmt: skip
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
    "two sources, both read": "split the Sources line at commas and strip the spaces.",
    "an answer from memory that cites a note nobody read": "every cited path must be in read_paths.",
    "a source named by its prefix only (/notes/retries is not /notes/retries.md)":
        "compare whole paths (set membership), not substrings.",
    "a quoted sentence tagged with a note that was never read":
        "the [path] after each quoted sentence is a citation too.",
    "two notes read, only one cited (the other was a stub)":
        "a note read but not cited is fine: check cited ⊆ read, not read ⊆ cited.",
    "q01": "take the paths from the line that starts with 'Sources:'.",
    "q15": "an answer that cites nothing cannot have correct citations: return False.",
    "q18": "a path mentioned in the text (\"… is only a stub\") is not a citation; only Sources: and [path] are.",
    "q24": "the Sources: line is not always the last line: a paragraph about the saved gap follows it.",
    "q23": "cite the path actually read (/notes/archive/...), not the one that was NOT_FOUND.",
}


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
        return failed("Not answered yet: define citation_correct(answer, read_paths) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (citation_correct, without parentheses); you passed {fn!r}.")
    for label, answer, read in citation_cases():
        where = f"the real answer to {label}" if label.startswith("q") else f"the case '{label}'"
        try:
            verdict = fn(answer, set(read))
        except Exception as error:
            return failed(f"citation_correct raised {type(error).__name__}: {error} on {where}.")
        if verdict is ...:
            return failed("Not answered yet: citation_correct still returns ...; return True or False.")
        if not isinstance(verdict, bool):
            return failed(f"citation_correct must return True or False; it returned {verdict!r} on {where}.")
        right = _reference_citation(answer, read)
        if verdict != right:
            said = "correct" if verdict else "wrong"
            return failed(f"on {where} you said the citations are {said}, but they are "
                          f"{'correct' if right else 'not'}: {HINTS[label]}")  # fmt: skip
    return passed(f"all {len(citation_cases())} answers judged right: only Sources: and [path] count, and every "
                  "cited note must have been read.")  # fmt: skip


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


def selection_cases() -> list[tuple[str, list[Any], str]]:
    """(label, traces, hint) for every case the check runs, in order."""
    real = _by_id()
    chat, other_chat, q01 = real["q13"], real["q14"], real["q01"]
    searched_chat = replace(chat, calls=real["q15"].calls)
    search_only = replace(q01, calls=[c for c in q01.calls if c.name == "search_notes"])
    return [
        ("q01 (one search, then two reads in one turn)", [q01],
         "compare the set of server tool names called (call.name) with set(question.expected_tools)."),
        ("q13 and q14, with a search added to q13 (chit-chat that searched anyway)", [searched_chat, other_chat],
         "chit-chat expects no tool at all: any call makes the task wrong."),
        ("q01 answered after the search alone (read_note never called)", [search_only],
         "every expected tool must have been called: compare sets for equality, not inclusion."),
        ("q20 (the save was proposed, then rejected by the user)", [real["q20"]],
         "a call the model made counts as chosen even if it failed or was rejected: do not filter on ok."),
        ("q23 (read_note called twice: once NOT_FOUND, once ok)", [real["q23"]],
         "a tool called twice is still one tool: compare sets, not lists."),
        ("all the real traces of the evaluation", list(real.values()),
         "count the tasks whose set of tools equals the expected set, divided by the number of tasks."),
    ]  # fmt: skip


def _rate(traces: list[Any], same: Callable[[Any], bool]) -> float:
    return sum(map(same, traces)) / len(traces)


def _names(trace: Any) -> set[str]:
    return {call.name for call in trace.calls}


SELECTION_MISTAKES: list[tuple[Callable[[list[Any]], float], str]] = [
    (lambda ts: 100 * _rate(ts, lambda t: _names(t) == set(t.question.expected_tools)),
     "that is a percentage: return a fraction from 0 to 1 (a table may show it as %, the metric is a rate)."),
    (lambda ts: _rate(ts, lambda t: {c.tool for c in t.calls} == set(t.question.expected_tools)),
     "call.tool is the model-side alias (notes__read_note); expected_tools holds server names: compare call.name."),
    (lambda ts: float(sum(_names(t) == set(t.question.expected_tools) for t in ts)),
     "that is a count of tasks, not a rate: divide by the number of tasks."),
    (lambda ts: _rate(ts, lambda t: _names(t) <= set(t.question.expected_tools)),
     "every expected tool must have been called: compare the sets for equality, not ⊆."),
    (lambda ts: _rate(ts, lambda t: set(t.question.expected_tools) <= _names(t)),
     "a tool the task did not need makes the choice wrong (chit-chat that searched): equality, not ⊇."),
    (lambda ts: _rate(ts, lambda t: {c.name for c in t.calls if c.ok} == set(t.question.expected_tools)),
     "a call the model made counts as chosen even if it failed or was rejected: do not filter on ok."),
    (lambda ts: _rate(ts, lambda t: [c.name for c in t.calls] == list(t.question.expected_tools)),
     "a tool called twice (or a retry) is still one tool: compare sets, not lists of calls."),
    (lambda ts: sum(_names(t) == set(t.question.expected_tools) for t in ts) / max(1, sum(len(t.calls) for t in ts)),
     "divide by the number of tasks, not the number of calls."),
    (lambda ts: 1 - _rate(ts, lambda t: _names(t) == set(t.question.expected_tools)),
     "that is the share of tasks that chose wrongly: count the ones whose set equals the expected set."),
]  # fmt: skip
"""Wrong answers learners write, each as a function giving the value it computes, and what is wrong."""


def _mistake(fn: Callable[[list[Any]], float], seen: list[tuple[list[Any], float]], right: float) -> str | None:
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
        return failed("Not answered yet: define tool_selection_accuracy(traces) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (tool_selection_accuracy, without parentheses); you passed {fn!r}.")
    seen: list[tuple[list[Any], float]] = []
    for label, traces, hint in selection_cases():
        try:
            value = fn(list(traces))
        except Exception as error:
            return failed(f"tool_selection_accuracy raised {type(error).__name__}: {error} on {label}.")
        if value is ...:
            return failed("Not answered yet: tool_selection_accuracy still returns ...; return a number from 0 to 1.")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return failed(f"tool_selection_accuracy must return a number from 0 to 1; it returned {value!r} on {label}.")
        right = tool_selection(list(traces)).rate
        seen.append((list(traces), value))
        if not math.isclose(value, right, abs_tol=1e-9):
            why = _mistake(fn, seen, right) or hint  # the mistake it matches, else what this case tests
            return failed(f"on {label} you computed {value:g}, the traces give {right:g}: {why}")
    return passed("right on every case: a task counts when the set of tools it called equals the expected set.")


def _selection_solution(traces: list[Any]) -> float:
    right = sum({call.name for call in t.calls} == set(t.question.expected_tools) for t in traces)
    return right / len(traces)


SOLUTIONS: Solutions = {
    "check_citation_correct": lambda: _citation_solution,
    "check_tool_selection_accuracy": lambda: _selection_solution,
}
