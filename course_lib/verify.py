"""Verification: check that a recorded round trip keeps rules, values and results apart.

    python -m course_lib.verify fields   [FILE]   # default fixtures/field_fragments.json
    python -m course_lib.verify roundtrip [FILE]  # default fixtures/responses_roundtrip.json

Each check names one link of the chain. Exit status 0 when every link holds; 1 otherwise, with
the broken links named. The checks read recorded JSON only: they call no model, connect to no
server and read no workspace file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_lib.lang import say
from course_lib.paths import fixtures_dir
from course_lib.results import feedback_text


@dataclass(frozen=True)
class Finding:
    """One link of the chain: its name, whether it holds, and why not."""

    link: str
    ok: bool
    detail: str = ""

    def __str__(self) -> str:
        """The finding as printed: in the zh-CN edition (`lang.say`) the link's name in Chinese."""
        link = say("{link}", "{zh}", link=self.link, zh=LINKS_ZH.get(self.link, self.link))
        verdict = say("ok  ", "通过") if self.ok else say("FAIL", "失败")  # the same width: the names line up
        return f"{verdict} {link}" + (say(": {d}", "：{d}", d=self.detail) if self.detail else "")


LINKS_ZH = {
    "the first response holds a function_call": "第一个响应里有一个 function_call",
    "tool declarations kept in the second request": "第二次请求保留了工具声明",
    "rules stay rules": "规则仍是规则",
    "model arguments are JSON text": "模型的参数是 JSON 文本",
    "MCP arguments are an object": "MCP 的参数是一个对象",
    "values equal after parsing": "解析之后值相等",
    "alias maps back to the MCP tool": "别名能对应回 MCP 工具",
    "MCP request/response ids pair": "MCP 请求与响应的 id 成对",
    "call and feedback call_ids pair": "调用与反馈的 call_id 成对",
    "feedback comes from the tool result": "反馈来自工具的结果",
    "task and original call stay in context, in order": "任务和原来的调用按顺序留在上下文里",
    "final answer built from the feedback": "最终回答依据反馈写出",
}
"""Each link's name in the zh-CN edition; `Finding.link` itself stays English (a key the tests name)."""


class Broken(Exception):
    """Raised inside a check to say what is wrong."""


def _function_calls(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if isinstance(i, dict) and i.get("type") == "function_call"]


def _parsed(call: dict[str, Any]) -> dict[str, Any]:
    text = call.get("arguments")
    if not isinstance(text, str):
        raise Broken(say("function_call.arguments must be JSON text, found {t}",
                         "function_call.arguments 必须是 JSON 文本，却是 {t}", t=type(text).__name__))
    value = json.loads(text)
    if not isinstance(value, dict):
        raise Broken(say("function_call.arguments must encode a JSON object",
                         "function_call.arguments 必须编码一个 JSON 对象"))
    return value


def _result_text(mcp_response: dict[str, Any]) -> str:
    content = mcp_response.get("result", {}).get("content", [])
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


# -- the links, each a small function over the recorded pieces ------------------------------


def rules_stay_rules(decl_mcp: dict[str, Any], decl_resp: dict[str, Any], call: dict[str, Any]) -> None:
    schema = decl_resp.get("parameters")
    if not isinstance(schema, dict) or schema.get("type") != "object" or "properties" not in schema:
        raise Broken(say("the Responses tool's parameters is not an object schema",
                         "Responses 工具的 parameters 不是一个对象 schema"))
    if decl_mcp is not None and decl_mcp.get("inputSchema", {}).get("properties") != schema.get("properties"):
        raise Broken(say("parameters.properties differs from the MCP inputSchema.properties",
                         "parameters.properties 与 MCP 的 inputSchema.properties 不同"))
    rule = json.dumps(schema)
    for key, value in _parsed(call).items():
        if isinstance(value, str) and value and json.dumps(value) in rule:
            raise Broken(say("the value of {key} appears inside the rule: a value was written into the schema",
                             "{key} 的值出现在规则里：一个值被写进了 schema", key=repr(key)))


def arguments_are_text(call: dict[str, Any]) -> None:
    _parsed(call)


def mcp_arguments_are_object(mcp_request: dict[str, Any]) -> None:
    if not isinstance(mcp_request.get("params", {}).get("arguments"), dict):
        raise Broken(say("MCP params.arguments must be a JSON object", "MCP params.arguments 必须是一个 JSON 对象"))


