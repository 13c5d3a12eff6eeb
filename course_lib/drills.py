"""Diagnose the trace: the source's failure table, and recorded broken runs to diagnose with it.

The source ends its failure section with a table — symptom → likely cause → what to check first
(`failure_table.DIAGNOSIS_ROWS`, rows A–H, in the course's words). Each file in
`fixtures/broken_traces/` is a real run — the offline model through the real openai SDK, the
real files MCP server, the real `Executor` — broken deliberately in exactly one place (a vague
tool, a second server, a loop that forgets the result, a blind retry, an "allow everything"
approval, outputs paired by position, a failure passed on as plain text, a model that writes
numbers as strings, one call per round trip). The learner reads the trace, picks the row and the
first thing to check, and `check_diagnoses` explains any wrong pick.

    from course_lib.drills import load_broken_trace, show_broken_trace, check_diagnoses
    show_broken_trace(load_broken_trace("wrong_tool"))
    check_diagnoses(answers)      # {trace name: (row letter, first check)}

The files are generated, never typed: `python -m course_lib.drills --regenerate [OUT_DIR]`
records every run again with `course_lib.broken_traces`, and the same code gives byte-identical
files (the offline model is deterministic, ids are hashes or counters, clocks are manual,
temporary folders never show).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_lib.broken_traces import TRACES, regenerate, traces_dir
from course_lib.exercises import failed, not_answered, passed
from course_lib.failure_table import ROWS
from course_lib.show import show_items

def load_broken_trace(name: str) -> dict[str, Any]:
    """One recorded broken trace, as written by `regenerate`.

    Raises:
        KeyError: no trace has that name.
    """
    if name not in TRACES:
        raise KeyError(f"no broken trace {name!r}; there are: {', '.join(TRACES)}")
    return json.loads((traces_dir() / f"{name}.json").read_text(encoding="utf-8"))


# ---- reading a trace ----------------------------------------------------------------------------


def _short(text: str, limit: int = 70) -> str:
    text = text.replace("\n", "⏎")
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def show_broken_trace(trace: dict[str, Any], *, answer_lines: int = 8) -> None:
    """Print a trace as a timeline: each model request (its input items, tools and switches),
    each response's items, each tool call (its MCP exchange or executor steps), and what was left
    after the run. The final answer is printed in full, up to `answer_lines` lines."""
    print(f"report: {trace['report']}")
    for event in trace["events"]:
        kind = event["event"]
        if kind == "model_request":
            body = event["body"]
            tools = ", ".join(tool.get("name", tool.get("type", "?")) for tool in body.get("tools", [])) or "none"
            switches = [f"tools: {tools}"] + [f"{key}: {json.dumps(body[key])}" for key in
                                               ("tool_choice", "parallel_tool_calls", "metadata") if key in body]
            print(f"\n── request {event['n']} (app → model) · " + " · ".join(switches))  # fmt: skip
            if event["n"] == 1:
                for tool in body.get("tools", []):
                    strict = f" strict: {json.dumps(tool['strict'])}" if "strict" in tool else ""
                    print(f"    tool {tool.get('name')}:{strict} description {_short(tool.get('description', ''), 60)}")
            show_items(body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}])
        elif kind == "model_response":
            print(f"── response {event['n']} (model → app)")
            for item in event["body"]["output"]:
                if item["type"] == "function_call":
                    print(f"   function_call {item['name']} {item['arguments']}  call_id={item['call_id']}")
                elif item["type"] == "message":
                    lines = item["content"][0]["text"].splitlines()
                    cut = lines[:answer_lines] + ([f"… ({len(lines) - answer_lines} more lines)"] if len(lines) > answer_lines else [])
                    print("   message:", *("   │ " + line for line in cut), sep="\n")  # fmt: skip
        elif kind == "tool_call":
            _show_tool_call(event)
        else:
            print(f"── after the run: {event['what']}")
            for line in event["data"] if isinstance(event["data"], list) else [event["data"]]:
                print(f"   {json.dumps(line, ensure_ascii=False) if not isinstance(line, str) else line}")


def _show_tool_call(event: dict[str, Any]) -> None:
    print(f"── tool call {event['call_id']}: {event['tool']} {event['arguments']}")
    if event.get("steps"):
        print(f"   executor {event.get('trace_id')}: {' → '.join(event['steps'])}")
    if event.get("mcp"):
        request, response = event["mcp"]["request"], event["mcp"]["response"] or {}
        result = response.get("result", {})
        text = " ".join(block.get("text", "") for block in result.get("content", []))
        print(f"   MCP id {request['id']} on server {event['server']}: tools/call {request['params']['name']} "
              f"{json.dumps(request['params']['arguments'])} → isError {str(result.get('isError', False)).lower()}, "
              f"text {_short(text, 50)}")  # fmt: skip
    if event.get("result") is not None:
        print(f"   result: {_short(json.dumps(event['result'], ensure_ascii=False), 90)}")


# ---- the drill: name the row and the first check ------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """The answer for one trace: its row, the first check, and why — with hints for wrong picks."""

    row: str
    check: str
    evidence: str  # where the trace shows it
    why_first: str  # why this check comes before the row's other two
    confusions: dict[str, str]  # a tempting wrong row → why it is not that


ANSWERS: dict[str, Diagnosis] = {
    "invented_answer": Diagnosis(
        "A", "call trace",
        "response 1 holds a message and no function_call: nothing was read, yet the answer quotes 'lines'",
        "the call trace answers the first question in seconds — was any tool called at all? Only then ask why "
        "not (the vague 'search' description) and add eval samples for it",
        {"B": "no tool was chosen at all — wrong or right — so this is not about picking the wrong one",
         "D": "row D needs a tool that succeeded; here no tool ran"}),
    "wrong_tool": Diagnosis(
        "B", "tool names",
        "the model called arch__read_text_file; request 1 declared two tools with the same name after the "
        "prefix and the same description, and the archive server answered",
        "the names and descriptions are what the model chose from: two identical readers leave it nothing to go "
        "on. Counter-examples and a smaller tool set are the fixes that follow",
        {"D": "the tool did succeed, but it was the wrong tool: check which tool was chosen before checking the "
              "call_id pairing",
         "A": "a tool was called; the answer quotes what it returned"}),
    "result_not_sent": Diagnosis(
        "D", "full context",
        "every MCP read succeeded, but requests 2 and 3 carry only the user's message: no function_call, no "
        "function_call_output — so the model asks for the same read again",
        "the result exists (the MCP responses show it); what is missing is in the next request's input. Read "
        "the full context the app sent before anything else",
        {"G": "the loop count is high, but that is the consequence: look at what request 2 carried",
         "E": "nothing failed — every tools/call has isError false",
         "A": "the model did call the tool, three times"}),
    "call_id_swap": Diagnosis(
        "D", "call_id",
        "each MCP read returned the right file, but in request 2 the output under notes.txt's call_id holds "
        "todo.md's three lines: the outputs were handed back by position, in the order the reads finished",
        "compare each function_call_output with the call its call_id names (notes.txt asked for 2 lines and got "
        "3 to-do items). The pairing is wrong before the output structure or the rest of the context matters",
        {"B": "the right tool was called for every file",
         "E": "every read succeeded; the answer is wrong because results went to the wrong calls"}),
    "error_as_success": Diagnosis(
        "E", "error classification",
        "the MCP response says isError true (FORBIDDEN: path is outside /workspace), but the output sent "
        "back is only its message (path is outside /workspace) — no ok: false, no code — so the model quoted it "
        "as file content",
        "the sandbox worked; the failure was lost on the way back. Check that every failure reaches the model "
        "as a classified error ({ok: false, error: {code, retryable}}) before tuning retries or stop rules",
        {"H": "nothing over-reached: the server refused the read (isError true); the app dropped the refusal",
         "D": "the tool did not succeed — it refused"}),
    "loose_arguments": Diagnosis(
        "C", "strict mode",
        "the call sent head as the string \"3\"; the server refused it with INVALID_INPUT; request 1 declared "
        "the tool with strict: false",
        "the rule already says head is an integer, so the description is not the gap: without strict mode "
        "nothing holds the model to that rule. Turn strict on (nulls for optional fields) first",
        {"E": "the failure was reported correctly and the model did not guess; the problem is how often the "
              "arguments are wrong",
         "H": "nothing was over-reached: the arguments never passed the schema"}),
    "serial_slow": Diagnosis(
        "G", "loop count",
        "four model requests for three independent reads: parallel_tool_calls: false, one call per response, "
        "and each request resends the growing context",
        "the token bill follows from the number of rounds: count the model requests per task first; tool time "
        "is small here",
        {"D": "every answer is right; only the cost is wrong",
         "B": "the right tool is chosen every time"}),
    "blind_retry": Diagnosis(
        "F", "idempotency key",
        "trace-0001 stored the record and then timed out; the app sent the same call again (trace-0002), "
        "which wrote a second record: the write carried no idempotency key",
        "a timeout means 'unknown', not 'not done'. With a key the retry would have replayed the stored result; "
        "the execution record and a status query are how you repair it afterwards",
        {"E": "the failure was classified correctly (TIMEOUT, retryable) — the mistake is retrying a write "
              "that has no key",
         "G": "this is not about cost: the user's data changed twice"}),
    "injection": Diagnosis(
        "H", "approval and audit",
        "after reading the email the model called apply_note_update; its executor steps say 'approval ok' "
        "although nobody approved this action, and the audit log shows it ran",
        "identity and scope were fine — alice writing her own notes. What let it through is an approval not "
        "bound to this exact action; the audit log shows which input led to which call",
        {"B": "the model chose the tool the email told it to; the app must not let text in a tool result "
              "authorize a write",
         "E": "nothing failed: the write succeeded, which is the problem"}),
}
EXERCISE_TRACES = tuple(name for name in TRACES if name != "invented_answer")
"""The traces the learner diagnoses (`invented_answer` is the worked example)."""


def check_diagnoses(answers: dict[str, tuple[str, str]]) -> bool:
    """Check `{trace name: (row letter, first check)}` for every exercise trace; explain the first
    wrong one — the evidence in the trace, and why this check comes first."""
    if not_answered(answers):
        return failed("Not answered yet: fill in answers = {trace name: (row letter, first check)}.")
    if not isinstance(answers, dict):
        return failed(f"answers must be a dict {{trace name: (row letter, first check)}}; got a {type(answers).__name__}.")
    if unknown := [name for name in answers if name not in ANSWERS]:
        return failed(f"{unknown[0]!r} is not a trace; the traces are: {', '.join(EXERCISE_TRACES)}.")
    for name in EXERCISE_TRACES:
        given = answers.get(name, ...)
        if not_answered(given) or (isinstance(given, tuple) and ... in given):
            return failed(f"Not answered yet: {name} still needs (row letter, first check).")
        if not (isinstance(given, tuple | list) and len(given) == 2 and all(isinstance(x, str) for x in given)):
            return failed(f"{name}: give a pair (row letter, first check), e.g. (\"D\", \"call_id\"); got {given!r}.")
        letter, check = given[0].strip().upper(), given[1].strip()
        expected = ANSWERS[name]
        if letter not in ROWS:
            return failed(f"{name}: {letter!r} is not a row; the rows are A–H (show_diagnosis_table()).")
        if letter != expected.row:
            why = expected.confusions.get(letter, f"look at the evidence again: {expected.evidence}")
            return failed(f"{name}: not row {letter} ({ROWS[letter].symptom}) — {why}.")
        if check not in ROWS[letter].checks:
            return failed(f"{name}: {check!r} is not one of row {letter}'s checks: {', '.join(ROWS[letter].checks)}.")
        if check != expected.check:
            return failed(f"{name}: row {letter} is right, but check {expected.check!r} first, not {check!r}: "
                          f"{expected.why_first}.")  # fmt: skip
    return passed(f"all {len(EXERCISE_TRACES)} traces diagnosed: the right row and the right first check for each.")


SOLUTION: dict[str, tuple[str, str]] = {name: (ANSWERS[name].row, ANSWERS[name].check) for name in EXERCISE_TRACES}


def main(argv: list[str] | None = None) -> None:
    """`python -m course_lib.drills --regenerate [OUT_DIR]`."""
    parser = argparse.ArgumentParser(prog="python -m course_lib.drills", description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="record the broken traces again and write them")
    parser.add_argument("out_dir", nargs="?", type=Path, help="where to write (default: fixtures/broken_traces)")
    options = parser.parse_args(argv)
    if not options.regenerate:
        parser.error("nothing to do: pass --regenerate")
    for path in regenerate(options.out_dir):
        print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
