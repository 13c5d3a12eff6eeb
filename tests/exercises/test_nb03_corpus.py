"""Notebook 03's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and the property the exercise promises (pairing by id
in every arrival order; every kind of tools/call response, not only our server's)."""

from __future__ import annotations

import pytest
from mcp_types import CallToolResult

from course_lib.exercises.nb03 import (
    arrival_orders,
    check_classify,
    check_pair_by_id,
    classify_cases,
    real_recording,
)

# ---- exercise 1: pair_by_id ---------------------------------------------------------------------


def by_position(messages):
    requests = [m.json for m in messages if "method" in m.json and "id" in m.json]
    responses = [m.json for m in messages if "method" not in m.json]
    return {request["id"]: (request, response) for request, response in zip(requests, responses)}


def notifications_kept(messages):
    requests = {m.json.get("id"): m.json for m in messages if "method" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "method" not in m.json}
    return {key: (request, responses.get(key)) for key, request in requests.items()}


def results_only(messages):
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json and "id" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "result" in m.json}
    return {key: (request, responses[key]) for key, request in requests.items() if key in responses}


def crashes_on_a_notification(messages):
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "method" not in m.json}
    return {key: (request, responses.get(key)) for key, request in requests.items()}


def ids_as_strings(messages):
    requests = {str(m.json["id"]): m.json for m in messages if "method" in m.json and "id" in m.json}
    responses = {str(m.json["id"]): m.json for m in messages if "method" not in m.json}
    return {key: (request, responses.get(key)) for key, request in requests.items()}


def swapped(messages):
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json and "id" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "method" not in m.json}
    return {key: (responses.get(key), request) for key, request in requests.items()}


def list_of_pairs(messages):
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json and "id" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "method" not in m.json}
    return [(request, responses.get(key)) for key, request in requests.items()]


def next_message_is_the_answer(messages):
    """Right while every answer follows its request; wrong as soon as the order changes."""
    pairs = {}
    for i, m in enumerate(messages):
        if "method" in m.json and "id" in m.json:
            after = messages[i + 1].json if i + 1 < len(messages) else None
            pairs[m.json["id"]] = (m.json, after if after is not None and "method" not in after else None)
    return pairs


def starter_body(messages):
    ...  # your code here


PAIR_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("pairs by position", by_position, ["Pair by the JSON-RPC id, not by position", "reverse order"],
     ["请按 JSON-RPC id 配对，而不是按位置"]),
    ("the answer taken as the next message", next_message_is_the_answer,
     ["your pair has no response, yet the server answered it", "reverse order", "wherever it arrives"],
     ["你的这一对没有响应，可服务器答复了它"]),
    ("the notification kept, under None", notifications_kept, ["key None: a notification", "leave it out"],
     ["键 None：通知"]),
    ("the JSON-RPC error left out", results_only, ["id 7 (tools/call delete_file) is missing",
                                                   "an error is still the response"], ["错误仍然是那个请求的响应"]),
    ("m.json['id'] on a notification", crashes_on_a_notification, ["pair_by_id raised KeyError: 'id'",
                                                                   "notifications have no id"], ["通知没有 id"]),
    ("ids turned into strings", ids_as_strings, ["key '1': the id crossed as the number 1", "not as a string"],
     ["不要变成字符串"]),
    ("(response, request) pairs", swapped, ["you swapped them", "the request first"], ["你把两者弄反了"]),
    ("a list of pairs", list_of_pairs, ["must return a dict", "list"], ["必须返回一个 dict"]),
    ("the starter's body", starter_body, ["it returned NoneType None", "Your function returned None"],
     ["它返回的是 NoneType None"]),
    ("called instead of passed", {1: ({}, {})}, ["Pass the function itself (pair_by_id"], ["请传入函数本身（pair_by_id"]),
    ("answer = ... never set", ..., ["set answer = pair_by_id"], ["answer = pair_by_id"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PAIR_WRONG], ids=[row[0] for row in PAIR_WRONG])
def test_pair_by_id_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_pair_by_id, answer, en, zh)


def by_direction_with_wire_messages(messages):
    """Another shape: the direction decides, and the pairs hold the WireMessages themselves."""
    sent = {m.json["id"]: m for m in messages if m.direction == "app→server" and "id" in m.json}
    answers = {m.json["id"]: m for m in messages if m.direction == "server→app"}
    return {key: (request, answers.get(key)) for key, request in sent.items()}


def one_pass(messages):
    pairs = {}
    for m in messages:
        if "id" not in m.json:
            continue
        request, response = pairs.get(m.json["id"], (None, None))
        pairs[m.json["id"]] = (m.json, response) if "method" in m.json else (request, m.json)
    return pairs


@pytest.mark.parametrize("answer", [by_direction_with_wire_messages, one_pass], ids=["WireMessages by direction", "one pass"])
def test_pair_by_id_other_right_answers_pass(corpus, answer):
    corpus.right(check_pair_by_id, answer)


def test_the_answers_arrive_in_many_orders():
    recording = real_recording()
    orders = arrival_orders(recording)
    answer_orders = {tuple(m.json["id"] for m in messages if m.direction == "server→app") for *_, messages in orders}
    assert len(answer_orders) == len(orders) >= 16


