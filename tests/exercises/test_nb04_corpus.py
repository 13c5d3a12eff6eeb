"""Notebook 04's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), and other correct
answers than the reference (shapes the Responses API and the SDK's types allow; each must pass)."""

from __future__ import annotations

import json

import pytest

from course_lib.exercises.nb04 import build_second_input, check_request_2, check_second_input, request_2
from course_lib.loop import feedback_item

# ---- exercise 1: build_second_input -------------------------------------------------------------


def calls(response):
    return [item for item in response.output if item.type == "function_call"]


def task_dropped(task_item, response, outputs):
    return build_second_input(task_item, response, outputs)[1:]


def calls_dropped(task_item, response, outputs):
    return [task_item, *(feedback_item(c.call_id, outputs[c.call_id]) for c in calls(response))]


def only_output_0(task_item, response, outputs):
    call = response.output[0]
    return [task_item, call.to_dict(), feedback_item(call.call_id, outputs[call.call_id])]


def answered_only_output_0(task_item, response, outputs):
    first = response.output[0]
    return [task_item, *(c.to_dict() for c in calls(response)), feedback_item(first.call_id, outputs[first.call_id])]


def item_id_for_call_id(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [call.to_dict(), feedback_item(call.id, outputs[call.call_id])]
    return items


def output_before_call(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [feedback_item(call.call_id, outputs[call.call_id]), call.to_dict()]
    return items


def plain_model_dump(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [call.model_dump(), feedback_item(call.call_id, outputs[call.call_id])]
    return items


def mcp_content_blocks(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [call.to_dict(), {"type": "function_call_output", "call_id": call.call_id,
                                   "output": [{"type": "text", "text": outputs[call.call_id]}]}]
    return items


def chat_tool_message(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [call.to_dict(), {"role": "tool", "tool_call_id": call.call_id, "content": outputs[call.call_id]}]
    return items


def output_as_an_object(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [call.to_dict(), {"type": "function_call_output", "call_id": call.call_id,
                                   "output": {"text": outputs[call.call_id]}}]
    return items


def arguments_parsed(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [dict(call.to_dict(), arguments=json.loads(call.arguments)), feedback_item(call.call_id, outputs[call.call_id])]
    return items


def each_output_twice(task_item, response, outputs):
    items = build_second_input(task_item, response, outputs)
    return items + [item for item in items if item.get("type") == "function_call_output"]


def starter_body(task_item, response, outputs):
    return ...  # your code here: the list of input items for request 2


def returns_early(task_item, response, outputs):
    items = [task_item]
    for call in calls(response):
        items += [call.to_dict(), feedback_item(call.call_id, outputs[call.call_id])]
        return items  # inside the loop: the second call is never reached


SECOND_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("the task left out", task_dropped, ["input[0] must be the user's task item"], ["input[0] 必须是用户的任务项"]),
    ("the calls left out", calls_dropped, ["the original function_call", "is missing",
                                           "an output without its call is refused"], ["没有对应调用的输出会被拒绝"]),
    ("only output[0] kept", only_output_0, ["on the two-call task", "is missing", "walk every output item, not only output[0]"],
     ["要遍历每一个输出项，而不只是 output[0]"]),
    ("only output[0] answered", answered_only_output_0, ["on the two-call task", "no function_call_output for call_id",
                                                         "the model never receives that result"], ["模型永远收不到那个结果"]),
    ("the item id where the call_id belongs", item_id_for_call_id, ["matches no call", "is the call item's id",
                                                                    "the feedback quotes its call_id"],
     ["是调用项的 id；反馈要引用的是它的 call_id"]),
    ("the output before its call", output_before_call, ["comes before its call", "the call goes first"], ["调用必须在前"]),
    ("a plain model_dump()", plain_model_dump, ["null fields the model never sent", "model_dump()", "item.to_dict()"],
     ["null 字段"]),
    ("MCP content blocks as the output", mcp_content_blocks, ["has type 'text'", "that is an MCP content block",
                                                              "'input_text'"], ["那是 MCP 的内容块"]),
    ("a Chat Completions tool message", chat_tool_message, ["a Chat Completions tool message", "function_call_output"],
     ["Chat Completions 的工具消息"]),
    ("the output as a JSON object", output_as_an_object, ["is a JSON object", "as a string or as a list of input_text parts"],
     ["是一个 JSON 对象"]),
    ("the arguments parsed", arguments_parsed, ["has arguments as a JSON object", "keep the model's arguments text unchanged"],
     ["请原样保留模型的参数文本"]),
    ("each output sent twice", each_output_twice, ["2 function_call_output items for call_id", "send exactly one"],
     ["只能发送一个"]),
    ("return inside the loop", returns_early, ["on the two-call task", "is missing"], ["在有两个调用的任务上"]),
    ("the starter's body", starter_body, ["Not answered yet: build_second_input still returns ..."], ["还没有作答"]),
    ("the list built once, outside", [], ["Pass the function itself (build_second_input", "list []"],
     ["请传入函数本身（build_second_input"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in SECOND_WRONG], ids=[row[0] for row in SECOND_WRONG])
def test_second_input_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_second_input, answer, en, zh)


def typed_items_and_parts(task_item, response, outputs):
    """Another shape: the typed items themselves, then each output as a list of input_text parts."""
    return [task_item, *response.output, *({"type": "function_call_output", "call_id": c.call_id,
                                           "output": [{"type": "input_text", "text": outputs[c.call_id]}]}
                                          for c in calls(response))]  # fmt: skip


def each_output_after_its_call(task_item, response, outputs):
    """Every item back, each call followed at once by its output: a model that does not reason takes it,
    a reasoning model refuses an output between the calls of one output."""
    items = [task_item]
    for item in response.output:
        items.append(item.to_dict())
        if item.type == "function_call":
            items.append(feedback_item(item.call_id, outputs[item.call_id]))
    return items


def calls_first_then_outputs(task_item, response, outputs):
    """Another order the API takes: every output item (a reasoning model's reasoning item included),
    then every output (each still after its call). It used to send the calls alone, which a
    reasoning model refuses: the check had no reasoning model's response to try it on."""
    return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": task_item["content"]}]},
            *(item.model_dump(exclude_none=True) for item in response.output),
            *(feedback_item(c.call_id, outputs[c.call_id]) for c in calls(response))]


def calls_alone(task_item, response, outputs):
    """Only the calls and their outputs: right for a model that does not reason, refused for one that does."""
    return [task_item, *(item for c in calls(response) for item in (c.to_dict(), feedback_item(c.call_id, outputs[c.call_id])))]


def test_second_input_without_the_reasoning_item_is_refused(corpus):
    corpus.wrong(check_second_input, calls_alone, ["of a reasoning model (gpt-5)", "without its required 'reasoning' item",
                                                    "its reasoning item before its calls"], ["推理模型", "reasoning 项在它的调用之前"])


def test_second_input_with_an_output_between_a_reasoning_models_calls_is_refused(corpus):
    corpus.wrong(check_second_input, each_output_after_its_call, ["of a reasoning model (gpt-5)", "no output between them"],
                 ["推理模型", "调用之间不夹输出"])


@pytest.mark.parametrize("answer", [typed_items_and_parts, calls_first_then_outputs],
                         ids=["typed items, input_text parts", "calls first, the task as a message item"])
def test_second_input_other_right_answers_pass(corpus, answer):
    corpus.right(check_second_input, answer)


# ---- exercise 2: request_2 ----------------------------------------------------------------------


def results(response, outputs):
    return [feedback_item(c.call_id, outputs[c.call_id]) for c in calls(response)]


def call_sent_again(task_item, response, outputs, stored):
    if not stored:
        return request_2(task_item, response, outputs, stored)
    return {"previous_response_id": response.id, "input": [*(c.to_dict() for c in calls(response)), *results(response, outputs)]}


def task_sent_again(task_item, response, outputs, stored):
    if not stored:
        return request_2(task_item, response, outputs, stored)
    return {"previous_response_id": response.id, "input": [task_item, *results(response, outputs)]}


def the_item_id(task_item, response, outputs, stored):
    if not stored:
        return request_2(task_item, response, outputs, stored)
    return {"previous_response_id": calls(response)[0].id, "input": results(response, outputs)}


def the_call_id(task_item, response, outputs, stored):
    if not stored:
        return request_2(task_item, response, outputs, stored)
    return {"previous_response_id": calls(response)[0].call_id, "input": results(response, outputs)}


def chained_always(task_item, response, outputs, stored):
    return {"previous_response_id": response.id, "input": results(response, outputs)}


def whole_context_always(task_item, response, outputs, stored):
    return {"input": build_second_input(task_item, response, outputs), "store": False}


def store_forgotten(task_item, response, outputs, stored):
    if stored:
        return request_2(task_item, response, outputs, stored)
    return {"input": build_second_input(task_item, response, outputs)}


def call_dropped_in_full(task_item, response, outputs, stored):
    if stored:
        return request_2(task_item, response, outputs, stored)
    return {"input": [task_item, *results(response, outputs)], "store": False}


def model_and_tools_too(task_item, response, outputs, stored):
    return {**request_2(task_item, response, outputs, stored), "model": "gpt-4.1", "tools": []}


def input_as_text(task_item, response, outputs, stored):
    if not stored:
        return request_2(task_item, response, outputs, stored)
    return {"previous_response_id": response.id, "input": "\n".join(outputs.values())}


def starter_body(task_item, response, outputs, stored):
    return ...  # your code here


REQUEST_WRONG = [
    ("the call sent again with previous_response_id", call_sent_again, ["one call, stored", "sends the function_call again",
                                                                        "a second copy is a duplicate"], ["再发一份就是重复"]),
    ("the task sent again", task_sent_again, ["sends the task again", "read the question twice"], ["模型会把问题读两遍"]),
    ("the call item's id as previous_response_id", the_item_id, ["the call item's id", "it names a response",
                                                                  "response.id"], ["它指名的是一个响应"]),
    ("the call_id as previous_response_id", the_call_id, ["the call's call_id", "it names a response"], ["调用的 call_id"]),
    ("previous_response_id after store: false", chained_always, ["made with store: false", "the platform kept nothing",
                                                                 "send the whole context"], ["平台什么也没保留"]),
    ("the whole context after a stored response", whole_context_always, ["response 1 was stored",
                                                                          "continue it with previous_response_id"],
     ["用 previous_response_id=response.id 接着它"]),
    ("store: false not sent again", store_forgotten, ["leaves store at its default, true", "pass store=False again"],
     ["请再次传入 store=False"]),
    ("the call dropped from the whole context", call_dropped_in_full, ["must carry the whole story", "is missing"],
     ["input 必须带着完整的经过"]),
    ("model and tools returned too", model_and_tools_too, ["the check adds model and tools itself"],
     ["model 和 tools 由检查自己加上"]),
    ("the outputs as one text", input_as_text, ["input is the list of new items"], ["input 是新项的列表"]),
    ("the starter's body", starter_body, ["Not answered yet: request_2 still returns ..."], ["还没有作答"]),
    ("a dict instead of the function", {"input": []}, ["Pass the function itself (request_2", "dict"],
     ["请传入函数本身（request_2"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in REQUEST_WRONG], ids=[row[0] for row in REQUEST_WRONG])
def test_request_2_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_request_2, answer, en, zh)


def store_said_both_times(task_item, response, outputs, stored):
    """Another shape: store stated both times, typed calls in the whole context, outputs as parts."""
    if stored:
        return {"previous_response_id": response.id, "store": True, "input": [
            {"type": "function_call_output", "call_id": c.call_id, "output": [{"type": "input_text", "text": outputs[c.call_id]}]}
            for c in calls(response)]}
    return {"store": False, "input": [task_item, *(x for c in calls(response)
                                                    for x in (c, feedback_item(c.call_id, outputs[c.call_id])))]}


def test_request_2_other_right_answer_passes(corpus):
    corpus.right(check_request_2, store_said_both_times)
