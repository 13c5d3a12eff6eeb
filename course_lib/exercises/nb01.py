"""Checks for notebook 01 (declaring tools).

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
texts quoted from elsewhere (the model API's refusals, `strict_schema_problems`, the arguments
checks) stay as they are.

- `check_strict_search_notes(schema)`: the learner rewrites the MCP `inputSchema` of
  `search_notes` (the notes assistant's search tool) for strict mode, by hand. The schema is sent
  to the offline model as a strict function tool (a real request, refused with a real 400 if it
  breaks strict mode's rules: the refusal table `course_lib.api_rules`, its keyword subset
  included), then real instances are validated against it with `jsonschema` to make sure no
  property lost its meaning (limit at every integer from -1 to 22: both sides of each bound), and
  on 468 generated calls (`SAME_VALUE_CASES`) it must accept exactly what the MCP rule accepts
  (limit null standing for limit left out). A `default` must say what the server does (limit null
  → 5, none for query); one that is right but not portable (Azure OpenAI refuses `default`) passes
  with that caution. A value that is not JSON, a whole tool where its parameters belong, a boolean
  schema: each is named before anything is sent.
- `check_tool_choices(answer)`: two `tool_choice` values, each sent in a real request that
  declares two reading tools (`fs__read_text_file`, `backup__read_text_file`); the check looks at
  what the model really did, and runs the backup call through the real host. Every shape the SDK's
  types allow is sent as it is (a typed param, the `ToolChoiceFunction` model, `allowed_tools`);
  the API's refusals get the step behind them (Chat's shape, None, a capitalised mode, a bare name).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
import openai
import pydantic
from jsonschema import Draft202012Validator, SchemaError

from course_lib.arguments import ArgumentsError, parse_read_args, quote
from course_lib.api_rules import strict_schema_portability
from course_lib.declarations import strict_schema_problems
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import as_dict, not_json, raised, shown, type_name
from course_lib.exercises.guard import guard_checks
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

MEANING_CASES: list[tuple[dict[str, Any], bool, str, str]] = [
    ({"query": "strict mode", "limit": 5}, True,
     "a plain call {'query': 'strict mode', 'limit': 5} is refused by your schema",
     "一次普通的调用 {'query': 'strict mode', 'limit': 5} 被你的 schema 拒绝了"),
    ({"query": "strict mode", "limit": None}, True,
     "limit was optional: in strict mode the model must always send it, so it has to accept null "
     "(\"no limit given\"); yours refuses null",
     "limit 原本是可选的：严格模式下模型必须总是发送它，所以它得接受 null（“没有给出 limit”）；你的拒绝了 null"),
    ({"query": None, "limit": 5}, False,
     "query was required: it must not accept null, or the model may search for nothing; yours accepts "
     "{'query': None}",
     "query 原本是必填的：它不能接受 null，否则模型可能什么也不搜；你的接受 {'query': None}"),
    ({"query": 5, "limit": 5}, False, "query must stay a string; yours accepts the number 5",
     "query 必须仍是字符串；你的接受数字 5"),
    ({"query": "strict mode", "limit": "5"}, False, "limit must stay an integer; yours accepts the string '5'",
     "limit 必须仍是整数；你的接受字符串 '5'"),
    ({"query": "strict mode", "limit": 2.5}, False, "limit must stay an integer; yours accepts 2.5",
     "limit 必须仍是整数；你的接受 2.5"),
    ({"query": "strict mode", "limit": True}, False, "limit must stay an integer; yours accepts the boolean true",
     "limit 必须仍是整数；你的接受布尔值 true"),
    *(({"query": "strict mode", "limit": n}, 1 <= n <= 20,
       f"limit must accept every integer from 1 to 20 (the MCP rule's range); yours refuses {n}" if 1 <= n <= 20 else
       f"limit lost its range (1 to 20 in the MCP rule); yours accepts {n}",
       f"limit 必须接受 1 到 20 的每一个整数（MCP 规则的范围）；你的拒绝了 {n}" if 1 <= n <= 20 else
       f"limit 丢掉了它的范围（MCP 规则里是 1 到 20）；你的接受 {n}")
      for n in sorted(range(-1, 23), key=lambda n: min(abs(n - 0.5), abs(n - 20.5)))),  # nearest a bound first
]  # fmt: skip
"""(arguments object, must it be valid?, what it means when the learner's schema disagrees, the same
in Chinese). The range is tried at every integer from -1 to 22, so each bound is tested on both sides."""


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


def _not_a_schema_object(schema: Any, where: str = "root") -> str | None:
    """Where a boolean schema (`true`/`false`) stands in place of an object, or None: JSON Schema
    allows one, but it says nothing strict mode can check."""
    if not isinstance(schema, dict):
        return where
    for name, sub in (schema.get("properties") or {}).items():
        if (found := _not_a_schema_object(sub, f"{where}/properties/{name}")) is not None:
            return found
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            if (found := _not_a_schema_object(sub, f"{where}/{key}/{i}")) is not None:
                return found
    return None


def _strict_hint(problem: str) -> str:
    """The step behind one of strict mode's refusals, in the learner's words."""
    if "'required'" in problem:
        return say(" Strict mode needs every property in required; an optional property becomes one that "
                   "also accepts null.",
                   " 严格模式要求 required 列出每一个属性；可选的属性改为同时接受 null 的属性。")
    if "'additionalProperties'" in problem:
        return say(' Add "additionalProperties": false to every object schema.',
                   ' 给每一个对象 schema 加上 "additionalProperties": false。')
    return ""


def check_strict_search_notes(schema: dict[str, Any]) -> bool:
    """Is `schema` a strict-mode version of SEARCH_NOTES.input_schema that keeps every meaning?"""
    if not_answered(schema):
        return failed(say("Not answered yet: write the strict parameters schema of search_notes as a dict "
                          "and set strict_search to it.",
                          "还没有作答：把 search_notes 的严格 parameters schema 写成一个 dict，赋给 strict_search。"))
    if not isinstance(schema, dict):
        return failed(say("Give the schema as a dict; you gave {kind} {value}.",
                          "请以 dict 给出 schema；你给的是 {kind} {value}。", kind=type_name(schema), value=shown(schema)))
    if (why := not_json(schema)) is not None:
        return failed(say("Your schema is not JSON, so it cannot be sent ({why}): use dicts, lists, strings, "
                          "numbers, true/false and None only.",
                          "你的 schema 不是 JSON，所以无法发送（{why}）：只能用 dict、list、字符串、数字、"
                          "true/false 和 None。", why=why))
    schema = json.loads(json.dumps(schema))  # from here on, plain JSON: nothing of the answer can raise
    if schema.get("type") == "function" and "parameters" in schema:
        return failed(say('This is a whole function tool {"type": "function", "name": ..., "parameters": ...}: '
                          "give only its parameters schema (the object with type, properties, required, "
                          "additionalProperties); the check puts it in a tool with strict: true itself.",
                          '这是一个完整的函数工具 {"type": "function", "name": ..., "parameters": ...}：'
                          "只给出它的 parameters schema（带 type、properties、required、additionalProperties 的对象）；"
                          "检查会自己把它放进一个 strict: true 的工具里。"))
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        at = "/".join(map(str, error.path)) or "root"
        return failed(say(f"This is not a valid JSON Schema: {error.message} (at {at}).",
                          f"这不是合法的 JSON Schema：{error.message}（位于 {at}）。"))
    except RecursionError:
        return failed(say("Your schema is nested too deeply to be checked; the strict schema of search_notes "
                          "is three levels deep.",
                          "你的 schema 嵌套得太深，无法检查；search_notes 的严格 schema 只有三层。"))
    if (where := _not_a_schema_object(schema)) is not None:
        return failed(say("At {where} there is a boolean schema (true/false): strict mode needs a schema object "
                          'there, such as {{"type": "string"}}.',
                          "在 {where} 处是一个布尔 schema（true/false）：严格模式在那里需要一个 schema 对象，"
                          '例如 {{"type": "string"}}。', where=where))
    problems = strict_schema_problems(schema)
    if problems:
        return failed(say(f"Not strict yet: {problems[0]}", f"还不是严格模式：{problems[0]}") + _strict_hint(problems[0]))
    original = list(SEARCH_NOTES.input_schema["properties"])
    properties = list(schema.get("properties", {}))
    lost = [name for name in original if name not in properties]
    added = [name for name in properties if name not in original]
    if lost and added:
        return failed(say("You renamed {lost!r} to {added!r}: strict mode changes how a property is declared, never "
                          "its name (the server reads {lost!r}).",
                          "你把 {lost!r} 改名成了 {added!r}：严格模式改变的是属性的声明方式，从不改变它的名字"
                          "（服务器读取的是 {lost!r}）。", lost=lost[0], added=added[0]))
    if lost:
        return failed(say(f"You dropped the property {lost[0]!r}: strict mode changes how a property is "
                          "declared, never which properties the tool has.",
                          f"你丢掉了属性 {lost[0]!r}：严格模式改变的是属性的声明方式，从不改变工具有哪些属性。"))
    if added:
        keep = ", ".join(original)
        return failed(say(f"{added[0]!r} is not a property of search_notes; keep exactly {keep}.",
                          f"{added[0]!r} 不是 search_notes 的属性；请恰好保留 {keep}。"))
    refusal = _offline_refusal(schema)
    if refusal:
        return failed(say(f"The model API refused your strict tool: {refusal}",
                          f"模型 API 拒绝了你的严格工具：{refusal}"))
    validator = Draft202012Validator(schema)
    for instance, valid, meaning, meaning_zh in MEANING_CASES:
        try:
            agrees = validator.is_valid(instance) == valid
        except Exception as error:  # e.g. a "pattern" that is not a regular expression
            return failed(say("Your schema could not be applied to {instance}: {error}.",
                              "你的 schema 无法用于 {instance}：{error}。", instance=instance, error=raised(error)))
        if not agrees:
            return failed(say(meaning + ".", meaning_zh + "。") + _meaning_hint(schema, instance))
    if (problem := _same_values(validator)) or (problem := _default_problem(schema)):
        return failed(problem)
    caution = ""
    if portability := strict_schema_portability(schema):
        caution = say(" One caution: {note}", "有一点要注意：{note}", note=portability[0])
    return passed(say("Strict and faithful: the model API accepts it with strict: true; query stays a required "
                      "string, limit an integer from 1 to 20 (each bound tried on both sides) or null, and on {n} "
                      "generated calls yours accepts exactly what the MCP rule accepts.{caution}",
                      "既严格又忠实：模型 API 在 strict: true 下接受它；query 仍是必填的字符串，limit 仍是 1 到 20 "
                      "的整数（每个边界的两侧都试过）或 null；在 {n} 个生成的调用上，你的 schema 接受的恰好是 MCP "
                      "规则接受的。{caution}", n=len(SAME_VALUE_CASES), caution=caution))


def _same_value_cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(a strict call's arguments, the MCP call they stand for): every query and limit below, where
    limit null stands for limit left out (strict mode makes the model always send it)."""
    queries: list[Any] = ["strict mode", "", " ", "问题", "a\nb", "x" * 2000, 5, 0, 2.5, None, True, [], {}]
    limits: list[Any] = [None, *range(-2, 24), 1.0, 20.0, 2.5, 10**9, "5", True, False, [], {}]
    cases = []
    for query in queries:
        for limit in limits:
            strict_call = {"query": query, "limit": limit}
            cases.append((strict_call, {"query": query} if limit is None else dict(strict_call)))
    return cases


