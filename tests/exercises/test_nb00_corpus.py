"""Notebook 00's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and the property the exercise promises."""

from __future__ import annotations

import collections
import types

import pytest
from openai.types.responses import Response

from course_lib.exercises.nb00 import SOLUTIONS, check_final_text, check_kinds, composed_cases

# ---- exercise 1: rule, value or result ----------------------------------------------------------


def relabel(**changes: object) -> dict[str, object]:
    """The reference labels with some changed: relabel(**{"name": "value"})."""
    return {**SOLUTIONS["check_kinds"](), **changes}


KINDS_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("the declaration's parameters taken for a value", relabel(**{"request 1: tools[0].parameters": "value"}),
     ["'request 1: tools[0].parameters' is a rule, not a value", "identical in both runs"], ["是规则，不是值", "完全相同"]),
    ("required taken for a result", relabel(**{"request 1: tools[0].parameters.required": "result"}),
     ["is a rule, not a result"], ["是规则，不是结果"]),
    ("the MCP arguments taken for a rule", relabel(**{"tools/call request: params.arguments": "rule"}),
     ["is a value, not a rule", "'head': 20} → {'path': '/workspace/notes.txt', 'head': 5}"],
     ["是值，不是规则", "任务一变，它就跟着变了", "服务器运行之前"]),
    ("the arguments text taken for a result", relabel(**{"response 1: function_call.arguments": "result"}),
     ["is a value, not a result", "existed before the server ran"], ["是值，不是结果", "服务器运行之前就已经存在"]),
    ("the feedback taken for a value", relabel(**{"request 2: function_call_output.output": "value"}),
     ["is a result, not a value", "only after the server ran"], ["是结果，不是值", "只在服务器运行之后才出现"]),
    ("structuredContent taken for a rule", relabel(**{"tools/call response: result.structuredContent": "rule"}),
     ["is a result, not a rule", "appeared only after the server ran"], ["是结果，不是规则"]),
    ("a word that is not a kind", relabel(**{"tools/list: inputSchema": "schema"}),
     ["'schema' is not a kind", '"rule", "value" or "result"'], ["'schema' 不是一种种类"]),
    ("one label left as the starter's ...", relabel(**{"tools/list: inputSchema": ...}),
     ["Not answered yet for 'tools/list: inputSchema'"], ["'tools/list: inputSchema' 还没有作答"]),
    ("an object's name retyped", {("Tools/list: inputSchema" if k == "tools/list: inputSchema" else k): v
                                  for k, v in SOLUTIONS["check_kinds"]().items()},
     ["'Tools/list: inputSchema' is not one of the recorded objects", "did you mean 'tools/list: inputSchema'?"],
     ["不是记录下来的对象之一", "你是不是想写 'tools/list: inputSchema'？"]),
    ("a list of labels instead of the dict", ["rule"] * 10, ["Give a dict from object name to kind", "list"],
     ["请给出一个从对象名到种类的 dict", "list"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in KINDS_WRONG], ids=[row[0] for row in KINDS_WRONG])
def test_kinds_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_kinds, answer, en, zh)


KINDS_RIGHT = {
    "capitals and spaces around the kinds": {k: f" {v.capitalize()} " for k, v in SOLUTIONS["check_kinds"]().items()},
    "an OrderedDict, last object first": collections.OrderedDict(reversed(list(SOLUTIONS["check_kinds"]().items()))),
    "a read-only mapping": types.MappingProxyType(SOLUTIONS["check_kinds"]()),
}


@pytest.mark.parametrize("answer", list(KINDS_RIGHT.values()), ids=list(KINDS_RIGHT))
def test_kinds_other_right_answers_pass(corpus, answer):
    corpus.right(check_kinds, answer)


# ---- exercise 2: final_text -----------------------------------------------------------------------


def assumes_output_0(r):
    first = r["output"][0]
    return first["content"][0]["text"] if first["type"] == "message" else ""


def reads_output_0_blindly(r):
    return r["output"][0]["content"][0]["text"]


def first_part_only(r):
    return next((i["content"][0]["text"] for i in r["output"] if i["type"] == "message"), "")


def every_part(r):
    return "".join(p["text"] for i in r["output"] if i["type"] == "message" for p in i["content"])


def every_part_with_refusals(r):
    return "".join(p.get("text") or p.get("refusal", "") for i in r["output"] if i["type"] == "message"
                   for p in i["content"])  # fmt: skip


def every_text_of_every_item(r):
    return "".join(p.get("text", "") for i in r["output"] for p in i.get("content") or [])


def joined_with_newlines(r):
    return "\n".join(p["text"] for i in r["output"] if i["type"] == "message"
                     for p in i["content"] if p["type"] == "output_text")  # fmt: skip


