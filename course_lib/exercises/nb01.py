"""Checks for notebook 01 (declaring tools).

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


def _offline_refusal(schema: dict[str, Any]) -> str | None:
    """Send `schema` as a strict function tool in a real request; the API's refusal, or None."""
    from course_lib.course import start_course

    course = start_course(quiet=True)
    tool = {"type": "function", "name": SEARCH_ALIAS, "description": SEARCH_NOTES.description,
            "parameters": schema, "strict": True}
    try:
        course.client.responses.create(model="gpt-4.1", input="Search my notes for strict mode", tools=[tool])
    except openai.BadRequestError as error:
        return _api_message(error)
    finally:
        course.close()
    return None


def check_strict_search_notes(schema: dict[str, Any]) -> bool:
    """Is `schema` a strict-mode version of SEARCH_NOTES.input_schema that keeps every meaning?"""
    if not_answered(schema):
        return failed("Not answered yet: write the strict parameters schema of search_notes as a dict.")
    if not isinstance(schema, dict):
        return failed(f"Give the schema as a dict; you gave {type(schema).__name__}.")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return failed(f"This is not a valid JSON Schema: {error.message} (at {'/'.join(map(str, error.path)) or 'root'}).")
    problems = strict_schema_problems(schema)
    if problems:
        return failed(f"Not strict yet: {problems[0]}")
    original = list(SEARCH_NOTES.input_schema["properties"])
    properties = list(schema.get("properties", {}))
    lost = [name for name in original if name not in properties]
    if lost:
        return failed(f"You dropped the property {lost[0]!r}: strict mode changes how a property is "
                      "declared, never which properties the tool has.")
    added = [name for name in properties if name not in original]
    if added:
        return failed(f"{added[0]!r} is not a property of search_notes; keep exactly {', '.join(original)}.")
    refusal = _offline_refusal(schema)
    if refusal:
        return failed(f"The model API refused your strict tool: {refusal}")
    validator = Draft202012Validator(schema)
    for instance, valid, meaning in MEANING_CASES:
        if validator.is_valid(instance) != valid:
            return failed(meaning + "." + _meaning_hint(schema, instance))
    return passed("Strict and faithful: the model API accepts it with strict: true; query stays a required "
                  "string, limit an integer from 1 to 20 or null.")


def _meaning_hint(schema: dict[str, Any], instance: dict[str, Any]) -> str:
    """Name the usual cause when null is refused: an OpenAPI keyword JSON Schema ignores."""
    limit = schema.get("properties", {}).get("limit", {})
    if instance.get("limit", 0) is None and isinstance(limit, dict) and "nullable" in limit:
        return (' "nullable": true is OpenAPI, not JSON Schema: a JSON Schema validator ignores it. Allow null '
                'with "type": ["integer", "null"] or anyOf [..., {"type": "null"}].')
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


def _two_reader_course() -> Any:
    """A course whose host has two servers over the same workspace: `fs` (declared first) and `backup`."""
    from course_lib.course import start_course
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    course = start_course(quiet=True)
    course.host.add_server("backup", build_server(Workspace(workspace_dir())))
    return course


def _ask(course: Any, tool_choice: Any) -> tuple[list[Any], str, str | None]:
    """One real request with both tools declared: (function calls, reply text, API refusal or None)."""
    try:
        response = course.client.responses.create(
            model="gpt-4.1", input=CHOICE_TASK, tools=course.host.responses_tools(), tool_choice=tool_choice
        )
    except openai.BadRequestError as error:
        return [], "", _api_message(error)
    calls = [item for item in response.output if item.type == "function_call"]
    return calls, response.output_text, None


def _refused(key: str, refusal: str) -> bool:
    hint = ""
    if "not found in 'tools'" in refusal:
        hint = " Name the tool as the model sees it: its alias, prefix included."
    elif "Supported values are" in refusal:
        hint = ' A tool name alone is not a mode: name a function with {"type": "function", "name": ...}.'
    return failed(f"{key}: the model API refused your tool_choice: {refusal}{hint}")


def check_tool_choices(answer: dict[str, Any]) -> bool:
    """Send each tool_choice in a real request and check what the model did."""
    if not_answered(answer) or (isinstance(answer, dict) and all(v is ... for v in answer.values())):
        return failed(f"Not answered yet: give a tool_choice for each of {', '.join(SITUATIONS)}.")
    if not isinstance(answer, dict):
        return failed(f"Give a dict with the keys {', '.join(SITUATIONS)}; you gave {type(answer).__name__}.")
    for key in SITUATIONS:
        if answer.get(key, ...) is ...:
            return failed(f"Not answered yet for {key!r} ({SITUATIONS[key]}).")
    course = _two_reader_course()
    try:
        choice = answer["use_backup"]
        calls, text, refusal = _ask(course, choice)
        if refusal:
            return _refused("use_backup", refusal)
        names = [call.name for call in calls]
        if names != ["backup__read_text_file"]:
            if not names:
                return failed(f"use_backup: with {quote(choice)} the model made no call; it replied {quote(text, 60)}.")
            why = ""
            if choice in ("auto", "required"):
                why = (f" {choice!r} only decides whether a call must happen; which tool is still the "
                       "model's pick. Name the tool this step needs.")
            return failed(f"use_backup: with {quote(choice)} the model called {', '.join(names)}.{why}")
        try:
            arguments = parse_read_args(calls[0].arguments)
        except ArgumentsError as error:
            return failed(f"use_backup: the call's arguments break the rule: {error.message}")
        executed = course.host.call("backup__read_text_file", arguments.model_dump(exclude_none=True))
        if executed.result is None or executed.result.is_error:
            return failed("use_backup: the backup server did not read the file; check the task and the tool.")
        choice = answer["no_tools"]
        calls, text, refusal = _ask(course, choice)
        if refusal:
            return _refused("no_tools", refusal)
        if calls:
            return failed(f"no_tools: with {quote(choice)} the model still called {calls[0].name}: the task names a "
                          "file, so it reads it. Turn tool calls off for this turn.")
    finally:
        course.close()
    return passed("The model called backup__read_text_file (and the backup server read the file), then "
                  "answered without any call. tool_choice steered the choice; the rule stayed the same.")


SOLUTIONS: Solutions = {
    "check_strict_search_notes": _strict_search_notes_solution,
    "check_tool_choices": lambda: {
        "use_backup": {"type": "function", "name": "backup__read_text_file"},
        "no_tools": "none",
    },
}
