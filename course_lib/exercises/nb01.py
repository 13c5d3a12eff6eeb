"""Checks for notebook 01 (declaring tools).

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
texts quoted from elsewhere (the model API's refusals, `strict_schema_problems`, the arguments
checks) stay as they are.

- `check_strict_search_notes(schema)`: the learner rewrites the MCP `inputSchema` of
  `search_notes` (the notes assistant's search tool) for strict mode, by hand. The schema is sent
  to the offline model as a strict function tool (a real request, refused with a real 400 if it
  breaks strict mode's rules), then real instances are validated against it with `jsonschema` to
  make sure no property lost its meaning.
- `check_tool_choices(answer)`: two `tool_choice` values, each sent in a real request that
  declares two reading tools (`fs__read_text_file`, `backup__read_text_file`); the check looks at
  what the model really did, and runs the backup call through the real host.
"""

from __future__ import annotations

from typing import Any

import mcp_types
import openai
from jsonschema import Draft202012Validator, SchemaError

from course_lib.arguments import ArgumentsError, parse_read_args, quote
from course_lib.declarations import strict_schema_problems
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.offline import model_name, offline_course
from course_lib.lang import say

SEARCH_NOTES = mcp_types.Tool(
    name="search_notes",
    description=(
        "Search the current user's personal technical notes by question or keyword. Only existing "
        "notes, never the internet. Returns title, path, snippet and score for each match. To read a "
        "whole note, search first, then call read_note."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The technical question or keywords to search for"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "At most this many results"},
        },
        "required": ["query"],
    },
)
"""The MCP declaration of the notes assistant's search tool (a rule, as `tools/list` would give it)."""

SEARCH_ALIAS = "notes__search_notes"


def _api_message(error: openai.BadRequestError) -> str:
    """The API's own sentence, without the SDK's "Error code: 400 - " prefix."""
    body = error.body if isinstance(error.body, dict) else {}
    return str(body.get("message") or error.message)


# ---- exercise 1: make search_notes strict by hand ----------------------------------------------

MEANING_CASES: list[tuple[dict[str, Any], bool, str]] = [
    ({"query": "strict mode", "limit": 5}, True,
     "a plain call {'query': 'strict mode', 'limit': 5} is refused by your schema"),
    ({"query": "strict mode", "limit": None}, True,
     "limit was optional: in strict mode the model must always send it, so it has to accept null "
     "(\"no limit given\"); yours refuses null"),
    ({"query": None, "limit": 5}, False,
     "query was required: it must not accept null, or the model may search for nothing; yours accepts "
     "{'query': None}"),
    ({"query": 5, "limit": 5}, False, "query must stay a string; yours accepts the number 5"),
    ({"query": "strict mode", "limit": "5"}, False, "limit must stay an integer; yours accepts the string '5'"),
    ({"query": "strict mode", "limit": 2.5}, False, "limit must stay an integer; yours accepts 2.5"),
    ({"query": "strict mode", "limit": 0}, False, "limit lost its range (1 to 20 in the MCP rule); yours accepts 0"),
    ({"query": "strict mode", "limit": 21}, False, "limit lost its range (1 to 20 in the MCP rule); yours accepts 21"),
]
"""(arguments object, must it be valid?, what it means when the learner's schema disagrees)."""

MEANINGS_ZH = [
    "一次普通的调用 {'query': 'strict mode', 'limit': 5} 被你的 schema 拒绝了",
    "limit 原本是可选的：严格模式下模型必须总是发送它，所以它得接受 null（“没有给出 limit”）；你的拒绝了 null",
    "query 原本是必填的：它不能接受 null，否则模型可能什么也不搜；你的接受 {'query': None}",
    "query 必须仍是字符串；你的接受数字 5",
    "limit 必须仍是整数；你的接受字符串 '5'",
    "limit 必须仍是整数；你的接受 2.5",
    "limit 丢掉了它的范围（MCP 规则里是 1 到 20）；你的接受 0",
    "limit 丢掉了它的范围（MCP 规则里是 1 到 20）；你的接受 21",
]
"""The same meanings in Chinese, in MEANING_CASES' order."""


def _offline_refusal(schema: dict[str, Any]) -> str | None:
    """Send `schema` as a strict function tool in a real request; the API's refusal, or None."""
    course = offline_course()
    tool = {"type": "function", "name": SEARCH_ALIAS, "description": SEARCH_NOTES.description,
            "parameters": schema, "strict": True}
    try:
        course.client.responses.create(model=model_name(), input="Search my notes for strict mode", tools=[tool])
    except openai.BadRequestError as error:
        return _api_message(error)
    finally:
        course.close()
    return None