SAME_VALUE_CASES = _same_value_cases()
"""The generated calls `_same_values` tries: 13 queries × 36 limits."""


def _same_values(validator: Draft202012Validator) -> str | None:
    """The first generated call that the learner's strict schema and the MCP rule judge differently:
    strict mode changes how a property is declared, never which values it takes (null standing for
    an optional property left out)."""
    rule = Draft202012Validator(SEARCH_NOTES.input_schema)
    for strict_call, mcp_call in SAME_VALUE_CASES:
        try:
            yours = validator.is_valid(strict_call)
        except Exception as error:  # a "pattern" that is not a regular expression
            return say("Your schema could not be applied to {instance}: {error}.",
                       "你的 schema 无法用于 {instance}：{error}。", instance=shown(strict_call, 80), error=raised(error))
        if yours != rule.is_valid(mcp_call):
            if yours:
                return say("Your schema accepts {call}, which the MCP rule refuses: strict mode changes how a property "
                           "is declared, never which values it takes.",
                           "你的 schema 接受 {call}，而 MCP 规则拒绝它：严格模式改变的是属性的声明方式，从不改变它能取哪些值。",
                           call=shown(strict_call, 80))
            return say("Your schema refuses {call}, which the MCP rule accepts{null}: strict mode changes how a "
                       "property is declared, never which values it takes. Keep only what the MCP rule says.",
                       "你的 schema 拒绝了 {call}，而 MCP 规则接受它{null}：严格模式改变的是属性的声明方式，从不改变"
                       "它能取哪些值。只保留 MCP 规则说的。", call=shown(strict_call, 80),
                       null=say(" (as a call that leaves limit out)", "（当作一次不给 limit 的调用）")
                       if strict_call["limit"] is None else "")
    return None


