"""LangGraph on the bench: `tests/outside/langgraph_read.py` in its own venv (LangChain's MCP adapter
requires mcp<2), against the offline model over the Responses API and the files server over stdio.

    report = run_langgraph(bench, {"read": …, "refused": …})       # inside bench.run(…)
    report["asked_read"]["interrupts"]                              # the calls interrupt() held

The script is a file a learner can read and run on its own (`show_source`); it imports LangGraph,
LangChain and the adapter only. With `traced_to` it makes the GenAI spans LangGraph does not, and its
MCP client's requests carry the trace context (see the script's docstring).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course_lib.frameworks import scripts, venvs
from course_lib.frameworks.bench import Bench
from course_lib.frameworks.scripts import run_script

_TIMEOUT = 600.0  # seconds: LangChain's imports, eight graph runs, on a busy machine


def script_path() -> Path:
    """The script's path (`tests/outside/langgraph_read.py`)."""
    return venvs.repo_dir() / "tests" / "outside" / "langgraph_read.py"


def run_langgraph(bench: Bench, tasks: dict[str, str], *, traced_to: str | None = None) -> dict[str, Any]:
    """Run the script against the bench; what each graph run handed back (`toolCalls`, `toolMessages`,
    `text`, `interrupts`, and `object` for a structured answer).

    Raises:
        venvs.VenvFailed: the venv could not be built.
        ScriptFailed: the script failed; its stderr is in the message.
    """
    files = bench.files_stdio(traced_to=traced_to)
    config = {"modelUrl": bench.model_url, "files": {"command": files.command, "args": files.args}, "tasks": tasks,
              "out": str(files.log.with_name("langgraph-report.json")), "tracedTo": traced_to}  # fmt: skip
    return run_script([str(venvs.python("langgraph")), str(script_path())], config, name="LangGraph",
                      cwd=bench.workspace, timeout=_TIMEOUT)  # fmt: skip


def show_source(start: str | None = None, end: str | None = None) -> None:
    """Print the script from the first line holding `start` up to the line holding `end` (exclusive)."""
    scripts.show_source(script_path(), start, end)


def call_ids(report: dict[str, Any], *names: str) -> tuple[str, ...]:
    """The tool call ids (the model's `call_id`s) of the named graph runs, in order."""
    return tuple(call["id"] for name in names for call in (report.get(name) or {}).get("toolCalls", []))