def check_strict_search_notes(schema: dict[str, Any]) -> bool:
    """Is `schema` a strict-mode version of SEARCH_NOTES.input_schema that keeps every meaning?"""
    if not_answered(schema):
        return failed(say("Not answered yet: write the strict parameters schema of search_notes as a dict.",
                          "还没有作答：把 search_notes 的严格 parameters schema 写成一个 dict。"))
    if not isinstance(schema, dict):
        return failed(say(f"Give the schema as a dict; you gave {type(schema).__name__}.",
                          f"请以 dict 给出 schema；你给的是 {type(schema).__name__}。"))
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        at = "/".join(map(str, error.path)) or "root"
        return failed(say(f"This is not a valid JSON Schema: {error.message} (at {at}).",
                          f"这不是合法的 JSON Schema：{error.message}（位于 {at}）。"))
    problems = strict_schema_problems(schema)
    if problems:
        return failed(say(f"Not strict yet: {problems[0]}", f"还不是严格模式：{problems[0]}"))
    original = list(SEARCH_NOTES.input_schema["properties"])
    properties = list(schema.get("properties", {}))
    lost = [name for name in original if name not in properties]
    if lost:
        return failed(say(f"You dropped the property {lost[0]!r}: strict mode changes how a property is "
                          "declared, never which properties the tool has.",
                          f"你丢掉了属性 {lost[0]!r}：严格模式改变的是属性的声明方式，从不改变工具有哪些属性。"))
    added = [name for name in properties if name not in original]
    if added:
        keep = ", ".join(original)
        return failed(say(f"{added[0]!r} is not a property of search_notes; keep exactly {keep}.",
                          f"{added[0]!r} 不是 search_notes 的属性；请恰好保留 {keep}。"))
    refusal = _offline_refusal(schema)
    if refusal:
        return failed(say(f"The model API refused your strict tool: {refusal}",
                          f"模型 API 拒绝了你的严格工具：{refusal}"))
    validator = Draft202012Validator(schema)
    for (instance, valid, meaning), meaning_zh in zip(MEANING_CASES, MEANINGS_ZH, strict=True):
        if validator.is_valid(instance) != valid:
            return failed(say(meaning + ".", meaning_zh + "。") + _meaning_hint(schema, instance))
    return passed(say("Strict and faithful: the model API accepts it with strict: true; query stays a required "
                      "string, limit an integer from 1 to 20 or null.",
                      "既严格又忠实：模型 API 在 strict: true 下接受它；query 仍是必填的字符串，limit 仍是 1 到 20 "
                      "的整数或 null。"))


def _meaning_hint(schema: dict[str, Any], instance: dict[str, Any]) -> str:
    """Name the usual cause when null is refused: an OpenAPI keyword JSON Schema ignores."""
    limit = schema.get("properties", {}).get("limit", {})
    if instance.get("limit", 0) is None and isinstance(limit, dict) and "nullable" in limit:
        return say(' "nullable": true is OpenAPI, not JSON Schema: a JSON Schema validator ignores it. Allow null '
                   'with "type": ["integer", "null"] or anyOf [..., {"type": "null"}].',
                   ' "nullable": true 是 OpenAPI 的写法，不是 JSON Schema：JSON Schema 校验器会忽略它。要允许 null，'
                   '请写 "type": ["integer", "null"] 或 anyOf [..., {"type": "null"}]。')
    return ""


def _strict_search_notes_solution() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The technical question or keywords to search for"},
            "limit": {
                "anyOf": [{"type": "integer", "minimum": 1, "maximum": 20}, {"type": "null"}],
                "description": "At most this many results; null for the default",
            },
        },
        "required": ["query", "limit"],
        "additionalProperties": False,
    }


# ---- exercise 2: steer the choice with tool_choice -----------------------------------------------

CHOICE_TASK = "Show the first 5 lines of /workspace/notes.txt"
SITUATIONS = {
    "use_backup": "the app has decided this step must read through backup__read_text_file",
    "no_tools": "this turn the model must answer without calling any tool",
}
SITUATIONS_ZH = {
    "use_backup": "应用已经决定，这一步必须通过 backup__read_text_file 读取",
    "no_tools": "这一轮模型必须不调用任何工具就作答",
}


