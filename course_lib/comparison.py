"""Baseline against a change: run the same fixed questions twice and see which metrics move.

An evaluation earns its keep when it tells two versions apart. Each change here wraps the model
client (the assistant calls only `client.responses.create`), so the questions, the notes, the
executor and the metrics stay exactly the same and only one thing differs:

    WithoutTool(client, "search_notes")   the search step is gone: the tool is not declared
    Guesses(client)                       a model that answers from memory, with a citation,
                                          when the notes are silent (a careless model)

    results = compare({"baseline": None, "no search step": partial(WithoutTool, tool="search_notes"),
                       "guesses": Guesses}, questions)
    print(comparison_table(results))

Each version runs every question: about `estimated_requests` model requests in all (three versions of
24 questions: some 290). On a paid endpoint `compare` says so before it sends anything, and runs on
the offline model unless the learner opted in (`backend.client_for_requests`, `COURSE_PAID_RUNS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from openai import OpenAI
from openai.types.responses import Response

from course_lib.evaluation import (Metric, Question, TaskTrace, client_for, compute_metrics, load_questions, metric_label,
                                   run_eval, says_evidence_missing)  # fmt: skip
from course_lib.lang import display_width, pad
from course_lib.lang import say

Change = Callable[[Any], Any]
"""Takes the model client, returns a client with the change (or None: the baseline)."""

GUESS = "The usual approach works here: follow the standard steps in order and check each result as you go."
GUESS_ZH = "通常的做法在这里也适用：按标准步骤依次执行，每一步都检查结果。"
"""What the careless model says instead of "the evidence is missing", in the language of the answer it replaces."""
_PATH = re.compile(r"/notes/[\w./-]+\.md")
VERSION_LABELS_ZH = {"baseline": "基线", "no search step": "去掉搜索步骤", "guesses": "靠猜"}
"""The zh-CN column label of each version name used in notebook 09 (the names stay the dict's keys)."""


class ChangedModel:
    """A model client with one change: `responses.create` goes through `change_request` and
    `change_response`. Everything else is the wrapped client's."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.responses = self

    def create(self, **request: Any) -> Response:
        return self.change_response(request, self.client.responses.create(**self.change_request(request)))

    def change_request(self, request: dict[str, Any]) -> dict[str, Any]:
        return request

    def change_response(self, request: dict[str, Any], response: Response) -> Response:
        return response


class WithoutTool(ChangedModel):
    """The model never sees the tool named `tool` (its server name, e.g. "search_notes")."""

    def __init__(self, client: Any, tool: str) -> None:
        super().__init__(client)
        self.tool = tool

    def change_request(self, request: dict[str, Any]) -> dict[str, Any]:
        tools = [t for t in request.get("tools", []) if t.get("name", "").rsplit("__", 1)[-1] != self.tool]
        return {**request, "tools": tools}


class Guesses(ChangedModel):
    """DELIBERATELY CARELESS: where the model would say the evidence is missing, it answers from
    memory instead and cites a note — one a tool output mentioned, read or not, else a real note
    nobody read. Function calls in the same response (a proposed gap) are kept."""

    def change_response(self, request: dict[str, Any], response: Response) -> Response:
        said = response.output_text
        if not says_evidence_missing(said):  # the offline model's words, or a real model's ("your notes don't cover …")
            return response
        seen = [p for i in request["input"] if isinstance(i, dict) and i.get("type") == "function_call_output"
                for p in _PATH.findall(json.dumps(i.get("output", "")))]  # fmt: skip
        cited = (seen or ["/notes/strict-mode.md"])[0]
        text = f"{GUESS_ZH}\n\n来源：{cited}" if re.search(r"[\u4e00-\u9fff]", said) else f"{GUESS}\n\nSources: {cited}"
        output = []
        for item in response.output:
            if item.type == "message":
                part = item.content[0].model_copy(update={"text": text})
                item = item.model_copy(update={"content": [part]})
            output.append(item)
        return response.model_copy(update={"output": output})


def compare(changes: dict[str, Change | None], questions: Iterable[Question] | None = None, *,
            client: OpenAI | None = None, transport: Any = None) -> dict[str, tuple[list[TaskTrace], list[Metric]]]:  # fmt: skip
    """Run the same questions once per change (None: the unchanged client); traces and metrics each.

    `client`: the model to run on, as the caller chose it. By default the configured backend, asked
    through `backend.client_for_requests` with `estimated_requests` for every version: offline, it is
    the offline model, silently; on a real endpoint one line says how many requests would go where,
    and the run stays offline unless `COURSE_PAID_RUNS` allows that many (`transport`: e.g. a capture).
    """
    questions = list(questions) if questions is not None else load_questions()
    if client is None:
        client = client_for(questions, versions=len(changes), transport=transport, what=("The comparison", "这次对比"))
    results = {}
    for name, change in changes.items():
        traces = run_eval(questions, client=change(client) if change else client)
        results[name] = (traces, compute_metrics(traces))
    return results


def comparison_table(results: dict[str, tuple[list[TaskTrace], list[Metric]]]) -> str:
    """One row per metric, one column per version: the rate, and how far it moved from the first.

    In the zh-CN edition a version named in `VERSION_LABELS_ZH` gets its Chinese column label.
    """
    names = list(results)
    base = {m.name: m for m in results[names[0]][1]}
    rows = [(say("metric", "指标"), *(say(name, VERSION_LABELS_ZH.get(name, name)) for name in names))]
    for metric in results[names[0]][1]:
        cells = [metric_label(metric.name)]
        for name in names:
            m = next(x for x in results[name][1] if x.name == metric.name)
            cell = say("n/a", "不适用") if m.rate is None else f"{m.rate:.0%}"
            b = base[metric.name].rate
            if name != names[0] and m.rate is not None and b is not None and round(m.rate - b, 2):
                cell += f" ({(m.rate - b) * 100:+.0f})"
            cells.append(cell)
        rows.append(tuple(cells))
    widths = [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(pad(cell, w) for cell, w in zip(row, widths)).rstrip() for row in rows)