def values_survive_parsing(call: dict[str, Any], mcp_request: dict[str, Any]) -> None:
    sent = mcp_request.get("params", {}).get("arguments")
    if _parsed(call) != sent:
        raise Broken(say("parsed arguments {parsed} differ from MCP params.arguments {sent}",
                         "解析后的参数 {parsed} 与 MCP params.arguments {sent} 不同", parsed=_parsed(call), sent=sent))


def alias_maps_to_tool(call: dict[str, Any], mcp_request: dict[str, Any]) -> None:
    name = mcp_request.get("params", {}).get("name", "")
    if call.get("name") != name and not str(call.get("name", "")).endswith(f"__{name}"):
        raise Broken(say("model tool {alias} does not map to MCP tool {name}",
                         "模型一侧的工具 {alias} 对应不到 MCP 工具 {name}", alias=repr(call.get("name")), name=repr(name)))


def mcp_ids_pair(mcp_request: dict[str, Any], mcp_response: dict[str, Any]) -> None:
    if mcp_request.get("method") != "tools/call":
        raise Broken(say("the MCP request method is {method}, not 'tools/call'",
                         "MCP 请求的方法是 {method}，不是 'tools/call'", method=repr(mcp_request.get("method"))))
    if "id" not in mcp_request or mcp_request["id"] != mcp_response.get("id"):
        raise Broken(say("MCP response id {got} does not match request id {sent}",
                         "MCP 响应的 id {got} 与请求的 id {sent} 不一致",
                         got=repr(mcp_response.get("id")), sent=repr(mcp_request.get("id"))))


def feedback_pairs_with_call(call: dict[str, Any], feedback: dict[str, Any]) -> None:
    if feedback.get("type") != "function_call_output":
        raise Broken(say("the feedback item is not a function_call_output", "反馈项不是一个 function_call_output"))
    if feedback.get("call_id") != call.get("call_id"):
        raise Broken(say("feedback call_id {got} does not match call_id {sent}",
                         "反馈的 call_id {got} 与调用的 call_id {sent} 不一致",
                         got=repr(feedback.get("call_id")), sent=repr(call.get("call_id"))))


def _feedback_text(feedback: dict[str, Any]) -> str:
    """The feedback's text: `output` is a string or a list of content parts (`results.feedback_text`)."""
    output = feedback.get("output")
    return feedback_text(output) if isinstance(output, (str, list)) else str(output)


def feedback_from_result(feedback: dict[str, Any], mcp_response: dict[str, Any]) -> None:
    text, output = _result_text(mcp_response), _feedback_text(feedback)
    if mcp_response.get("result", {}).get("isError"):
        if '"ok": false' not in output:
            raise Broken(say("the tool failed (isError) but the feedback does not report a failure",
                             "工具失败了（isError），反馈却没有报告失败"))
    elif output != text:
        raise Broken(say("the feedback output is not the text of the MCP result", "反馈的 output 不是 MCP 结果的文本"))


def declarations_kept(request_1: dict[str, Any], request_2: dict[str, Any]) -> None:
    if not request_1.get("tools") or request_2.get("tools") != request_1.get("tools"):
        raise Broken(say("the second request does not carry the same tool declarations", "第二次请求没有带上同样的工具声明"))


def context_in_order(request_1: dict[str, Any], request_2: dict[str, Any], call: dict[str, Any]) -> None:
    first, second = request_1.get("input"), request_2.get("input")
    if not isinstance(first, list) or not isinstance(second, list) or second[: len(first)] != first:
        raise Broken(say("the second request does not start with the original task", "第二次请求不是以原来的任务开头"))
    rest = second[len(first) :]
    positions = [i for i, item in enumerate(rest) if isinstance(item, dict) and item.get("type") == "function_call"
                 and item.get("call_id") == call.get("call_id")]  # fmt: skip
    if not positions:
        raise Broken(say("the original function_call {call_id} is missing from the second request",
                         "第二次请求里缺少原来的 function_call {call_id}", call_id=repr(call.get("call_id"))))
    kept = rest[positions[0]]
    if kept.get("arguments") != call.get("arguments") or kept.get("name") != call.get("name"):
        raise Broken(say("the function_call in the second request differs from the one the model sent",
                         "第二次请求里的 function_call 与模型发出的那个不同"))
    outputs = [i for i, item in enumerate(rest) if isinstance(item, dict) and item.get("type") == "function_call_output"
               and item.get("call_id") == call.get("call_id")]  # fmt: skip
    if len(outputs) != 1 or outputs[0] < positions[0]:
        raise Broken(say("the second request needs exactly one function_call_output after its call",
                         "第二次请求在调用之后必须恰好有一个 function_call_output"))


