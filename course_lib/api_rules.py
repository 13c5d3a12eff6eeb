"""What the real APIs refuse: one table of rules, and the checks that apply them.

The offline model refuses what the real APIs refuse, with their status and error body, and an
exercise check that judges a learner's message or schema asks the same functions, so a check never
approves what an API would refuse. Each rule names the API it belongs to, what it demands, the
status and the error the API answers with (in its own words), and the source it was checked against.

    from course_lib.api_rules import RULES, strict_schema_problems, messages_order_problems
    strict_schema_problems({"type": "object", "properties": {"x": {"oneOf": [...]}}, ...})
    # ["In context=('properties', 'x'), 'oneOf' is not permitted."]
    messages_order_problems(messages)      # Anthropic Messages: tool_result blocks first, each answering a tool_use
    responses_input_problems(items, "gpt-5")  # a reasoning model's call sent back without its reasoning item
    RULES["messages.tool_results_first"].error_body("messages.2: Did not find …")  # the API's JSON body

Where providers differ, the rule says which does what (`Rule.providers`): `default` in a strict
schema is accepted by api.openai.com and refused by Azure OpenAI deployments; the offline model
answers as api.openai.com does, and `strict_schema_portability` names such keywords for a check.

This module is the bottom floor: standard library only, no import of the offline model (which
imports it), so anything in the course can use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RULES", "Rule", "function_schema_problems", "is_reasoning_model", "messages_order_problems",
           "responses_input_problems", "strict_schema_portability", "strict_schema_problems"]


@dataclass(frozen=True)
class Rule:
    """One thing an API refuses: `api` ("responses", "chat", "messages"; several joined by "+"),
    what it `demands`, the `status` and the error `message` it answers with (a template: `{…}` are
    filled per request), its `param` and `code` (OpenAI's shape), and the `source` it was checked
    against. `providers` says where providers differ; `enforced` where the offline model applies it."""

    name: str
    api: str
    demands: str
    status: int
    message: str
    source: str
    param: str | None = None
    code: str | None = None
    providers: str = ""
    enforced: str = ""

    @property
    def shape(self) -> str:
        """Whose error body: "anthropic" for a Messages rule, else "openai"."""
        return "anthropic" if self.api == "messages" else "openai"

    def error_body(self, message: str, param: str | None = None, request_id: str = "req_offline") -> dict[str, Any]:
        """The JSON body the API answers with for this rule: OpenAI's `{"error": {message, type, param,
        code}}` or Anthropic's `{"type": "error", "error": {type, message}, "request_id"}`."""
        if self.shape == "anthropic":
            return {"type": "error", "error": {"type": "invalid_request_error", "message": message},
                    "request_id": request_id}  # fmt: skip
        return {"error": {"message": message, "type": "invalid_request_error", "param": param or self.param,
                          "code": self.code}}  # fmt: skip


_STRICT_GUIDE = "https://developers.openai.com/api/docs/guides/structured-outputs#supported-schemas"
_ANTHROPIC_TOOL_USE = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use"

RULES: dict[str, Rule] = {rule.name: rule for rule in (
    # ---- Anthropic Messages -------------------------------------------------------------------------
    Rule("messages.tool_results_first", "messages",
         "In the user message after an assistant message with tool_use blocks, the tool_result blocks come "
         "first (one per tool_use); any text comes after them.",
         400, "messages.{index}: Did not find {count} `tool_result` block(s) at the beginning of this message. "
              "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
         f"Anthropic's tool-use guide ({_ANTHROPIC_TOOL_USE}: \"tool result blocks must immediately follow their "
         "corresponding tool use blocks ... any text must come after all tool results\"); the 400's wording as the "
         "API sent it, quoted in Zoo-Code-Org/Zoo-Code#1705 and in an anthropic SDK traceback (BadRequestError, "
         "messages.6); QwenLM/qwen-code#8161 verified it live (2026-07)",
         enforced="offline_model/messages.py"),
    Rule("messages.tool_use_answered", "messages",
         "Every tool_use block gets its tool_result block in the next message.",
         400, "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
              "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
         "the API's 400 quoted in anthropics/claude-code#6575, #7929, #8210",
         enforced="offline_model/messages.py"),
    Rule("messages.tool_result_has_use", "messages",
         "A tool_result block answers a tool_use block of the previous message, by its id.",
         400, "messages.{index}.content.{block}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
              "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
         "the API's 400 quoted in anthropics/claude-code#13460, #5060, #6696",
         enforced="offline_model/messages.py"),
    Rule("messages.input_schema_object", "messages",
         "A custom tool's input_schema has an object root (`type: object`).",
         400, "tools.{index}.custom.input_schema.type: Input should be 'object'",
         "the API's 400 as quoted by several projects that wrap array roots (e.g. the Claude CLI's --json-schema "
         "wrappers); Anthropic's tool-use guide: input_schema is a JSON Schema object",
         enforced="offline_model/messages.py"),
    # ---- OpenAI function tools (Responses and Chat Completions) -----------------------------------------
    Rule("function.object_root", "responses+chat",
         "A function tool's parameters have `type: object` at the root (strict or not).",
         400, "Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', got "
              "'type: {got}'.",
         "the API's 400 quoted in alibaba/spring-ai-alibaba#4576 (2026-04, got 'type: \"string\"') and "
         "Lambdua/openai4j#83 (got 'type: \"None\"')",
         param="tools[{index}].parameters", code="invalid_function_parameters", enforced="offline_model/validation.py"),
    Rule("function.no_root_composition", "responses+chat",
         "The root of a function tool's parameters is a plain object schema: no oneOf, anyOf, allOf, enum or "
         "not beside `type: object` at the top level.",
         400, "Invalid schema for function '{name}': schema must have type 'object' and not have "
              "'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.",
         "the API's 400 quoted in chatanywhere/GPT_API_free#403 and cecli-dev/cecli#281 (via OpenRouter to "
         "OpenAI); the structured-outputs guide: \"the root level object must be an object, and not use anyOf\"",
         param="tools[{index}].parameters", code="invalid_function_parameters", enforced="offline_model/validation.py"),
    Rule("function.object_properties", "responses+chat",
         "An object schema at the root has `properties` (strict or not); in strict mode every object does.",
         400, "Invalid schema for function '{name}': In context={context}, object schema missing properties.",
         "the API's 400 quoted in mark3labs/mcp-go#680 and spring-projects/spring-ai#4776",
         param="tools[{index}].parameters", code="invalid_function_parameters", enforced="offline_model/validation.py"),
    Rule("strict.required_every_property", "responses+chat",
         "In strict mode every object lists every key of `properties` in `required` (optional = nullable).",
         400, "Invalid schema for function '{name}': In context={context}, 'required' is required to be supplied "
              "and to be an array including every key in properties. Missing '{key}'.",
         f"the structured-outputs guide ({_STRICT_GUIDE}, \"All fields must be required\"); the 400 quoted in "
         "kevinwatt/mysql-mcp#5",
         param="tools[{index}].parameters", code="invalid_function_parameters", enforced="offline_model/validation.py"),
    Rule("strict.no_additional_properties", "responses+chat",
         "In strict mode every object says `additionalProperties: false`.",
         400, "Invalid schema for function '{name}': In context={context}, 'additionalProperties' is required to be "
              "supplied and to be false.",
         f"the structured-outputs guide ({_STRICT_GUIDE}); the 400 quoted in lastmile-ai/openai-agents-mcp#2",
         param="tools[{index}].parameters", code="invalid_function_parameters", enforced="offline_model/validation.py"),
    Rule("strict.keyword_subset", "responses+chat",
         "In strict mode a schema keeps to strict mode's subset of JSON Schema: anyOf yes (not at the root), "
         "oneOf, allOf, not, if/then/else, dependentRequired and dependentSchemas no (nested or not).",
         400, "Invalid schema for function '{name}': In context={context}, '{keyword}' is not permitted.",
         f"the structured-outputs guide ({_STRICT_GUIDE}: anyOf supported; \"Composition: allOf, not, "
         "dependentRequired, dependentSchemas, if, then, else\" not supported); the 400 for oneOf quoted in "
         "ai-dynamo/dynamo#15153 and the OpenAI community forum (\"In context=(), 'oneOf' is not permitted.\"), "
         "openai/openai-node#2602 (2026-09: the SDK's own strict helper now refuses oneOf); for allOf in "
         "makenotion/notion-mcp-server#117 (Responses, param tools[8].parameters); the openai-java SDK's "
         "JsonSchemaValidator keeps to the same subset",
         param="tools[{index}].parameters", code="invalid_function_parameters", enforced="offline_model/validation.py"),
    Rule("strict.default_keyword", "responses+chat",
         "`default` in a strict schema: refused by some deployments, accepted by others.",
         400, "Invalid schema for function '{name}': In context={context}, 'default' is not permitted.",
         "refused with this 400 by api.openai.com in 2025 (dotnet/extensions#6196, livekit/agents#1987); "
         "accepted by api.openai.com in 2026-08 (openai/openai-agents-python#4390: a maintainer's paired test on "
         "api.openai.com completed); still reported refused by Azure OpenAI deployments (the same issue)",
         param="tools[{index}].parameters", code="invalid_function_parameters",
         providers="api.openai.com (2026-08): accepted; Azure OpenAI: 400 'default' is not permitted. The offline "
                   "model answers as api.openai.com; `strict_schema_portability` names the keyword for a check."),
    # ---- Responses input ----------------------------------------------------------------------------------
    Rule("responses.reasoning_before_call", "responses",
         "A reasoning model's function_call sent back with its id needs the reasoning item that came before it "
         "in the model's output (the other items of that output may stand between them).",
         400, "Item '{id}' of type 'function_call' was provided without its required 'reasoning' item: '{reasoning}'.",
         "the API's 400 quoted in VRSEN/agency-swarm#367 and mastra-ai/mastra#8738; the openai SDK's "
         "ResponseReasoningItem docstring (include the reasoning items in `input` when managing context)",
         param="input", enforced="offline_model/reasoning.py"),
    Rule("responses.reasoning_followed", "responses",
         "A reasoning item sent back is followed by the item the model wrote after it.",
         400, "Item '{id}' of type 'reasoning' was provided without its required following item.",
         "the API's 400 quoted in continuedev/continue#8933",
         param="input", enforced="offline_model/reasoning.py"),
    Rule("responses.call_has_output", "responses",
         "Every function_call in the input has its function_call_output (by call_id), and every output "
         "answers an earlier call.",
         400, "No tool output found for function call {call_id}.",
         "the API's 400, in the offline model since the course began (offline_model/validation.py _check_pairs)",
         param="input", enforced="offline_model/validation.py"),
    Rule("responses.known_item_fields", "responses",
         "An input item holds only the fields the API knows for its type, even null ones: a plain "
         "`model_dump()` (Python names such as `async_`), a stream's parsed fields (`parsed_arguments`) "
         "or a reasoning item's output-only `status` are refused.",
         400, "Unknown parameter: '{where}'.",
         "the openai SDK's own request types (ResponseInputItemParam, read at run time: offline_model/known_fields.py); "
         "the 400 quoted in pydantic/pydantic-ai#3653, openai/openai-python#3008, openai/openai-agents-python#3026",
         param="{where}", code="unknown_parameter", enforced="offline_model/validation.py"),
    # ---- Chat Completions ---------------------------------------------------------------------------------
    Rule("chat.tool_message_follows_calls", "chat",
         "An assistant message with tool_calls is followed by a tool message for each tool_call_id.",
         400, "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
              "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
         "the API's 400 (offline_model/chat.py, with its sources)", param="messages.[{index}].role",
         enforced="offline_model/chat.py"),
)}  # fmt: skip


# ---- schemas -----------------------------------------------------------------------------------------------

# Keywords strict mode refuses wherever they stand (see RULES["strict.keyword_subset"]).
NOT_PERMITTED = ("oneOf", "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas")
# Keywords whose fate depends on the provider (see RULES["strict.default_keyword"]).
PROVIDER_DEPENDENT = ("default",)
_ROOT_COMPOSITION = ("oneOf", "anyOf", "allOf", "enum", "not")


def _children(schema: dict[str, Any], context: tuple[str, ...]) -> list[tuple[Any, tuple[str, ...]]]:
    """The subschemas of `schema` with their contexts, as the real API names them (a tuple of keys)."""
    found: list[tuple[Any, tuple[str, ...]]] = []
    for key in ("properties", "$defs", "definitions"):
        children = schema.get(key)
        for name, sub in children.items() if isinstance(children, dict) else ():
            found.append((sub, (*context, key, name)))
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        for i, sub in enumerate(branches if isinstance(branches, list) else ()):
            found.append((sub, (*context, key, str(i))))  # the API writes '0'
    for key in ("items", "not", "if", "then", "else"):
        if isinstance(schema.get(key), dict):
            found.append((schema[key], (*context, key)))
    return found


def strict_schema_problems(schema: dict[str, Any], context: tuple[str, ...] = ()) -> list[str]:
    """What strict mode refuses in `schema`, one message per problem in the real API's words (the part
    after "Invalid schema for function 'NAME': "); an empty list when strict mode accepts it.

    Checks every object has `required` listing every property and `additionalProperties: false`, and
    that no keyword outside strict mode's subset appears anywhere (`NOT_PERMITTED`). `context` is the
    path of keys from the root, `()` for the root, as the API writes it. `default` is not a problem
    here (api.openai.com accepts it): see `strict_schema_portability`.
    """
    problems: list[str] = []
    if not isinstance(schema, dict):
        return problems
    for keyword in NOT_PERMITTED:
        if keyword in schema:
            problems.append(f"In context={context!r}, '{keyword}' is not permitted.")
    if schema.get("type") == "object":
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        missing = [name for name in properties if name not in required]
        if missing:  # every real example names one missing key: the first
            problems.append(f"In context={context!r}, 'required' is required to be supplied and to be an array "
                            f"including every key in properties. Missing {missing[0]!r}.")
        if schema.get("additionalProperties") is not False:
            problems.append(f"In context={context!r}, 'additionalProperties' is required to be supplied and to "
                            "be false.")
    for sub, where in _children(schema, context):
        problems += strict_schema_problems(sub, where)
    return problems


def strict_schema_portability(schema: dict[str, Any], context: tuple[str, ...] = ()) -> list[str]:
    """Keywords of `schema` that one provider accepts in strict mode and another refuses
    (`PROVIDER_DEPENDENT`), each named with who does what; empty when the schema is portable."""
    notes: list[str] = []
    if not isinstance(schema, dict):
        return notes
    for keyword in PROVIDER_DEPENDENT:
        if keyword in schema:
            notes.append(f"In context={context!r}, '{keyword}' is accepted by api.openai.com but refused by Azure "
                         f"OpenAI (\"'{keyword}' is not permitted.\"); leave it out to be safe everywhere.")
    for sub, where in _children(schema, context):
        notes += strict_schema_portability(sub, where)
    return notes


def _type_text(value: Any) -> str:
    """How the API quotes the root's `type` in its message: `"string"` in quotes, null bare."""
    return "null" if value is None else f'"{value}"'


def function_schema_problems(schema: Any) -> list[str]:
    """What any function tool's `parameters` must keep, strict or not, in the real API's words (the part
    after "Invalid schema for function 'NAME': "): an object root, without oneOf/anyOf/allOf/enum/not
    beside it. (A root without `properties` is the offline model's own check: `validation`.)"""
    if not isinstance(schema, dict):
        return []
    if schema.get("type") != "object":
        return [f"schema must be a JSON Schema of 'type: \"object\"', got 'type: {_type_text(schema.get('type'))}'."]
    if any(keyword in schema for keyword in _ROOT_COMPOSITION):
        return ["schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."]
    return []


# ---- Anthropic Messages ----------------------------------------------------------------------------------


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _kind(block: Any) -> str | None:
    return block.get("type") if isinstance(block, dict) else getattr(block, "type", None)


def _get(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, dict) else getattr(block, name, None)


def messages_order_problems(messages: Any) -> list[str]:
    """What the Messages API refuses in how `messages` pair tool_use and tool_result blocks, in its words:
    a user message after tool_use blocks that does not begin with their tool_result blocks (text first,
    or too few), a tool_use left unanswered, a tool_result that answers no tool_use of the previous
    message. Empty when the API accepts the order. Blocks may be dicts or the SDK's typed blocks."""
    problems: list[str] = []
    previous: list[str] = []  # the tool_use ids of the message before
    listed = messages if isinstance(messages, list) else []
    for i, message in enumerate(listed):
        role = message.get("role") if isinstance(message, dict) else None
        blocks = _blocks(message)
        results = [(j, _get(block, "tool_use_id")) for j, block in enumerate(blocks) if _kind(block) == "tool_result"]
        answered = {used for _, used in results}
        if role == "user":
            for j, used in results:
                if used not in previous:
                    problems.append(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                                    f"blocks: {used}. Each `tool_result` block must have a corresponding `tool_use` "
                                    "block in the previous message.")  # fmt: skip
        if previous:
            unanswered = [use for use in previous if role != "user" or use not in answered]
            leading = next((j for j, block in enumerate(blocks) if _kind(block) != "tool_result"), len(blocks))
            if unanswered:
                problems.append(_unanswered(i - 1, unanswered))
            elif leading < len(previous):  # every tool_use answered, but text (or another block) came first
                problems.append(f"messages.{i}: Did not find {len(previous)} `tool_result` block(s) at the beginning "
                                "of this message. Messages following `tool_use` blocks must begin with a matching "
                                "number of `tool_result` blocks.")  # fmt: skip
        previous = [_get(block, "id") for block in blocks if _kind(block) == "tool_use"] if role == "assistant" else []
    if previous:
        problems.append(_unanswered(len(listed) - 1, previous))
    return problems


def _unanswered(index: int, ids: list[str]) -> str:
    return (f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{', '.join(ids)}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
            "message.")


# ---- Responses input -------------------------------------------------------------------------------------

# The model families the real API treats as reasoning models: gpt-5… and gpt-6… (gpt-6-luna, "OpenAI's
# efficient reasoning model", configurable reasoning effort, as its model pages describe it, 2026-09), o1, o3, o4.
_REASONING_PREFIXES = ("gpt-5", "gpt-6", "o1", "o3", "o4")
_NOT_REASONING = ("gpt-5-chat",)  # gpt-5-chat-latest is ChatGPT's non-reasoning model


def is_reasoning_model(model: str) -> bool:
    """Whether `model` is a reasoning model (gpt-5…, gpt-6…, o1…, o3…, o4…; not gpt-5-chat…): the one
    place the rule lives."""
    name = model.strip().lower()
    return name.startswith(_REASONING_PREFIXES) and not name.startswith(_NOT_REASONING)


def _item_type(item: Any) -> str | None:
    kind = _get(item, "type")
    if kind is None and _get(item, "role") is not None:
        return "message"
    return kind


def responses_input_problems(items: Any, model: str) -> list[str]:
    """What a Responses `input` list breaks of the reasoning rules, for `model`, in the API's words: a
    function_call sent back with its `fc_…` id and no reasoning item before it (among the items of the
    same output: calls and assistant messages may stand between), and a reasoning item that no item of
    the model follows. The API also knows *which* reasoning item a call needs; this check, without the
    API's memory, only sees whether one is there. Empty for a model that does not reason."""
    if not is_reasoning_model(model) or not isinstance(items, list):
        return []
    problems = []
    for index, item in enumerate(items):
        kind = _item_type(item)
        if kind == "function_call" and _get(item, "id"):
            before = index - 1
            while before >= 0 and (_item_type(items[before]) == "function_call" or (
                    _item_type(items[before]) == "message" and _get(items[before], "role") == "assistant")):  # fmt: skip
                before -= 1
            if before < 0 or _item_type(items[before]) != "reasoning":
                problems.append(f"Item '{_get(item, 'id')}' of type 'function_call' was provided without its required "
                                "'reasoning' item.")  # fmt: skip
        elif kind == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            if following is None or not (_item_type(following) == "function_call" or _get(following, "role") == "assistant"):
                problems.append(f"Item '{_get(item, 'id')}' of type 'reasoning' was provided without its required "
                                "following item.")  # fmt: skip
    return problems
