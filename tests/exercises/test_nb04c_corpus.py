"""Notebook 04c's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), and other correct
answers than the reference: shapes the SDK's own types allow (`ChatCompletionToolMessageParam.content`
may be a list of text parts; `ToolResultBlockParam.content` a list of text blocks; a text block may
sit beside the tool_use or after the tool_result), each of which must pass."""

from __future__ import annotations

import json

import pytest
from anthropic.types import TextBlockParam, ToolResultBlockParam, ToolUseBlockParam
from openai.types.chat import ChatCompletionToolMessageParam

from course_lib.exercises.nb04c import chat_replies, check_chat_replies, check_to_messages, to_messages

# ---- exercise 1: chat_replies -------------------------------------------------------------------


def tool_messages(completion, outputs):
    return [{"role": "tool", "tool_call_id": c.id, "content": outputs[c.id]} for c in completion.choices[0].message.tool_calls]


def assistant_left_out(completion, outputs):
    return tool_messages(completion, outputs)


def no_tool_call_id(completion, outputs):
    return [completion.choices[0].message, *({"role": "tool", "content": outputs[c.id]}
                                             for c in completion.choices[0].message.tool_calls)]


def responses_shape(completion, outputs):
    return [completion.choices[0].message, *({"type": "function_call_output", "call_id": c.id, "output": outputs[c.id]}
                                             for c in completion.choices[0].message.tool_calls)]


def only_the_first_call(completion, outputs):
    return [completion.choices[0].message, tool_messages(completion, outputs)[0]]


def content_as_an_object(completion, outputs):
    return [completion.choices[0].message, *({"role": "tool", "tool_call_id": c.id, "content": {"text": outputs[c.id]}}
                                             for c in completion.choices[0].message.tool_calls)]


def outputs_swapped(completion, outputs):
    first, second = completion.choices[0].message.tool_calls
    return [completion.choices[0].message, {"role": "tool", "tool_call_id": first.id, "content": outputs[second.id]},
            {"role": "tool", "tool_call_id": second.id, "content": outputs[first.id]}]


def the_task_again(completion, outputs):
    return [{"role": "user", "content": "Show the first 2 lines"}, *chat_replies(completion, outputs)]


def deprecated_function_role(completion, outputs):
    return [completion.choices[0].message, *({"role": "function", "name": c.function.name, "content": outputs[c.id]}
                                             for c in completion.choices[0].message.tool_calls)]


def arguments_parsed(completion, outputs):
    message = completion.choices[0].message.model_dump(exclude_none=True)
    for call in message["tool_calls"]:
        call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return [message, *tool_messages(completion, outputs)]


def starter_body(completion, outputs):
    return ...  # your code here: a list of messages


CHAT_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("the assistant message left out", assistant_left_out, ["the first message must be the assistant message",
                                                            "a tool message answers a call the history must show"],
     ["第一条消息必须是带 tool_calls 的助手消息"]),
    ("no tool_call_id", no_tool_call_id, ["a tool message without 'tool_call_id'"], ["没有 'tool_call_id' 的工具消息"]),
    ("the Responses shape", responses_shape, ["'function_call_output' item is the Responses shape", "role 'tool'"],
     ["是 Responses 的形状"]),
    ("one call answered of two", only_the_first_call, ["no tool message answers tool_calls id", "every call needs its own reply"],
     ["每个调用都需要自己的回复"]),
    ("the output as an object", content_as_an_object, ["content is text", "not a JSON object"], ["不是 JSON 对象"]),
    ("the outputs swapped", outputs_swapped, ["does not carry that call's output"], ["没有带上那个调用的输出"]),
    ("the task sent again", the_task_again, ["the user's task is already in the history"], ["用户的任务已经在历史里了"]),
    ("role 'function'", deprecated_function_role, ["role 'function' is the old, deprecated shape"], ["已弃用的结果形状"]),
    ("the arguments parsed", arguments_parsed, ["refused the messages", "expected a string, but got an object"],
     ["离线模型拒绝了这些消息"]),
    ("the starter's body", starter_body, ["chat_replies still returns the starter"], ["仍然返回起始代码里的"]),
    ("the name as a string", "chat_replies", ["Pass the function itself (chat_replies"], ["请传入函数本身（chat_replies"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in CHAT_WRONG], ids=[row[0] for row in CHAT_WRONG])
def test_chat_replies_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_chat_replies, answer, en, zh)


def typed_message_and_text_parts(completion, outputs):
    """The SDK's message object itself, and each result as a list of text parts (the param type allows it)."""
    message = completion.choices[0].message
    return [message, *(ChatCompletionToolMessageParam(role="tool", tool_call_id=call.id,
                                                      content=[{"type": "text", "text": outputs[call.id]}])
                       for call in message.tool_calls)]


def rebuilt_by_hand(completion, outputs):
    """An assistant message written out by hand, with only the fields it needs."""
    calls = completion.choices[0].message.tool_calls
    return [{"role": "assistant", "tool_calls": [{"id": c.id, "type": "function", "function": {
        "name": c.function.name, "arguments": c.function.arguments}} for c in calls]},
        *({"role": "tool", "tool_call_id": c.id, "content": outputs[c.id]} for c in reversed(calls))]