def answer_from_feedback(response_2: dict[str, Any], feedback: dict[str, Any]) -> None:
    texts = [part.get("text", "") for item in response_2.get("output", []) if item.get("type") == "message"
             for part in item.get("content", []) if part.get("type") == "output_text"]  # fmt: skip
    if not texts:
        raise Broken(say("the second response has no message with output_text", "第二个响应里没有带 output_text 的消息"))
    output = _feedback_text(feedback)
    if '"ok": false' not in output and output not in "\n".join(texts):
        raise Broken(say("the final answer does not contain the tool's output", "最终回答里没有工具的 output"))


def _run(checks: list[tuple[str, Callable[[], None]]]) -> list[Finding]:
    findings = []
    for link, check in checks:
        try:
            check()
            findings.append(Finding(link, True))
        except (Broken, ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
            findings.append(Finding(link, False, str(error)))
    return findings


def check_fields(f: dict[str, Any]) -> list[Finding]:
    """Check the fragments of `field_fragments.json` against each other."""
    g = lambda key: f.get(key) or {}  # noqa: E731 - a missing fragment fails its checks, not the loader
    return _run([
        ("rules stay rules", lambda: rules_stay_rules(g("mcp_tool"), g("responses_tool"), g("function_call"))),
        ("model arguments are JSON text", lambda: arguments_are_text(g("function_call"))),
        ("MCP arguments are an object", lambda: mcp_arguments_are_object(g("mcp_request"))),
        ("values equal after parsing", lambda: values_survive_parsing(g("function_call"), g("mcp_request"))),
        ("alias maps back to the MCP tool", lambda: alias_maps_to_tool(g("function_call"), g("mcp_request"))),
        ("MCP request/response ids pair", lambda: mcp_ids_pair(g("mcp_request"), g("mcp_response"))),
        ("call and feedback call_ids pair", lambda: feedback_pairs_with_call(g("function_call"), g("function_call_output"))),
        ("feedback comes from the tool result", lambda: feedback_from_result(g("function_call_output"), g("mcp_response"))),
    ])  # fmt: skip


def check_roundtrip(r: dict[str, Any]) -> list[Finding]:
    """Check a full recorded round trip (`responses_roundtrip.json`)."""
    g = lambda key: r.get(key) or {}  # noqa: E731
    calls = _function_calls(g("response_1").get("output", []))
    call = calls[0] if calls else {}
    feedbacks = [i for i in g("request_2").get("input", []) if isinstance(i, dict)
                 and i.get("type") == "function_call_output"]  # fmt: skip
    feedback = next((i for i in feedbacks if i.get("call_id") == call.get("call_id")), feedbacks[0] if feedbacks else {})
    declared = (g("request_1").get("tools") or [{}])[0]
    missing = "" if calls else say("no function_call", "没有 function_call")
    return [Finding("the first response holds a function_call", bool(calls), missing)] + _run([
        ("tool declarations kept in the second request", lambda: declarations_kept(g("request_1"), g("request_2"))),
        ("rules stay rules", lambda: rules_stay_rules(None, declared, call)),
        ("model arguments are JSON text", lambda: arguments_are_text(call)),
        ("MCP arguments are an object", lambda: mcp_arguments_are_object(g("mcp_request"))),
        ("values equal after parsing", lambda: values_survive_parsing(call, g("mcp_request"))),
        ("alias maps back to the MCP tool", lambda: alias_maps_to_tool(call, g("mcp_request"))),
        ("MCP request/response ids pair", lambda: mcp_ids_pair(g("mcp_request"), g("mcp_response"))),
        ("call and feedback call_ids pair", lambda: feedback_pairs_with_call(call, feedback)),
        ("feedback comes from the tool result", lambda: feedback_from_result(feedback, g("mcp_response"))),
        ("task and original call stay in context, in order", lambda: context_in_order(g("request_1"), g("request_2"), call)),
        ("final answer built from the feedback", lambda: answer_from_feedback(g("response_2"), feedback)),
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.verify", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["fields", "roundtrip"])
    parser.add_argument("file", nargs="?", type=Path)
    args = parser.parse_args(argv)
    default = "field_fragments.json" if args.what == "fields" else "responses_roundtrip.json"
    path = args.file or fixtures_dir() / default
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"cannot read {path.name}: {error}", file=sys.stderr)
        return 2
    findings = (check_fields if args.what == "fields" else check_roundtrip)(data)
    for finding in findings:
        print(finding)
    broken = [f.link for f in findings if not f.ok]
    print(f"{len(findings) - len(broken)} of {len(findings)} links hold" + (f"; broken: {', '.join(broken)}" if broken else ""))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
