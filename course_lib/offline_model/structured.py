"""Structured outputs: the final answer as JSON that fits the schema the request asks for, with
every value taken from what the conversation really holds.

Where a request asks for one (`Format`, read by `responses_format`, `chat_format`, `messages_format`):

- Responses `text.format`: `{"type": "json_schema", "name", "schema", "strict"?}` or `{"type": "json_object"}`;
- Chat Completions `response_format`: `{"type": "json_schema", "json_schema": {"name", "schema", "strict"?}}`
  or `{"type": "json_object"}`;
- Anthropic Messages `output_config.format`: `{"type": "json_schema", "schema"}`;
- an output tool (`is_output_tool`): a function tool whose job is the final answer — pydantic-ai's
  `final_result` (its default structured output, sent with `tool_choice: "required"`), a tool whose
  description says it gives the final answer, or a tool `tool_choice` names that reads, searches and
  writes nothing and has result-like properties (LangChain's `with_structured_output` tool,
  Anthropic's forced-tool pattern). It is called only once the data tools the task needs have run,
  in place of the answer a careful model would write (`plan`); never identically again after it
  was refused (a framework's retry).

The rules of the filler (`fill`), the part a learner can check value by value:

1. Values come only from evidence (`Evidence`): the task (the user's request, not a framework's
   retry feedback), each tool result of the turn as the model read it (`tool_output`: ok or not,
   the text to quote, the error's code and message, structured data), the call's own arguments
   (path, head, tail), and the answer the model would have written in prose.
2. A property is matched by the words of its name (`line_count`, `filePath`, `is_error`), and by its
   type: path/file → the path read; text/content/excerpt → the exact text returned; lines (a list
   of strings) → its lines; first_line/last_line; line_count (a number) → how many lines came
   back (the tool's own count when its structured data has a field of that very name); head/tail
   → the call's argument; ok/success/found/readable → whether the read succeeded;
   error/is_error/refused → that it failed; code → the error's code; error/reason/message → the
   error's message; tool → the tool called; answer/summary/response → the prose answer;
   sources/citations → the paths read successfully; paths/files → every path asked for;
   task/question → the request; status/outcome → "ok" or "error" (or the enum member that says so).
   A list of objects gets one object per tool result; an object, the same rules for its properties.
3. A failed read never yields a success: its ok-like values are false, its text-like values have
   nothing to quote, its error values carry the tool's own words.
4. A property nothing supports gets an honest value: null where the schema allows it, else the
   plain text "not in the tool results" for a string, 0 for a number and false for a boolean (the
   values that claim least); an optional property of a non-strict schema is left out instead. An
   enum gets the member that names the outcome, else its first member. Never an empty string
   posing as data.
5. What comes out is checked against the schema (`jsonschema`) in the tests; `fill` keeps to the
   subset strict mode allows (objects, arrays, scalars, enums, anyOf, `$ref`/`$defs`) and clamps
   numbers to their bounds.

`json_object` (no schema) gets the evidence itself: the task, the answer in prose, and one object
per result (tool, arguments, ok, text or error).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from course_lib.offline_model.reading import _extract_reads, _is_reader, _last_turn, _latest_user_text, _properties
from course_lib.offline_model.tool_output import Reading, read_output
from course_lib.offline_model.validation import BadRequest, _get, _invalid_value, _schema_problem
from course_lib.offline_model.wording import language, say

_FINAL_WORDS = re.compile(r"\bfinal (?:response|answer|result|output)\b|\bstructured (?:output|response|answer)\b"
                          r"|\bends? (?:this|the) conversation\b", re.I)  # fmt: skip
_WRITE_VERBS = frozenset("write save apply update edit delete remove create move rename append insert set put patch "
                         "replace add store".split())  # fmt: skip


# ---- what the request asks for ----------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """A structured-output request: `kind` "json_schema" (with its `schema`) or "json_object"."""

    kind: str
    schema: dict | None = None
    name: str | None = None
    strict: bool = False
    description: str | None = None
    echo: dict = field(default_factory=dict)  # the format as the response repeats it

    def render(self, evidence: Evidence) -> str:
        """The answer as JSON text."""
        value = fill(self.schema, evidence, strict=self.strict) if self.kind == "json_schema" else as_object(evidence)
        return json.dumps(value, ensure_ascii=False)


def _json_schema(spec: dict, where: str) -> Format:
    """A json_schema format's `name`, `schema`, `strict`, `description`, checked.

    Raises:
        BadRequest: a missing or mistyped field, a schema that is no JSON Schema, or a strict one
            against strict mode's rules ("Invalid schema for response_format '<name>': …").
    """
    from course_lib.declarations import strict_schema_problems

    name = _get(spec, "name", where, str)
    schema = _get(spec, "schema", where, dict, optional=True) or {"type": "object", "properties": {}}
    strict = _get(spec, "strict", where, bool, optional=True) is True
    description = _get(spec, "description", where, str, optional=True)
    problem = _schema_problem(json.dumps(schema, sort_keys=True))
    if problem is None and strict:
        problem = next(iter(strict_schema_problems(schema)), None)
    if problem is not None:
        raise BadRequest(f"Invalid schema for response_format '{name}': {problem}", f"{where}.schema")
    echo = {"type": "json_schema", "description": description, "name": name, "schema": schema, "strict": strict}
    return Format("json_schema", schema, name, strict, description, echo)


def responses_format(body: dict) -> Format | None:
    """`text.format` of a Responses body; None for plain text.

    Raises:
        BadRequest: an unknown format type, or a json_schema format that `_json_schema` refuses.
    """
    text = _get(body, "text", "", dict, optional=True) or {}
    spec = _get(text, "format", "text", dict, optional=True)
    kind = _get(spec, "type", "text.format", str) if spec is not None else "text"
    if kind == "json_schema":
        return _json_schema(spec, "text.format")
    if kind == "json_object":
        return Format("json_object", echo={"type": "json_object"})
    if kind != "text":
        raise _invalid_value(kind, "text.format.type", ["text", "json_object", "json_schema"])
    return None


def chat_format(body: dict, messages_text: str) -> Format | None:
    """`response_format` of a Chat Completions body; None for plain text.

    Raises:
        BadRequest: an unknown type, a json_schema format without `json_schema` or that `_json_schema`
            refuses, or json_object when no message says "json" (the real API's 400:
            https://github.com/ultimatejimmy/xray.koplugin/issues/33).
    """
    spec = _get(body, "response_format", "", dict, optional=True)
    kind = _get(spec, "type", "response_format", str) if spec is not None else "text"
    if kind == "json_schema":
        return _json_schema(_get(spec, "json_schema", "response_format", dict), "response_format.json_schema")
    if kind == "json_object":
        if "json" not in messages_text.lower():
            raise BadRequest("'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                             "'json_object'.", "messages")
        return Format("json_object")
    if kind != "text":
        raise _invalid_value(kind, "response_format.type", ["text", "json_object", "json_schema"])
    return None


def messages_format(body: dict) -> Format | None:
    """`output_config.format` of an Anthropic Messages body (`{"type": "json_schema", "schema"}`); None
    for plain text.

    Raises:
        BadRequest: a format without a schema object, or a schema that is no JSON Schema.
    """
    config = _get(body, "output_config", "", dict, optional=True) or {}
    spec = _get(config, "format", "output_config", dict, optional=True)
    if spec is None:
        return None
    if _get(spec, "type", "output_config.format", str) != "json_schema":
        raise _invalid_value(spec["type"], "output_config.format.type", ["json_schema"])
    schema = _get(spec, "schema", "output_config.format", dict)
    problem = _schema_problem(json.dumps(schema, sort_keys=True))
    if problem is not None:
        raise BadRequest(f"output_config.format.schema: {problem}", "output_config.format.schema")
    return Format("json_schema", schema, strict=True)  # the API guarantees the schema: every property present


# ---- output tools -----------------------------------------------------------------------------------


def _words(name: str) -> list[str]:
    """`lineCount` → ["line", "count"]; `is_error` → ["is", "error"]; `first-line` → ["first", "line"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def _result_like(tool: dict) -> bool:
    """Whether the tool's properties describe a result (text, ok, lines, answer…) rather than a request."""
    return any(_role(name, schema) not in (None, "path", "head", "tail", "task", "paths")
               for name, schema in _properties(tool).items())  # fmt: skip


def _is_data_tool(tool: dict) -> bool:
    """A tool that reads, searches or writes: the calls a task needs, never its answer."""
    words = set(_words(tool["name"]))
    searches = "query" in _properties(tool)
    writes = bool(words & _WRITE_VERBS) or "changes data" in str(tool.get("description", "")).lower()
    return searches or writes or (_is_reader(tool) and not _result_like(tool))


def is_output_tool(tool: dict, forced: str | None = None) -> bool:
    """Whether `tool` is an output tool (see the module docstring); `forced`: the name `tool_choice` names."""
    name = tool["name"]
    if name == "final_result" or name.startswith("final_result_"):  # pydantic-ai's
        return True
    if _FINAL_WORDS.search(str(tool.get("description") or "")):
        return True
    return forced == name and _result_like(tool) and not _is_data_tool(tool)


# ---- the evidence -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One tool result of the turn: the call and the output as the model read it."""

    tool: str
    arguments: dict
    reading: Reading

    @property
    def ok(self) -> bool:
        return self.reading.ok

    @property
    def path(self) -> str | None:
        data = self.reading.data if isinstance(self.reading.data, dict) else {}
        for source in (self.arguments, data):
            for key in ("path", "file_path", "filepath", "filename", "file", "note_path"):
                if isinstance(source.get(key), str):
                    return source[key]
        return None

    @property
    def lines(self) -> list[str] | None:
        return self.reading.text.splitlines() if self.ok else None


@dataclass(frozen=True)
class Evidence:
    """What a structured answer may say: the task, the turn's results, the answer in prose."""

    task: str
    results: list[Result]
    answer: str

    @property
    def lang(self) -> str:
        return language(self.task)

    @property
    def asked_path(self) -> str | None:
        reads = _extract_reads(self.task)
        return reads[0][0] if reads else None


def evidence(items: list[dict], answer: str, skip: frozenset[str] = frozenset()) -> Evidence:
    """The evidence of the latest turn; `skip`: tools whose calls are not data (output tools)."""
    turn = _last_turn(items)
    calls = {item["call_id"]: item for item in turn if item["kind"] == "call" and item["name"] not in skip}
    results = []
    for item in turn:
        if item["kind"] == "output" and item["call_id"] in calls:
            call = calls[item["call_id"]]
            try:
                arguments = json.loads(call["arguments"])
            except ValueError:
                arguments = {}
            results.append(Result(call["name"], arguments if isinstance(arguments, dict) else {}, read_output(item["text"])))
    return Evidence(_latest_user_text(items), results, answer)


# ---- the filler -------------------------------------------------------------------------------------

_FAILED = frozenset("error errors failed failure refused denied forbidden blocked rejected iserror".split())
_OK = frozenset("ok success successful succeeded found exists readable read available allowed complete completed "
                "valid".split())  # fmt: skip
_COUNT = frozenset("count length total num number n".split())
_STRING_ROLES = [  # (role, the words that name it), the property's last word first ("file_content" is text)
    ("path", frozenset("path file filename filepath location source".split())),
    ("text", frozenset("text content contents excerpt body quote output data lines snippet".split())),
    ("tool", frozenset({"tool", "function"})),
    ("answer", frozenset("answer summary response reply explanation message final result conclusion report "
                         "description".split())),
    ("task", frozenset("task question request query prompt".split())),
    ("status", frozenset("status outcome state".split())),
]  # fmt: skip
_OK_MEMBERS = frozenset("ok success succeeded successful done completed complete found read allowed".split())
_ERROR_MEMBERS = frozenset("error failed failure refused denied forbidden blocked rejected missing invalid".split())
_EMPTY = object()  # nothing supports a value


def _types(schema: dict) -> set[str]:
    declared = schema.get("type")
    kinds = set(declared if isinstance(declared, list) else [declared] if declared else [])
    if "enum" in schema and not kinds:
        kinds = {type_name(value) for value in schema["enum"]}
    return kinds


def type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null", list: "array",
            dict: "object"}.get(type(value), "string")  # fmt: skip


def _role(name: str, schema: dict, siblings: frozenset[str] = frozenset()) -> str | None:
    """The role a property plays, from its name's words and its type (see the module docstring);
    `siblings`: the words of the other properties of its object (a `message` beside a `code` is the
    error's message, not the answer)."""
    words, kinds = _words(name), _types(schema) or {"string"}
    bag = set(words)
    if bag == {"message"} and siblings & ({"code"} | _FAILED):
        return "error"
    if "boolean" in kinds:
        return "failed" if bag & _FAILED else "ok" if bag & _OK else None
    if kinds & {"integer", "number"}:
        if bag & {"head", "tail"}:
            return "head" if "head" in bag else "tail"
        return "line_count" if bag & {"line", "lines"} or bag & _COUNT else None
    if "array" in kinds:
        if bag & {"lines", "quotes", "excerpts"}:
            return "lines"
        if bag & {"sources", "citations", "references", "cited"}:
            return "sources"
        return "paths" if bag & {"paths", "files", "filenames"} else None
    if "code" in bag:
        return "code"
    if "line" in bag and bag & {"first", "last"}:
        return "first_line" if "first" in bag else "last_line"
    if bag & {"error", "reason", "problem", "refusal", "why"}:
        return "error"
    for word in reversed(words):
        for role, names in _STRING_ROLES:
            if word in names:
                return role
    return None


class _Filler:
    def __init__(self, root: dict, ev: Evidence, strict: bool) -> None:
        self.root, self.ev, self.strict = root, ev, strict
        self.siblings: frozenset[str] = frozenset()  # the words of the other properties of the object being filled

    def resolve(self, schema: Any) -> dict:
        for _ in range(32):  # $ref chains end; a loop of refs is not followed forever
            if not isinstance(schema, dict) or "$ref" not in schema:
                break
            target: Any = self.root
            for part in schema["$ref"].removeprefix("#/").split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema if isinstance(schema, dict) else {}

    def value(self, schema: Any, name: str, result: Result | None) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        branches = [self.resolve(b) for b in schema.get("anyOf") or schema.get("oneOf") or []]
        if branches:
            return self._branch(branches, name, result)
        kinds = _types(schema)
        if "object" in kinds and "properties" in schema:
            return self.obj(schema, result)
        if "array" in kinds:
            return self.array(schema, name, result)
        found = self.supported(name, schema, result)
        return self.honest(schema) if found is _EMPTY else found

    def _branch(self, branches: list[dict], name: str, result: Result | None) -> Any:
        nullable = any("null" in _types(b) for b in branches)
        for branch in branches:
            if _types(branch) == {"null"}:
                continue
            if {"object", "array"} & _types(branch) or "anyOf" in branch:
                return self.value(branch, name, result)
            found = self.supported(name, branch, result)
            if found is not _EMPTY:
                return found
        if nullable:
            return None
        return self.value(branches[0], name, result)

    def obj(self, schema: dict, result: Result | None) -> dict:
        required = set(schema.get("required") or [])
        properties = schema.get("properties") or {}
        out = {}
        for name, sub in properties.items():
            sub = self.resolve(sub)
            self.siblings = frozenset(w for other in properties if other != name for w in _words(other))
            if name not in required and not self.strict and not {"object", "array"} & _types(sub):
                if self.supported(name, sub, result) is _EMPTY:
                    continue  # optional and unsupported: left out, the most honest of all
            out[name] = self.value(sub, name, result)
        return out

    def array(self, schema: dict, name: str, result: Result | None) -> list:
        items = self.resolve(schema.get("items") or {})
        if "object" in _types(items) or "properties" in items:
            scope = [result] if result is not None else self.ev.results
            values = [self.obj(items, r) for r in scope]
        else:
            role = _role(name, schema)
            values = self.strings(role, result)
            if values is None:
                values = []
        if isinstance(schema.get("maxItems"), int):
            values = values[: schema["maxItems"]]
        return values

    def strings(self, role: str | None, result: Result | None) -> list | None:
        ev, focus = self.ev, result or (self.ev.results[0] if self.ev.results else None)
        if role == "lines":
            return focus.lines if focus is not None and focus.ok else []
        if role == "sources":
            return list(dict.fromkeys(r.path for r in ev.results if r.ok and r.path))
        if role == "paths":
            return list(dict.fromkeys(r.path for r in ev.results if r.path)) or (
                [ev.asked_path] if ev.asked_path else [])
        return None

    def supported(self, name: str, schema: dict, result: Result | None) -> Any:
        """The value the evidence supports for this property, or _EMPTY."""
        focus = result or (self.ev.results[0] if self.ev.results else None)
        data = focus.reading.data if focus is not None and isinstance(focus.reading.data, dict) else {}
        if name in data and self._fits(data[name], schema):
            return data[name]  # the tool's own field of this very name
        value = self._by_role(_role(name, schema, self.siblings), focus)
        if value is _EMPTY or value is None:
            return _EMPTY
        if "enum" in schema:
            return self._member(schema["enum"], value, focus)
        return self._clamped(value, schema) if self._fits(value, schema) else _EMPTY

    def _by_role(self, role: str | None, r: Result | None) -> Any:
        ev = self.ev
        if role == "ok":
            return r is not None and r.ok
        if role == "failed":
            return r is None or not r.ok
        if role == "answer":
            return ev.answer or _EMPTY
        if role == "task":
            return ev.task or _EMPTY
        if role == "status":
            return "ok" if r is not None and r.ok else "error"
        if role == "path":
            return (r.path if r is not None else None) or ev.asked_path or _EMPTY
        if r is None:
            return _EMPTY
        if role == "tool":
            return r.tool
        if role in ("head", "tail"):
            return r.arguments.get(role, _EMPTY)
        if role == "code":
            return _EMPTY if r.ok else r.reading.code or _EMPTY
        if role == "error":
            return _EMPTY if r.ok else r.reading.text
        if not r.ok:
            return _EMPTY  # a failed read has no text, lines or count to report
        lines = r.lines or []
        return {"text": r.reading.text, "line_count": len(lines), "first_line": lines[0] if lines else _EMPTY,
                "last_line": lines[-1] if lines else _EMPTY}.get(role or "", _EMPTY)  # fmt: skip

    def _member(self, members: list, value: Any, r: Result | None) -> Any:
        if value in members:
            return value
        wanted = _OK_MEMBERS if (r is not None and r.ok) else _ERROR_MEMBERS
        return next((m for m in members if isinstance(m, str) and set(_words(m)) & wanted), _EMPTY)

    @staticmethod
    def _fits(value: Any, schema: dict) -> bool:
        kinds = _types(schema)
        if not kinds:
            return True
        actual = type_name(value)
        return actual in kinds or (actual == "integer" and "number" in kinds)

    @staticmethod
    def _clamped(value: Any, schema: dict) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(schema.get("minimum"), (int, float)):
                value = max(value, schema["minimum"])
            if isinstance(schema.get("maximum"), (int, float)):
                value = min(value, schema["maximum"])
        return value

    def honest(self, schema: dict) -> Any:
        """Rule 4: what a property nothing supports gets."""
        kinds = _types(schema)
        if "null" in kinds:
            return None
        if "enum" in schema and schema["enum"]:
            return schema["enum"][0]
        if "string" in kinds or not kinds:
            return say("not_in_results", self.ev.lang)
        if kinds & {"integer", "number"}:
            return self._clamped(0, schema)
        if "boolean" in kinds:
            return False
        if "array" in kinds:
            return []
        return {}


def fill(schema: dict | None, ev: Evidence, *, strict: bool = False) -> Any:
    """A value for `schema` from the evidence alone (the rules in the module docstring)."""
    schema = schema or {"type": "object", "properties": {}}
    filler = _Filler(schema, ev, strict)
    return filler.value(schema, "", None)


def as_object(ev: Evidence) -> dict:
    """The `json_object` answer: the task, the answer in prose, and each result as the model read it."""
    results = []
    for r in ev.results:
        entry: dict[str, Any] = {"tool": r.tool, "arguments": r.arguments, "ok": r.ok}
        entry |= {"text": r.reading.text} if r.ok else {"error": r.reading.text, "code": r.reading.code}
        results.append(entry)
    return {"task": ev.task, "answer": ev.answer, "results": results}


def apply_format(plan: list[tuple], items: list[dict], fmt: Format | None) -> list[tuple]:
    """`plan` with every message written in `fmt` (unchanged without one): the prose becomes the
    evidence's `answer`, the JSON its values (`fill`)."""
    if fmt is None:
        return plan
    return [("message", fmt.render(evidence(items, step[1]))) if step[0] == "message" else step for step in plan]