def first_message_only(r):
    for item in r["output"]:
        if item["type"] == "message":
            return "".join(p["text"] for p in item["content"] if p["type"] == "output_text")
    return ""


def stops_at_a_refusal(r):
    text = ""
    for item in r["output"]:
        if item["type"] == "message":
            for part in item["content"]:
                if part["type"] != "output_text":
                    break
                text += part["text"]
    return text


def none_without_a_message(r):
    texts = [p["text"] for i in r["output"] if i["type"] == "message" for p in i["content"] if p["type"] == "output_text"]
    return "".join(texts) if texts else None


def starter_body(r):
    ...  # your code here


def reads_the_sdk_attribute(r):
    return r.output_text


FINAL_TEXT_WRONG = [
    ("assumes the message is output[0]", assumes_output_0,
     ["case 'a call next to a message, output = [function_call, message]'", "The message is at output[1] here"],
     ["例子 '调用旁边跟着一条消息", "这里的消息位于 output[1]"]),
    ("reads output[0].content blindly", reads_output_0_blindly,
     ["case 'a tool call only, output = [function_call]'", "crashed with KeyError: 'content'", "Not every item is a message"],
     ["例子 '只有一个工具调用", "你的函数崩溃了，KeyError", "并非每一项都是消息"]),
    ("takes the first part only", first_part_only,
     ["case 'one message in two parts", "Join the text of every output_text part"], ["一条消息分成两个部分", "把每个 output_text 部分的文本"]),
    ("joins every part, refusals included: KeyError", every_part,
     ["case 'a message with a refusal part", "A refusal part has no 'text'", "join only 'output_text' parts"],
     ["一条带 refusal 部分的消息", "refusal 部分没有 'text'"]),
    ("joins a refusal's text as answer text", every_part_with_refusals,
     ["You joined the refusal part too", "a refusal is not answer text"], ["你把 refusal 部分也拼了进来"]),
    ("joins the reasoning item too", every_text_of_every_item,
     ["case 'a reasoning item before the message", "You joined the reasoning item's text too", "type is 'message'"],
     ["消息之前有一个 reasoning 项", "你把 reasoning 项的文本也拼了进来"]),
    ("joins with newlines", joined_with_newlines,
     ["case 'one message in two parts", "Join with nothing in between"], ["中间什么也不加"]),
    ("takes the first message only", first_message_only,
     ["case 'two messages around a call", "2 message items and you took one"], ["有 2 个 message 项，你只取了一个"]),
    ("stops at the first part that is not output_text", stops_at_a_refusal,
     ["case 'a refusal part before the text", "does not end the message"], ["它并不结束这条消息"]),
    ("None when there is no message", none_without_a_message,
     ["case 'a tool call only, output = [function_call]'", "you returned None (NoneType); return a str"],
     ["你返回了 None（NoneType）；请返回一个 str"]),
    ("the starter's body, never filled in", starter_body,
     ["Your function returned None: is its body still `...`"], ["它的函数体是不是还是 `...`"]),
    ("reads the SDK's attribute on plain JSON", reads_the_sdk_attribute,
     ["AttributeError", "response_json is plain JSON", 'response_json["output"]'], ["response_json 是普通的 JSON"]),
    ("called instead of passed", "Here are the first 20 lines", ["Pass the function itself (final_text", "str"],
     ["请传入函数本身（final_text，不带括号）"]),
    ("answer = ... never set", ..., ["Not answered yet", "set answer = final_text"], ["还没有作答", "answer = final_text"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in FINAL_TEXT_WRONG],
                         ids=[row[0] for row in FINAL_TEXT_WRONG])  # fmt: skip
def test_final_text_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_final_text, answer, en, zh)


def with_the_sdk(response_json):
    return Response.model_validate(response_json).output_text


def with_get_and_a_comprehension(response_json):
    return "".join(part.get("text", "") for item in response_json.get("output", ()) if item.get("type") == "message"
                   for part in item.get("content", ()) if part.get("type") == "output_text")  # fmt: skip


@pytest.mark.parametrize("answer", [with_the_sdk, with_get_and_a_comprehension], ids=["the SDK itself", "a comprehension"])
def test_final_text_other_right_answers_pass(corpus, answer):
    corpus.right(check_final_text, answer)


def test_final_text_is_tried_on_every_order_of_five_kinds_of_item():
    """The promise is "every message, every part, in order": all 156 output lists of up to three items."""
    cases = composed_cases()
    assert len(cases) == 1 + 5 + 5**2 + 5**3
    labels = {label for label, _ in cases}
    assert "output = [message(refusal, output_text), reasoning, function_call]" in labels
    assert all(Response.model_validate(body) for _, body in cases)