def _defaults(schema: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every `default` in `schema`: (where, the value)."""
    found = []
    if isinstance(schema, dict):
        if "default" in schema:
            found.append((path or "root", schema["default"]))
        for key, sub in schema.items():
            if key in ("properties", "$defs", "definitions") and isinstance(sub, dict):
                found += [d for name, inner in sub.items() for d in _defaults(inner, f"{path}/{key}/{name}")]
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(sub, list):
                found += [d for i, inner in enumerate(sub) for d in _defaults(inner, f"{path}/{key}/{i}")]
            elif key in ("items", "not", "additionalProperties") and isinstance(sub, dict):
                found += _defaults(sub, f"{path}/{key}")
    return found


def _default_problem(schema: dict[str, Any]) -> str | None:
    """A `default` that says something the server does not do. The notes server reads limit null as
    DEFAULT_LIMIT (5) and has no default for query: a `default` is a claim the model reads."""
    from course_lib.notes_server import DEFAULT_LIMIT

    for where, value in _defaults(schema):
        if where.startswith("/properties/limit"):
            if value is None or (type(value) is int and value == DEFAULT_LIMIT):
                continue
            return say("Your schema says limit defaults to {value} (at {where}), but the server reads a null limit as "
                       "{server}: the model would believe it gets {value} results. Give default {server} (or null), "
                       "or leave default out.",
                       "你的 schema 说 limit 的默认值是 {value}（位于 {where}），但服务器把 null 的 limit 当作 {server}："
                       "模型会以为自己得到 {value} 条结果。请把 default 写成 {server}（或 null），或者干脆不写 default。",
                       value=shown(value), where=where, server=DEFAULT_LIMIT)
        return say("Your schema gives a default at {where} ({value}), but the server has none there: query is required "
                   "and nothing stands in for it. Leave that default out.",
                   "你的 schema 在 {where} 给了默认值（{value}），但服务器在那里没有默认值：query 是必填的，没有任何值能"
                   "代替它。请去掉那个 default。", where=where, value=shown(value))
    return None


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


MODES = ("auto", "none", "required")


def _wire(choice: Any) -> Any:
    """A tool_choice as the SDK would send it: a typed param (a pydantic model) as its JSON."""
    if isinstance(choice, pydantic.BaseModel):
        try:
            return choice.model_dump(mode="json", exclude_none=True)
        except Exception:  # a model that cannot be dumped: let not_json say so
            return choice
    return choice


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


def _refused(key: str, refusal: str, choice: Any) -> bool:
    """The API's refusal of one tool_choice, with the step the learner missed."""
    hint = ""
    if "not found in 'tools'" in refusal:
        hint = say(" Name the tool as the model sees it: its alias, prefix included.",
                   " 请用模型看到的名字称呼这个工具：它的别名，包括前缀。")
    elif "got null" in refusal and key == "no_tools":
        hint = say(' Python\'s None goes on the wire as null, which is no tool_choice at all: the mode that turns '
                   'calls off is the string "none".',
                   ' Python 的 None 在线上是 null，它根本不是一个 tool_choice：关掉调用的模式是字符串 "none"。')
    elif "got null" in refusal:
        hint = say(' Python\'s None goes on the wire as null, which is no tool_choice at all: name the tool with '
                   '{"type": "function", "name": ...}.',
                   ' Python 的 None 在线上是 null，它根本不是一个 tool_choice：请用 {"type": "function", "name": ...} '
                   '点名这个工具。')
    elif "Supported values are" in refusal and isinstance(choice, str) and choice.strip().lower() in MODES:
        hint = say(" The modes are written in lower case, exactly: {mode!r}.", " 模式必须准确地用小写书写：{mode!r}。",
                   mode=choice.strip().lower())
    elif "Supported values are" in refusal and isinstance(choice, str) and "__" in choice:
        hint = say(' A tool name alone is not a mode: name a function with {"type": "function", "name": ...}.',
                   ' 单独一个工具名不是一种模式：请用 {"type": "function", "name": ...} 点名一个函数。')
    elif "Supported values are" in refusal:
        hint = say(' A string tool_choice is one of the three modes; to name a tool, give an object '
                   '{"type": "function", "name": ...}.',
                   ' 字符串形式的 tool_choice 只能是这三种模式之一；要点名一个工具，请给出对象 '
                   '{"type": "function", "name": ...}。')
    elif "'tool_choice.name'" in refusal and isinstance(choice, dict) and "function" in choice:
        hint = say(' {"type": "function", "function": {"name": ...}} is the Chat Completions shape; in the Responses '
                   'API the name sits beside the type: {"type": "function", "name": ...}.',
                   ' {"type": "function", "function": {"name": ...}} 是 Chat Completions 的形状；在 Responses API 里，'
                   'name 和 type 并列：{"type": "function", "name": ...}。')
    elif "'tool_choice.type'" in refusal:
        hint = say(' An object tool_choice says what it is: {"type": "function", "name": ...}.',
                   ' 对象形式的 tool_choice 要说明自己是什么：{"type": "function", "name": ...}。')
    return failed(say(f"{key}: the model API refused your tool_choice: {refusal}{hint}",
                      f"{key}：模型 API 拒绝了你的 tool_choice：{refusal}{hint}"))


def _choice_problem(key: str, choice: Any) -> str | None:
    """Why `choice` cannot even be sent (not JSON), or None."""
    why = not_json(_wire(choice))
    if why is None:
        return None
    return say("{key}: {choice} cannot be sent as JSON ({why}); a tool_choice is a string or a small object.",
               "{key}：{choice} 无法作为 JSON 发送（{why}）；tool_choice 是一个字符串或一个小对象。",
               key=key, choice=shown(choice), why=why)


def check_tool_choices(answer: dict[str, Any]) -> bool:
    """Send each tool_choice in a real request and check what the model did."""
    choices = as_dict(answer)
    keys = ", ".join(SITUATIONS)
    if not_answered(answer) or (choices is not None and all(v is ... for v in choices.values())):
        return failed(say(f"Not answered yet: give a tool_choice for each of {keys}.",
                          f"还没有作答：为 {keys} 各给出一个 tool_choice。"))
    if choices is None:
        return failed(say("Give a dict with the keys {keys}; you gave {kind}.", "请给出一个带键 {keys} 的 dict；你给的是 {kind}。",
                          keys=keys, kind=type_name(answer)))
    for key in SITUATIONS:
        if choices.get(key, ...) is ...:
            return failed(say(f"Not answered yet for {key!r} ({SITUATIONS[key]}).",
                              f"{key!r} 还没有作答（{SITUATIONS_ZH[key]}）。"))
        if (problem := _choice_problem(key, choices[key])) is not None:
            return failed(problem)
    course = _two_reader_course()
    try:
        choice = _wire(choices["use_backup"])
        calls, text, refusal = _ask(course, choice)
        if refusal:
            return _refused("use_backup", refusal, choice)
        names = [call.name for call in calls]
        if names != ["backup__read_text_file"]:
            if not names:
                why = say(" 'none' turns calls off, but this step needs the backup read.",
                          " 'none' 关掉了调用，可这一步需要 backup 的读取。") if choice == "none" else ""
                return failed(say("use_backup: with {choice} the model made no call; it replied {text}.{why}",
                                  "use_backup：用 {choice} 时模型没有做任何调用；它回答 {text}。{why}",
                                  choice=shown(choice), text=quote(text, 60), why=why))
            why = ""
            if choice in MODES:
                why = say(f" {choice!r} only decides whether a call must happen; which tool is still the "
                          "model's pick. Name the tool this step needs.",
                          f" {choice!r} 只决定是否必须调用；调用哪个工具仍由模型挑选。请点名这一步需要的工具。")
            elif isinstance(choice, dict) and choice.get("type") == "allowed_tools":
                why = say(" allowed_tools leaves the pick to the model among the tools it lists: list only "
                          'backup__read_text_file (with "mode": "required"), or name it with {"type": "function", "name": ...}.',
                          " allowed_tools 让模型在它列出的工具中挑选：只列出 backup__read_text_file"
                          '（并用 "mode": "required"），或者用 {"type": "function", "name": ...} 点名它。')
            called = ", ".join(names)
            return failed(say("use_backup: with {choice} the model called {called}.{why}",
                              "use_backup：用 {choice} 时模型调用了 {called}。{why}",
                              choice=shown(choice), called=called, why=why))
        try:
            arguments = parse_read_args(calls[0].arguments)
        except ArgumentsError as error:
            return failed(say(f"use_backup: the call's arguments break the rule: {error.message}",
                              f"use_backup：这次调用的参数违反了规则：{error.message}"))
        executed = course.host.call("backup__read_text_file", arguments.model_dump(exclude_none=True))
        if executed.result is None or executed.result.is_error:
            return failed(say("use_backup: the backup server did not read the file; check the task and the tool.",
                              "use_backup：backup 服务器没有读取文件；请检查任务和工具。"))
        choice = _wire(choices["no_tools"])
        calls, text, refusal = _ask(course, choice)
        if refusal:
            return _refused("no_tools", refusal, choice)
        if calls:
            why = say(" 'required' forces a call: the opposite of this turn.", " 'required' 强制调用：正好与这一轮相反。") \
                if choice == "required" else say(" Turn tool calls off for this turn.", " 请在这一轮关掉工具调用。")
            return failed(say("no_tools: with {choice} the model still called {name}: the task names a file, so it "
                              "reads it.{why}",
                              "no_tools：用 {choice} 时模型仍然调用了 {name}：任务点名了一个文件，所以它去读。{why}",
                              choice=shown(choice), name=calls[0].name, why=why))
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


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
