"""The same table for every framework's run: rule / value / result, the ids that pair them, and
what happened to a refused read.

    show_wire(run)            # every call of the run, in the order the model made them

One row per object that crossed, in the order it crossed, for each call (`trace.calls`):

    kind    object                  id                      what crossed
    rule    tools[] → model         ·                       read_text_file(path, head?, tail?) · strict false
    value   function_call           call_id call_8cfd2d5c…  {"path":"/workspace/notes.txt","head":5}
    value   tools/call              id 3                    {"path": "/workspace/notes.txt", "head": 5}
    result  tools/call result       id 3                    isError false · content: 5 lines · structuredContent {path, text, lines}
    result  function_call_output    call_id call_8cfd2d5c…  [input_text] "A tool call involves…" (5 lines)
    result  answer                  ·                       "Here are the first 5 lines of …"

A refused read (`isError: true`) gets the same rows, and its `function_call_output` says whether
the failure is still marked by its shape (`trace.failure_marked`) or left to words. Every value is
printed as it crossed, cut to fit one line (the cut is marked …); no id is made up, none hidden.
"""

from __future__ import annotations

import json
from typing import Any

from course_lib.frameworks import envelope
from course_lib.frameworks.bench import Run
from course_lib.frameworks.trace import CallTrace, calls, failure_marked, output_text
from course_lib.lang import display_width, pad, say

WIDTH = 62  # characters of "what crossed" per row


def clip(text: str, width: int = WIDTH) -> str:
    """`text` on one line (newlines shown as \\n), cut to `width` characters with … when longer."""
    flat = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _lines(text: str) -> str:
    count = len(text.splitlines())
    return say("{n} lines", "{n} 行", n=count) if count != 1 else say("1 line", "1 行")


_TYPES = {"string": "str", "integer": "int", "number": "num", "boolean": "bool", "object": "obj", "array": "list"}


def _kind(schema: dict[str, Any]) -> str:
    """One property's rule in a few characters: `int≥1|null`, `str`."""
    branches = schema.get("anyOf") or schema.get("oneOf") or [schema]
    kinds = []
    for branch in branches:
        types = branch.get("type") if isinstance(branch, dict) else None
        for name in types if isinstance(types, list) else [types]:
            if name is None:
                continue
            bound = f"≥{branch['minimum']}" if isinstance(branch, dict) and "minimum" in branch else ""
            kinds.append(_TYPES.get(name, str(name)) + bound)
    return "|".join(kinds) or "any"


def signature(declaration: dict[str, Any] | None) -> str:
    """A declaration as the model sees its rule: `name(path: str, head?: int≥1|null) · strict false`
    (`?`: not required; a bound the schema states as a keyword, not in a description)."""
    if not declaration:
        return "·"
    schema = declaration.get("parameters") or {}
    required = set(schema.get("required") or [])
    names = [f"{name}{'' if name in required else '?'}: {_kind(rule)}"
             for name, rule in (schema.get("properties") or {}).items() if isinstance(rule, dict)]
    strict = f" · strict {json.dumps(declaration['strict'])}" if "strict" in declaration else ""
    return f"{declaration.get('name')}({', '.join(names)}){strict}"


def answer_rule(fmt: dict[str, Any]) -> str:
    """A structured answer's rule (`text.format`) in one line: type, name, strict, the keys it requires."""
    schema = fmt.get("schema") or {}
    keys = ", ".join(schema.get("properties") or {})
    return f'{fmt.get("type")} "{fmt.get("name")}" · strict {json.dumps(fmt.get("strict"))} · {{{keys}}}'


def describe_result(result: dict[str, Any] | None) -> str:
    """An MCP tool result in one line: isError, what its content holds, the keys of structuredContent."""
    if result is None:
        return "·"
    texts = "".join(block.get("text", "") for block in result.get("content") or [] if block.get("type") == "text")
    parts = [f"isError {json.dumps(bool(result.get('isError')))}"]
    parts.append(f'"{clip(texts, 40)}"' if result.get("isError") else f"content: {_lines(texts)}")
    if isinstance(result.get("structuredContent"), dict):
        parts.append("structuredContent {" + ", ".join(result["structuredContent"]) + "}")
    return " · ".join(parts)


def describe_output(output: Any) -> str:
    """A `function_call_output.output` in one line: its shape (parts, JSON, text) and its start."""
    text = output_text(output)
    if isinstance(output, list):
        kinds = ",".join(sorted({str(part.get("type")) for part in output if isinstance(part, dict)}))
        return f'[{kinds}] "{clip(text, 44)}" ({_lines(text)})'
    try:
        value = json.loads(text)
    except ValueError:
        return f'"{clip(text, 48)}"' + ("" if "\n" not in text.strip() else f" ({_lines(text)})")
    if isinstance(value, dict) and "error" not in value and value.get("ok") is not False:
        return "JSON {" + ", ".join(value) + "}"
    return "JSON " + clip(json.dumps(value, ensure_ascii=False, separators=(",", ":")), 56)


OUTPUT_TOOLS = ("final_result", "StructuredOutput")  # pydantic-ai's and Claude Code's default output tools


