"""Our files server beside the reference filesystem server: the same calls, both answers.

Both offer `read_text_file` with `path`, `head` and `tail`; the model sees them under two
aliases and the host maps each back to its server. `compare()` sends the *same arguments object*
to both (relative paths resolve under each server's root) and summarizes what really came back,
so the table shows where they agree and where the reference decides otherwise — e.g. it checks
`head` by truthiness, so `head: 0` reads the whole file, while ours refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_lib.host import McpHost, ToolCall
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


def table(rows: list[Row]) -> str:
    """The comparison as a plain-text table."""
    w_case = max([len("case")] + [len(r.case) for r in rows])
    w_ours = max([len("ours")] + [len(r.ours) for r in rows])
    w_theirs = max([len("reference")] + [len(r.theirs) for r in rows])
    header = f"{'case':<{w_case}}  {'ours':<{w_ours}}  {'reference':<{w_theirs}}  same?"
    lines = [header, "-" * len(header)]
    for row in rows:
        same = "yes" if row.agree else "no"
        lines.append(f"{row.case:<{w_case}}  {row.ours:<{w_ours}}  {row.theirs:<{w_theirs}}  {same}")
    return "\n".join(lines)
