"""Notebook 01's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (shapes the real API and the SDK's types allow; each must pass), and the
property the exercise promises (limit's range, tried at each bound)."""

from __future__ import annotations

import copy

import pytest
from openai.types.responses import ToolChoiceAllowedParam, ToolChoiceFunction, ToolChoiceFunctionParam

from course_lib.exercises.nb01 import SEARCH_NOTES, SOLUTIONS, check_strict_search_notes, check_tool_choices

# ---- exercise 1: search_notes made strict by hand -----------------------------------------------


def strict(**limit: object) -> dict:
    """The reference strict schema with limit's schema replaced."""
    schema = SOLUTIONS["check_strict_search_notes"]()
    schema["properties"]["limit"] = limit
    return schema


def changed(change) -> dict:
    schema = SOLUTIONS["check_strict_search_notes"]()
    change(schema)
    return schema


def tool_around_it() -> dict:
    return {"type": "function", "name": "search_notes", "parameters": SOLUTIONS["check_strict_search_notes"](),
            "strict": True}


STRICT_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("the MCP schema copied unchanged", copy.deepcopy(SEARCH_NOTES.input_schema),
     ["Not strict yet", "'required'", "Missing 'limit'", "every property in required"],
     ["还不是严格模式", "required 列出每一个属性"]),
    ("additionalProperties forgotten", changed(lambda s: s.pop("additionalProperties")),
     ["Not strict yet", "'additionalProperties' is required", '"additionalProperties": false'],
     ['"additionalProperties": false']),
    ("limit required but not nullable", strict(type="integer", minimum=1, maximum=20),
     ["limit was optional", "it has to accept null", "yours refuses null"], ["limit 原本是可选的", "你的拒绝了 null"]),
    ("OpenAPI's nullable", strict(type="integer", minimum=1, maximum=20, nullable=True),
     ["yours refuses null", '"nullable": true is OpenAPI, not JSON Schema'], ['"nullable": true 是 OpenAPI 的写法']),
    ("the range dropped", strict(type=["integer", "null"]),
     ["limit lost its range (1 to 20 in the MCP rule); yours accepts 0"], ["limit 丢掉了它的范围", "你的接受 0"]),
    ("the upper bound one short", strict(anyOf=[{"type": "integer", "minimum": 1, "maximum": 19}, {"type": "null"}]),
     ["limit must accept every integer from 1 to 20", "yours refuses 20"], ["你的拒绝了 20"]),
    ("an exclusive bound where an inclusive one belongs",
     strict(anyOf=[{"type": "integer", "exclusiveMinimum": 1, "maximum": 20}, {"type": "null"}]),
     ["yours refuses 1"], ["你的拒绝了 1"]),
    ("limit turned into a number", strict(type=["number", "null"], minimum=1, maximum=20),
     ["limit must stay an integer; yours accepts 2.5"], ["limit 必须仍是整数；你的接受 2.5"]),
    ("query made nullable too", changed(lambda s: s["properties"].update(query={"type": ["string", "null"]})),
     ["query was required: it must not accept null"], ["query 原本是必填的"]),
    ("limit dropped to make strict mode happy",
     changed(lambda s: (s["properties"].pop("limit"), s.update(required=["query"]))),
     ["You dropped the property 'limit'", "never which properties the tool has"], ["你丢掉了属性 'limit'"]),
    ("limit renamed", changed(lambda s: (s["properties"].update(max_results=s["properties"].pop("limit")),
                                         s.update(required=["query", "max_results"]))),
     ["You renamed 'limit' to 'max_results'", "never its name"], ["你把 'limit' 改名成了 'max_results'"]),
    ("a property added", changed(lambda s: (s["properties"].update(tags={"type": "string"}),
                                            s.update(required=["query", "limit", "tags"]))),
     ["'tags' is not a property of search_notes; keep exactly query, limit"], ["'tags' 不是 search_notes 的属性"]),
    ("the whole function tool instead of its parameters", tool_around_it(),
     ["This is a whole function tool", "give only its parameters schema"], ["这是一个完整的函数工具"]),
    ("a JSON string of the schema", '{"type": "object"}', ["Give the schema as a dict; you gave str"], ["请以 dict 给出 schema"]),
    ("a Python set where a list belongs", changed(lambda s: s.update(required={"query", "limit"})),
     ["Your schema is not JSON", "TypeError"], ["你的 schema 不是 JSON"]),
    ("a boolean schema for a property", changed(lambda s: s["properties"].update(query=True)),
     ["At root/properties/query there is a boolean schema"], ["在 root/properties/query 处是一个布尔 schema"]),
    ("not written yet", ..., ["Not answered yet", "strict_search"], ["还没有作答", "strict_search"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in STRICT_WRONG], ids=[row[0] for row in STRICT_WRONG])
def test_strict_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_strict_search_notes, answer, en, zh)