def _output_tool(trace: CallTrace) -> bool:
    """A call that carries the answer itself: a known output tool, or one the request forced by name."""
    choice = trace.asked.request.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("name") == trace.call.get("name")
    return trace.call.get("name") in OUTPUT_TOOLS or forced or choice == "required"


def rows(trace: CallTrace, *, mcp_ids: bool = True) -> list[tuple[str, str, str, str]]:
    """The table's rows for one call: (kind, object, id, what crossed); `mcp_ids=False` prints `id …` for
    the JSON-RPC ids (a client whose handshake races numbers its requests differently from run to run)."""
    ids = lambda value: "·" if value is None else (str(value) if mcp_ids else "…")  # noqa: E731
    call_id = trace.call_id or "·"
    rule = signature(trace.declaration)
    choice = trace.asked.request.get("tool_choice")
    if choice not in (None, "auto"):
        rule += f" · tool_choice {json.dumps(choice)}"
    out = [(say("rule", "规则"), say("tools[] → model", "tools[] → 模型"), "·", rule)]
    if trace.answer_format is not None:
        out.append((say("rule", "规则"), say("text.format → model", "text.format → 模型"), "·", answer_rule(trace.answer_format)))
    call_kind, feedback_kind = ("tool_use", "tool_result") if trace.messages else ("function_call", "function_call_output")
    out.append((say("value", "值"), call_kind, call_id, clip(trace.call.get("arguments", ""), WIDTH)))
    if trace.mcp_request is None:
        out.append((say("value", "值"), "tools/call", "·",
                    say("none: no server ran this call", "没有：没有服务器执行这个调用")))
        if trace.feedback is None:
            if _output_tool(trace):  # its arguments are the answer
                out.append((say("result", "结果"), say("answer", "回答"), "·",
                            say("the call's arguments: the framework parses and validates them",
                                "这个调用的参数：由框架解析并校验")))
            else:
                out.append((say("result", "结果"), say("feedback", "反馈"), "·",
                            say("none went back: the run stopped here", "没有发回：运行在这里停止了")))
            return out
    else:
        arguments = (trace.mcp_request.get("params") or {}).get("arguments")
        sent = clip(json.dumps(arguments, ensure_ascii=False), WIDTH - 18 if trace.dropped_nulls else WIDTH)
        if trace.dropped_nulls:
            sent += "  " + say("(null {k} dropped)", "（丢掉了 null 的 {k}）", k=", ".join(trace.dropped_nulls))
        out.append((say("value", "值"), "tools/call", f"id {ids(trace.mcp_id)}", sent))
        out.append((say("result", "结果"), say("tools/call result", "tools/call 结果"), f"id {ids(trace.mcp_id)}",
                    describe_result(trace.result)))
    if trace.feedback is not None:
        what = describe_output(trace.feedback.get("output"))
        if trace.refused:
            if trace.feedback.get("is_error"):
                what += "  " + say("✓ is_error true", "✓ is_error 为 true")
            else:
                what += "  " + (say("✓ failure marked", "✓ 失败有标记") if failure_marked(trace.feedback.get("output"))
                                else say("✗ isError dropped: words only", "✗ isError 丢了：只剩文字"))
        out.append((say("result", "结果"), feedback_kind, str(trace.feedback.get("call_id")), what))
    answer = trace.answer
    if answer is None and trace.answered is not None:
        named = [c.get("name") for c in envelope.calls_in(envelope.response_of(trace.answered) or {}, trace.messages)]
        answer_text = say("none yet: the model called {n} next", "还没有：模型接着调用了 {n}", n=", ".join(named)) if named else "·"
    else:
        answer_text = "·" if answer is None else f'"{clip(answer, WIDTH - 2)}"'
    out.append((say("result", "结果"), say("answer", "回答"), "·", answer_text))
    return out


def show_wire(run: Run, *, tasks: list[str] | None = None, call_ids: list[str] | None = None, mcp_ids: bool = True) -> None:
    """Print the run's table: each call (of the tasks named, or the call ids given, or all), its rows
    in the order they crossed. A task that made no call is said so (nothing crossed to the server)."""
    traces = [t for t in calls(run) if call_ids is None or t.call_id in call_ids]
    print(f"── {run.label} " + "─" * max(0, 96 - display_width(run.label)))
    header = (say("kind", "种类"), say("object", "对象"), "id", say("what crossed", "线上内容"))
    widths = (8, 22, max([19] + [len(t.call_id) + 2 for t in traces]))
    print("".join(pad(h, w) for h, w in zip(header, widths)) + header[3])
    shown = [t for t in traces if tasks is None or t.task in tasks]
    for task in tasks or []:
        if not any(t.task == task for t in traces):
            print(say("  (no call for {task!r}: nothing crossed to the server)", "  （{task!r} 没有调用：没有任何东西发往服务器）",
                      task=task))
    for number, trace in enumerate(shown):
        if number:
            print()
        print(f"  {clip(trace.task, 90)}")
        for kind, obj, identity, what in rows(trace, mcp_ids=mcp_ids):
            print("".join(pad(text, width) for text, width in zip((kind, obj, identity), widths)) + what)