def test_a_heuristic_right_in_both_old_orders_fails_in_another(corpus):
    """Either the recorded order or the reversed one: the two orders the check used to try."""

    def first_or_last(messages):
        requests = [m.json for m in messages if "method" in m.json and "id" in m.json]
        answers = [m.json for m in messages if "method" not in m.json]
        if answers and answers[0]["id"] != requests[0]["id"]:
            answers = answers[::-1]
        return {request["id"]: (request, answer) for request, answer in zip(requests, answers)}

    corpus.wrong(check_pair_by_id, first_or_last, ["rotated by 1", "not by position"], ["循环移位了 1 个位置"])


# ---- exercise 2: classify -----------------------------------------------------------------------


def is_error_read_with_brackets(response):
    if "error" in response:
        return "protocol error"
    return "tool error" if response["result"]["isError"] else "success"


def key_presence(response):
    if "error" in response:
        return "protocol error"
    return "tool error" if "isError" in response["result"] else "success"


def every_error_is_a_tool_error(response):
    return "tool error" if "error" in response or response["result"].get("isError") else "success"


def result_first(response):
    return "tool error" if response["result"].get("isError") else "success"


def error_in_the_text(response):
    """isError, and to be safe the word "error" in the text as well."""
    if "error" in response:
        return "protocol error"
    text = " ".join(block.get("text", "") for block in response["result"]["content"])
    return "tool error" if response["result"].get("isError") or "error" in text.lower() else "success"


def code_in_front(response):
    """Our server writes "FORBIDDEN: ..."; another server need not."""
    if "error" in response:
        return "protocol error"
    first = response["result"]["content"][0]["text"].split(":")[0]
    return "tool error" if first in ("FORBIDDEN", "NOT_FOUND", "INVALID_INPUT") else "success"


def only_minus_32602(response):
    if response.get("error", {}).get("code") == -32602:
        return "protocol error"
    return "tool error" if response.get("result", {}).get("isError") else "success"


def underscored(response):
    if "error" in response:
        return "protocol_error"
    return "tool_error" if response["result"].get("isError") else "success"


def starter_body(response):
    ...


CLASSIFY_WRONG = [
    ("isError read with brackets", is_error_read_with_brackets, ["raised KeyError: 'isError'", "isError is optional",
                                                                 'result.get("isError", False)'], ["isError 是可选的"]),
    ("the key's presence tested, not its value", key_presence, ["you said 'tool error'", "test its value, not whether the key is present"],
     ["要检查它的值，而不是检查键是否存在"]),
    ("a protocol error taken for a tool error", every_error_is_a_tool_error, ["you said 'tool error'", "that is a protocol error"],
     ["这是协议错误"]),
    ("result read before looking for error", result_first, ["raised KeyError: 'result'", "look for 'error' before reading"],
     ["读取结果之前先找 'error'"]),
    ("the word 'error' searched in the text", error_in_the_text, ["id 8", "you said 'tool error'", "the call succeeded"],
     ["调用成功了"]),
    ("our server's error codes taken for the rule", code_in_front, ["id 10", "you said 'success'", "result.isError is true"],
     ["result.isError 为 true"]),
    ("only the unknown-tool code taken for a protocol error", only_minus_32602, ["id 11", "code -32603"], ["code -32603"]),
    ("labels with underscores", underscored, ["'tool_error' is not one of 'success', 'tool error', 'protocol error'"],
     ["'tool_error' 不是"]),
    ("the starter's body", starter_body, ["None is not one of", "Your function returned None"], ["你的函数返回了 None"]),
    ("answer = ... never set", ..., ["set answer = classify"], ["answer = classify"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in CLASSIFY_WRONG], ids=[row[0] for row in CLASSIFY_WRONG])
def test_classify_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_classify, answer, en, zh)


def with_the_mcp_types(response):
    """Another shape: the SDK's own CallToolResult reads the result (is_error defaults to False)."""
    if "error" in response:
        return "protocol error"
    return "tool error" if CallToolResult.model_validate(response["result"]).is_error else "success"


def with_match(response):
    match response:
        case {"error": _}:
            return "Protocol error"
        case {"result": {"isError": True}}:
            return "Tool error"
        case _:
            return "Success"


@pytest.mark.parametrize("answer", [with_the_mcp_types, with_match], ids=["CallToolResult", "match, capitalised"])
def test_classify_other_right_answers_pass(corpus, answer):
    corpus.right(check_classify, answer)


def test_the_cases_are_not_all_our_servers_shape():
    responses = [response for _, response in classify_cases()]
    texts = [r["result"]["content"][0]["text"] for r in responses if "result" in r]
    assert any("error" in text for r, text in zip(responses, texts) if not r.get("result", {}).get("isError"))
    assert any(r.get("result", {}).get("isError") and ":" not in r["result"]["content"][0]["text"] for r in responses)
    assert {r["error"]["code"] for r in responses if "error" in r} == {-32602, -32603}
    assert any("result" in r and "isError" not in r["result"] for r in responses)