STRICT_RIGHT = {
    "a type list with the bounds beside it": strict(type=["integer", "null"], minimum=1, maximum=20),
    "null first in anyOf": strict(anyOf=[{"type": "null"}, {"type": "integer", "minimum": 1, "maximum": 20}]),
    "exclusive bounds that mean the same": strict(type=["integer", "null"], exclusiveMinimum=0, exclusiveMaximum=21),
    "no descriptions at all": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {
        "anyOf": [{"type": "integer", "minimum": 1, "maximum": 20}, {"type": "null"}]}},
        "required": ["limit", "query"], "additionalProperties": False},
}  # fmt: skip


@pytest.mark.parametrize("answer", list(STRICT_RIGHT.values()), ids=list(STRICT_RIGHT))
def test_strict_other_right_answers_pass(corpus, answer):
    corpus.right(check_strict_search_notes, answer)


def test_the_range_is_tried_on_both_sides_of_each_bound():
    from course_lib.exercises.nb01 import MEANING_CASES

    limits = {case[0]["limit"]: case[1] for case in MEANING_CASES if type(case[0].get("limit")) is int}
    assert {n: limits[n] for n in (0, 1, 20, 21)} == {0: False, 1: True, 20: True, 21: False}
    assert all(limits[n] for n in range(1, 21))


# ---- exercise 2: tool_choice --------------------------------------------------------------------

BACKUP = {"type": "function", "name": "backup__read_text_file"}


def choices(use_backup: object = BACKUP, no_tools: object = "none") -> dict:
    return {"use_backup": use_backup, "no_tools": no_tools}


CHOICE_WRONG = [
    ("required, hoping for the right tool", choices("required"),
     ["use_backup: with 'required' the model called fs__read_text_file", "only decides whether a call must happen"],
     ["只决定是否必须调用"]),
    ("the alias alone as a string", choices("backup__read_text_file"),
     ["Supported values are", "A tool name alone is not a mode"], ["单独一个工具名不是一种模式"]),
    ("the server's own name, not the alias", choices({"type": "function", "name": "read_text_file"}),
     ["not found in 'tools'", "its alias, prefix included"], ["它的别名，包括前缀"]),
    ("the Chat Completions shape", choices({"type": "function", "function": {"name": "backup__read_text_file"}}),
     ["'tool_choice.name'", "is the Chat Completions shape", "the name sits beside the type"],
     ["是 Chat Completions 的形状"]),
    ("allowed_tools listing both readers", choices({"type": "allowed_tools", "mode": "auto", "tools": [
        BACKUP, {"type": "function", "name": "fs__read_text_file"}]}),
     ["allowed_tools leaves the pick to the model"], ["allowed_tools 让模型在它列出的工具中挑选"]),
    ("auto where no call may happen", choices(no_tools="auto"),
     ["no_tools: with 'auto' the model still called", "Turn tool calls off"], ["请在这一轮关掉工具调用"]),
    ("required where no call may happen", choices(no_tools="required"),
     ["'required' forces a call"], ["'required' 强制调用"]),
    ("Python's None for no tools", choices(no_tools=None),
     ["got null", "Python's None goes on the wire as null", 'the string "none"'], ["Python 的 None 在线上是 null"]),
    ("the mode capitalised", choices(no_tools="None"), ["The modes are written in lower case, exactly: 'none'"],
     ["模式必须准确地用小写书写"]),
    ("none where the backup read is needed", choices("none"),
     ["use_backup: with 'none' the model made no call", "this step needs the backup read"], ["这一步需要 backup 的读取"]),
    ("a name without its type", choices({"name": "backup__read_text_file"}),
     ["'tool_choice.type'", "An object tool_choice says what it is"], ["对象形式的 tool_choice 要说明自己是什么"]),
    ("one situation left as the starter's ...", choices(no_tools=...), ["Not answered yet for 'no_tools'"],
     ["'no_tools' 还没有作答"]),
    ("a list of two choices", [BACKUP, "none"], ["Give a dict with the keys use_backup, no_tools; you gave list"],
     ["请给出一个带键 use_backup, no_tools 的 dict"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in CHOICE_WRONG], ids=[row[0] for row in CHOICE_WRONG])
def test_tool_choice_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_tool_choices, answer, en, zh)


CHOICE_RIGHT = {
    # the SDK's own types for a Responses tool_choice: ToolChoiceFunctionParam, ToolChoiceAllowedParam,
    # and the response-side model ToolChoiceFunction (the SDK sends a pydantic model as its JSON)
    "the typed param": choices(ToolChoiceFunctionParam(type="function", name="backup__read_text_file")),
    "the SDK's model object": choices(ToolChoiceFunction(type="function", name="backup__read_text_file")),
    "allowed_tools with only the backup, required": choices(ToolChoiceAllowedParam(
        type="allowed_tools", mode="required", tools=[{"type": "function", "name": "backup__read_text_file"}])),
}  # fmt: skip


@pytest.mark.parametrize("answer", list(CHOICE_RIGHT.values()), ids=list(CHOICE_RIGHT))
def test_tool_choice_other_right_answers_pass(corpus, answer):
    corpus.right(check_tool_choices, answer)