@pytest.mark.parametrize("answer", [typed_message_and_text_parts, rebuilt_by_hand], ids=["typed, text parts", "by hand"])
def test_chat_replies_other_right_answers_pass(corpus, answer):
    corpus.right(check_chat_replies, answer)


# ---- exercise 2: to_messages --------------------------------------------------------------------


def use_of(call, **changes):
    return {"type": "tool_use", "id": call.call_id, "name": call.name, "input": json.loads(call.arguments), **changes}


def result_of(call, output, **changes):
    return {"type": "tool_result", "tool_use_id": call.call_id, "content": output, **changes}


def input_as_text(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call, input=call.arguments)]},
            {"role": "user", "content": [result_of(call, output)]}]


def ids_that_differ(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call, id=call.id)]},
            {"role": "user", "content": [result_of(call, output)]}]


def result_in_the_assistant_turn(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call), result_of(call, output)]},
            {"role": "user", "content": "Go on."}]


def responses_items(task, call, output):
    return [{"role": "user", "content": task}, call.to_dict(),
            {"type": "function_call_output", "call_id": call.call_id, "output": output}]


def chat_tool_role(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call)]},
            {"role": "tool", "tool_use_id": call.call_id, "content": output}]


def block_not_in_a_list(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": use_of(call)},
            {"role": "user", "content": [result_of(call, output)]}]


def result_as_an_object(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call)]},
            {"role": "user", "content": [result_of(call, output, content={"text": output})]}]


def task_left_out(task, call, output):
    return to_messages(task, call, output)[1:]


def another_name(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call, name="read_text_file")]},
            {"role": "user", "content": [result_of(call, output)]}]


def empty_result(task, call, output):
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call)]},
            {"role": "user", "content": [result_of(call, "")]}]


MESSAGES_WRONG = [
    ("input as the arguments text", input_as_text, ["tool_use.input is str", "json.loads(call.arguments)"],
     ["tool_use.input 是 str"]),
    ("a tool_use_id that is not the block's id", ids_that_differ, ["tool_result.tool_use_id is", "the pair is tied by that id"],
     ["这一对正是靠这个 id 绑定的"]),
    ("the result in the assistant turn", result_in_the_assistant_turn, ["the tool_result is in the assistant message",
                                                                         "the next *user* message"], ["下一条*用户*消息"]),
    ("the Responses items", responses_items, ["function_call and function_call_output are Responses items"],
     ["是 Responses 的项"]),
    ("Chat's role 'tool'", chat_tool_role, ["Messages has no role 'tool'"], ["Messages 没有 role 'tool'"]),
    ("the block not in a content list", block_not_in_a_list, ["needs a tool_use block", "in a content list"],
     ["助手消息的 content 列表里需要一个 tool_use 块"]),
    ("the result as an object", result_as_an_object, ["tool_result.content is the tool's text", "a JSON object"],
     ["tool_result.content 是工具的文本"]),
    ("the task left out", task_left_out, ["must return three message dicts", "(yours has 2)"], ["（你的有 2 个）"]),
    ("the tool's own name, not the alias", another_name, ["must carry the call's own name and arguments"],
     ["必须带着这个调用自己的名称和参数"]),
    ("an empty result", empty_result, ["the tool_result does not carry the output"], ["tool_result 没有带上输出"]),
    ("the starter's body", lambda task, call, output: ..., ["to_messages still returns the starter"], ["仍然返回起始代码里的"]),
    ("the messages built once", [], ["Pass the function itself (to_messages", "list []"], ["请传入函数本身（to_messages"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in MESSAGES_WRONG], ids=[row[0] for row in MESSAGES_WRONG])
def test_to_messages_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_to_messages, answer, en, zh)


def typed_blocks(task, call, output):
    """The SDK's param types, a text block before the tool_use, the result as text blocks, is_error stated."""
    return [{"role": "user", "content": [TextBlockParam(type="text", text=task)]},
            {"role": "assistant", "content": [TextBlockParam(type="text", text="I will read it."),
                                              ToolUseBlockParam(type="tool_use", id=call.call_id, name=call.name,
                                                                input=json.loads(call.arguments))]},
            {"role": "user", "content": [ToolResultBlockParam(type="tool_result", tool_use_id=call.call_id,
                                                              content=[{"type": "text", "text": output}], is_error=False)]}]


def text_after_the_result(task, call, output):
    """A text block may follow the tool_result in the user turn (tool_result blocks come first)."""
    messages = to_messages(task, call, output)
    messages[2]["content"].append({"type": "text", "text": "Answer from this, please."})
    return messages


def the_item_id_on_both_sides(task, call, output):
    """Any id ties the pair, as long as both blocks carry the same one."""
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use_of(call, id=call.id)]},
            {"role": "user", "content": [result_of(call, output, tool_use_id=call.id)]}]


@pytest.mark.parametrize("answer", [typed_blocks, text_after_the_result, the_item_id_on_both_sides],
                         ids=["typed blocks", "text after the result", "the item id on both sides"])
def test_to_messages_other_right_answers_pass(corpus, answer):
    corpus.right(check_to_messages, answer)