def _two_reader_course() -> Any:
    """A course whose host has two servers over the same workspace: `fs` (declared first) and `backup`."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    course = offline_course()
    course.host.add_server("backup", build_server(Workspace(workspace_dir())))
    return course


def _ask(course: Any, tool_choice: Any) -> tuple[list[Any], str, str | None]:
    """One real request with both tools declared: (function calls, reply text, API refusal or None)."""
    try:
        response = course.client.responses.create(
            model=model_name(), input=CHOICE_TASK, tools=course.host.responses_tools(), tool_choice=tool_choice
        )
    except openai.BadRequestError as error:
        return [], "", _api_message(error)
    calls = [item for item in response.output if item.type == "function_call"]
    return calls, response.output_text, None


def _refused(key: str, refusal: str) -> bool:
    hint = ""
    if "not found in 'tools'" in refusal:
        hint = say(" Name the tool as the model sees it: its alias, prefix included.",
                   " 请用模型看到的名字称呼这个工具：它的别名，包括前缀。")
    elif "Supported values are" in refusal:
        hint = say(' A tool name alone is not a mode: name a function with {"type": "function", "name": ...}.',
                   ' 单独一个工具名不是一种模式：请用 {"type": "function", "name": ...} 点名一个函数。')
    return failed(say(f"{key}: the model API refused your tool_choice: {refusal}{hint}",
                      f"{key}：模型 API 拒绝了你的 tool_choice：{refusal}{hint}"))


def check_tool_choices(answer: dict[str, Any]) -> bool:
    """Send each tool_choice in a real request and check what the model did."""
    if not_answered(answer) or (isinstance(answer, dict) and all(v is ... for v in answer.values())):
        keys = ", ".join(SITUATIONS)
        return failed(say(f"Not answered yet: give a tool_choice for each of {keys}.",
                          f"还没有作答：为 {keys} 各给出一个 tool_choice。"))
    if not isinstance(answer, dict):
        keys = ", ".join(SITUATIONS)
        return failed(say(f"Give a dict with the keys {keys}; you gave {type(answer).__name__}.",
                          f"请给出一个带键 {keys} 的 dict；你给的是 {type(answer).__name__}。"))
    for key in SITUATIONS:
        if answer.get(key, ...) is ...:
            return failed(say(f"Not answered yet for {key!r} ({SITUATIONS[key]}).",
                              f"{key!r} 还没有作答（{SITUATIONS_ZH[key]}）。"))
    course = _two_reader_course()
    try:
        choice = answer["use_backup"]
        calls, text, refusal = _ask(course, choice)
        if refusal:
            return _refused("use_backup", refusal)
        names = [call.name for call in calls]
        if names != ["backup__read_text_file"]:
            if not names:
                return failed(say(f"use_backup: with {quote(choice)} the model made no call; it replied {quote(text, 60)}.",
                                  f"use_backup：用 {quote(choice)} 时模型没有做任何调用；它回答 {quote(text, 60)}。"))
            why = ""
            if choice in ("auto", "required"):
                why = say(f" {choice!r} only decides whether a call must happen; which tool is still the "
                          "model's pick. Name the tool this step needs.",
                          f" {choice!r} 只决定是否必须调用；调用哪个工具仍由模型挑选。请点名这一步需要的工具。")
            called = ", ".join(names)
            return failed(say(f"use_backup: with {quote(choice)} the model called {called}.{why}",
                              f"use_backup：用 {quote(choice)} 时模型调用了 {called}。{why}"))
        try:
            arguments = parse_read_args(calls[0].arguments)
        except ArgumentsError as error:
            return failed(say(f"use_backup: the call's arguments break the rule: {error.message}",
                              f"use_backup：这次调用的参数违反了规则：{error.message}"))
        executed = course.host.call("backup__read_text_file", arguments.model_dump(exclude_none=True))
        if executed.result is None or executed.result.is_error:
            return failed(say("use_backup: the backup server did not read the file; check the task and the tool.",
                              "use_backup：backup 服务器没有读取文件；请检查任务和工具。"))
        choice = answer["no_tools"]
        calls, text, refusal = _ask(course, choice)
        if refusal:
            return _refused("no_tools", refusal)
        if calls:
            return failed(say(f"no_tools: with {quote(choice)} the model still called {calls[0].name}: the task names a "
                              "file, so it reads it. Turn tool calls off for this turn.",
                              f"no_tools：用 {quote(choice)} 时模型仍然调用了 {calls[0].name}：任务点名了一个文件，"
                              "所以它去读。请在这一轮关掉工具调用。"))
    finally:
        course.close()
    return passed(say("The model called backup__read_text_file (and the backup server read the file), then "
                      "answered without any call. tool_choice steered the choice; the rule stayed the same.",
                      "模型调用了 backup__read_text_file（backup 服务器读取了文件），然后不做任何调用就作答了。"
                      "tool_choice 左右了选择；规则保持不变。"))


SOLUTIONS: Solutions = {
    "check_strict_search_notes": _strict_search_notes_solution,
    "check_tool_choices": lambda: {
        "use_backup": {"type": "function", "name": "backup__read_text_file"},
        "no_tools": "none",
    },
}
