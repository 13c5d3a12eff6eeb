"""Our files server beside the reference filesystem server: the same calls, both answers.

Both offer `read_text_file` with `path`, `head` and `tail`; the model sees them under two
aliases and the host maps each back to its server. `compare()` sends the *same arguments object*
to both (relative paths resolve under each server's root) and summarizes what really came back,
so the table shows where they agree and where the reference decides otherwise — e.g. it checks
`head` by truthiness, so `head: 0` reads the whole file, while ours refuses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_lib.host import McpHost, ToolCall
from course_lib.lang import display_width, language, pad
from course_lib.results import result_text, tool_error_code

CASES: list[tuple[str, dict[str, Any]]] = [
    ("whole file", {"path": "todo.md"}),
    ("head 3", {"path": "notes.txt", "head": 3}),
    ("tail 2", {"path": "notes.txt", "tail": 2}),
    ("head and tail", {"path": "notes.txt", "head": 2, "tail": 2}),
    ("head 0", {"path": "notes.txt", "head": 0}),
    ("missing file", {"path": "missing.txt"}),
    ("outside the root", {"path": "/etc/hostname"}),
]


@dataclass(frozen=True)
class Row:
    case: str
    arguments: dict[str, Any]
    ours: str
    theirs: str

    @property
    def agree(self) -> bool:
        return self.ours == self.theirs


def summarize(call: ToolCall, *, hide: list[str]) -> str:
    """A one-line, machine-independent summary of a call's outcome (real paths in `hide` masked)."""
    if call.protocol_error is not None:
        return f"protocol error {call.protocol_error.code}"
    assert call.result is not None
    text = result_text(call.result)
    for secret in hide:
        text = text.replace(secret, "<root>")
    if call.result.is_error:
        code = tool_error_code(call.result)
        return f"error: {text if code == 'UPSTREAM_ERROR' else code}"[:90]
    lines = text.split("\n")
    count = 0 if not text else len(lines) - (1 if text.endswith("\n") else 0)
    noun = "line" if count == 1 else "lines"
    return f"{count} {noun}" + ("" if text.endswith("\n") or not text else ", no final newline")


def compare(host: McpHost, ours: str, theirs: str, *, roots: list[Path], cases=CASES) -> list[Row]:
    """Call both aliases with each case's arguments; `roots` are the real folders to mask in messages."""
    hide = [str(r) for r in roots]
    return [
        Row(name, args, summarize(host.call(ours, args), hide=hide), summarize(host.call(theirs, args), hide=hide))
        for name, args in cases
    ]


CASE_NAMES_ZH = {"whole file": "整个文件", "head 3": "head 3", "tail 2": "tail 2", "head and tail": "head 和 tail",
                 "head 0": "head 0", "missing file": "不存在的文件", "outside the root": "根目录之外"}
"""The CASES' names as the zh-CN table shows them (the rows keep the English names)."""


def case_arguments(name: str) -> dict[str, Any]:
    """The arguments of the case called `name` in `CASES`: its English name, or its zh-CN one.

    Raises:
        KeyError: no case has that name (the message lists them).
    """
    english = {zh: en for en, zh in CASE_NAMES_ZH.items()}.get(name, name)
    cases = dict(CASES)
    if english not in cases:
        raise KeyError(f"no case named {name!r}; the cases: {', '.join(cases)}")
    return dict(cases[english])  # a copy: CASES stays as it is


_LINES = re.compile(r"^(\d+) lines?(, no final newline)?$")


def _case_zh(case: str) -> str:
    name, sep, rest = case.partition(" · ")
    return CASE_NAMES_ZH.get(name, name) + sep + rest


def _outcome_zh(outcome: str) -> str:
    """A `summarize` line in Chinese: the counts, codes and the server's own messages stay as they are."""
    if counted := _LINES.match(outcome):
        return f"{counted[1]} 行" + ("，结尾没有换行" if counted[2] else "")
    if outcome.startswith("error: "):
        return "错误：" + outcome.removeprefix("error: ")
    return outcome.replace("protocol error", "协议错误", 1)


def table(rows: list[Row]) -> str:
    """The comparison as a plain-text table, its labels in the edition's language (`lang.say`);
    the rows' own values (`Row.ours`, `Row.theirs`, `Row.case`) stay English."""
    chinese = language() == "zh-CN"
    heads = ("情形", "我们的", "参考服务器", "相同？") if chinese else ("case", "ours", "reference", "same?")
    shown = [(_case_zh(r.case), _outcome_zh(r.ours), _outcome_zh(r.theirs), "是" if r.agree else "否") if chinese
             else (r.case, r.ours, r.theirs, "yes" if r.agree else "no") for r in rows]  # fmt: skip
    widths = [max([display_width(heads[i])] + [display_width(row[i]) for row in shown]) for i in range(3)]
    header = "  ".join(pad(head, width) for head, width in zip(heads, widths)) + "  " + heads[3]
    lines = [header, "-" * display_width(header)]
    for row in shown:
        lines.append("  ".join(pad(cell, width) for cell, width in zip(row, widths)) + "  " + row[3])
    return "\n".join(lines)
