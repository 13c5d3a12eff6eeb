"""Notebook 04b's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and the property the exercise promises (the calls put
together right in every order the event types allow, not in one)."""

from __future__ import annotations

import json

import pytest

from course_lib.exercises.nb04b import check_calls_from_stream, check_stream_answer, interleavings
from course_lib.exercises.offline import model_name

# ---- exercise 1: calls_from_stream --------------------------------------------------------------


def parses_each_delta(events):
    calls, ids = {}, {}
    for event in events:
        if event.type == "response.output_item.added":
            ids[event.output_index] = event.item.call_id
        elif event.type == "response.function_call_arguments.delta":
            calls[ids[event.output_index]] = json.loads(event.delta)
    return calls


def item_ids(events):
    texts = {}
    for event in events:
        if event.type == "response.function_call_arguments.delta":
            texts[event.item_id] = texts.get(event.item_id, "") + event.delta
    return {item_id: json.loads(text) for item_id, text in texts.items()}


def left_as_text(events):
    ids, texts = {}, {}
    for event in events:
        if event.type == "response.output_item.added":
            ids[event.output_index], texts[event.output_index] = event.item.call_id, ""
        elif event.type == "response.function_call_arguments.delta":
            texts[event.output_index] += event.delta
    return {ids[i]: text for i, text in texts.items()}


def to_the_latest_call(events):
    calls, current, text = {}, None, ""
    for event in events:
        if event.type == "response.output_item.added":
            current, text = event.item.call_id, ""
        elif event.type == "response.function_call_arguments.delta":
            text += event.delta
        elif event.type == "response.function_call_arguments.done":
            calls[current] = json.loads(text)
    return calls


def done_ends_the_stream(events):
    ids, texts = {}, {}
    for event in events:
        if event.type == "response.output_item.added":
            ids[event.output_index], texts[event.output_index] = event.item.call_id, ""
        elif event.type == "response.function_call_arguments.delta":
            texts[event.output_index] += event.delta
        elif event.type == "response.function_call_arguments.done":
            return {ids[event.output_index]: json.loads(texts[event.output_index])}
    return {}


def text_per_index_keyed_by_the_first_id(events):
    """The pieces joined per output_index, but keyed by the first item's call_id only."""
    ids = [e.item.call_id for e in events if e.type == "response.output_item.added"]
    texts = {}
    for event in events:
        if event.type == "response.function_call_arguments.delta":
            texts[event.output_index] = texts.get(event.output_index, "") + event.delta
    return {ids[0]: json.loads(texts[min(texts)])} if texts else {}


def a_list_of_calls(events):
    return [item.arguments for item in events[-1].response.output]


def starter_body(events):
    return ...  # your code here: {call_id: {...arguments...}}


CALLS_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("json.loads on each delta", parses_each_delta, ["json.loads failed", "a delta is a piece of the arguments text"],
     ["增量是参数文本的一个片段"]),
    ("the item ids as keys", item_ids, ["the keys are item ids (fc_…)", "needs the call_id (call_…)"], ["键是 item id"]),
    ("the arguments left as text", left_as_text, ["the value is the arguments *text*", "parse it into an object"],
     ["值是参数*文本*"]),
    ("the pieces put with the latest call", to_the_latest_call, ["interleaved", "the pieces of two calls were joined together"],
     ["两个调用的片段被拼在了一起"]),
    ("returned at the first .done", done_ends_the_stream, ["on the two-call stream", "only 1 of the 2 calls",
                                                           "keep reading to the end of the stream"], ["要一直读到流的末尾"]),
    ("keyed by the first call only", text_per_index_keyed_by_the_first_id, ["only 1 of the 2 calls"], ["2 个调用里只有 1 个"]),
    ("a list instead of a dict", a_list_of_calls, ["must return a dict {call_id: arguments}, got list"],
     ["必须返回一个 dict"]),
    ("the starter's body", starter_body, ["Not answered yet: calls_from_stream still returns ..."], ["还没有作答"]),
    ("a name instead of the function", "calls_from_stream", ["Pass the function itself (calls_from_stream"],
     ["请传入函数本身（calls_from_stream"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in CALLS_WRONG], ids=[row[0] for row in CALLS_WRONG])
def test_calls_from_stream_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_calls_from_stream, answer, en, zh)


def at_output_item_done(events):
    """Another shape: the whole item comes with response.output_item.done; parse there."""
    return {e.item.call_id: json.loads(e.item.arguments) for e in events
            if e.type == "response.output_item.done" and e.item.type == "function_call"}


def from_the_done_events_text(events):
    """Another: .done carries the whole arguments text; item ids map back to call ids."""
    call_ids = {e.item.id: e.item.call_id for e in events if e.type == "response.output_item.added"}
    return {call_ids[e.item_id]: json.loads(e.arguments) for e in events
            if e.type == "response.function_call_arguments.done"}


def from_the_completed_response(events):
    """Never assembles the stream: reads the whole response from response.completed. It used to pass
    (every stream the check tried completed); a stream cut before its end has no final event."""
    done = next(e for e in events if e.type == "response.completed")
    return {item.call_id: json.loads(item.arguments) for item in done.response.output if item.type == "function_call"}


def from_the_last_event(events):
    """The same shortcut, written as events[-1].response."""
    return {item.call_id: json.loads(item.arguments) for item in events[-1].response.output
            if item.type == "function_call"}


def parses_what_arrived(events):
    """Assembles by item, but parses every call's text, also one still arriving (caught, kept as text)."""
    call_ids, texts = {}, {}
    for e in events:
        if e.type == "response.output_item.added":
            call_ids[e.output_index], texts[e.output_index] = e.item.call_id, ""
        elif e.type == "response.function_call_arguments.delta":
            texts[e.output_index] += e.delta
    calls = {}
    for index, call_id in call_ids.items():
        try:
            calls[call_id] = json.loads(texts[index])
        except json.JSONDecodeError:
            calls[call_id] = texts[index]
    return calls


CUT_WRONG = [  # answers no complete stream tells apart from a right one: the cut streams do
    ("reads response.completed (never assembles)", from_the_completed_response,
     ["cut while its arguments were still arriving", "raised StopIteration", "cut before response.completed",
      "put each call together from its own events"], ["被截断", "要由每个调用自己的事件把它拼起来"]),
    ("reads events[-1].response (never assembles)", from_the_last_event,
     ["raised AttributeError", "no final response to read"], ["没有最终的响应可读"]),
    ("keeps a call whose arguments never finished", parses_what_arrived,
     ["arguments never finished", "leave that call out"], ["一直没有传完", "排除在外"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in CUT_WRONG], ids=[row[0] for row in CUT_WRONG])
def test_calls_from_stream_answers_that_never_assemble_fail_on_a_cut_stream(corpus, answer, en, zh):
    corpus.wrong(check_calls_from_stream, answer, en, zh)


@pytest.mark.parametrize("answer", [at_output_item_done, from_the_done_events_text],
                         ids=["output_item.done", "arguments of .done"])
def test_calls_from_stream_other_right_answers_pass(corpus, answer):
    corpus.right(check_calls_from_stream, answer)


def test_the_two_calls_are_mixed_in_seven_orders():
    from course_lib.exercises.offline import offline_course
    from course_lib.exercises.nb04 import TWO_CALLS

    course = offline_course()
    try:
        events = list(course.client.responses.create(model=model_name(), input=TWO_CALLS,
                                                     tools=course.host.responses_tools(), stream=True))
    finally:
        course.close()
    orders = {tuple(e.output_index for e in mixed if e.type == "response.function_call_arguments.delta")
              for *_, mixed in interleavings(events)}
    assert len(orders) == 7
    for *_, mixed in interleavings(events):
        assert [e.sequence_number for e in mixed] == list(range(len(events)))


# ---- exercise 2: stream_answer ------------------------------------------------------------------


def not_streamed(client, context):
    return client.responses.create(model=model_name(), input=context).output_text


def the_last_piece(client, context):
    text = ""
    for event in client.responses.create(model=model_name(), input=context, stream=True):
        if event.type == "response.output_text.delta":
            text = event.delta
    return text


def the_pieces_as_a_list(client, context):
    return [e.delta for e in client.responses.create(model=model_name(), input=context, stream=True)
            if e.type == "response.output_text.delta"]


def a_wrong_event_name(client, context):
    return "".join(getattr(e, "delta", "") for e in client.responses.create(model=model_name(), input=context, stream=True)
                   if e.type == "response.text.delta")


def joined_with_spaces(client, context):
    return " ".join(e.delta for e in client.responses.create(model=model_name(), input=context, stream=True)
                    if e.type == "response.output_text.delta")


def returns_at_output_text_done(client, context):
    text = ""
    for event in client.responses.create(model=model_name(), input=context, stream=True):
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "response.output_text.done":
            return text  # the stream is left open: response.completed never comes
    return text


def the_stream_object(client, context):
    return client.responses.create(model=model_name(), input=context, stream=True)


def the_task_only(client, context):
    return "".join(e.delta for e in client.responses.create(model=model_name(), input=context[-1:], stream=True)
                   if e.type == "response.output_text.delta")


def starter_body(client, context):
    return ...  # your code here: the answer's text


def closed_at_output_text_done(client, context):
    """Stops at output_text.done, inside a with block that closes the stream: response.completed never
    reaches the code."""
    with client.responses.create(model=model_name(), input=context, stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.done":
                return event.text
    return ""


ANSWER_WRONG = [
    ("not streamed", not_streamed, ["the request was not streamed", "pass stream=True"], ["请求没有以流式发送"]),
    ("the last piece only", the_last_piece, ["it returned one piece", "join every output_text.delta"],
     ["把每个 output_text.delta 拼起来"]),
    ("the pieces as a list", the_pieces_as_a_list, ["returned the", "pieces as a list", "''.join(pieces)"],
     ["把它们拼成一个 str"]),
    ("an event type that does not exist", a_wrong_event_name, ["it returned an empty text", "response.output_text.delta events"],
     ["它返回了空文本"]),
    ("joined with spaces", joined_with_spaces, ["joined with something in between"], ["片段之间被加了东西"]),
    ("returned at response.output_text.done, the stream left open", returns_at_output_text_done,
     ["your text is whole, but your code stopped reading at response.output_text.done",
      "response.completed never reached it", "Read the stream to its last event"], ["你的文本是完整的", "把流读到最后一个事件"]),
    # It used to pass: the check judged how the stream was left (closed by the with block), not what the code read.
    ("returned at response.output_text.done inside a with block", closed_at_output_text_done,
     ["your code stopped reading at response.output_text.done", "response.completed never reached it"],
     ["就停了", "从未到达它"]),
    ("the Stream object itself", the_stream_object, ["must return the answer's text (a str), got Stream"],
     ["必须返回回答的文本"]),
    ("only the last item of the context sent", the_task_only, ["raised BadRequestError", "No tool call found",
                                                               "send the whole context as input"], ["把传入的整个上下文原样作为 input 发送"]),
    ("the starter's body", starter_body, ["Not answered yet: stream_answer still returns ..."], ["还没有作答"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in ANSWER_WRONG], ids=[row[0] for row in ANSWER_WRONG])
def test_stream_answer_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_stream_answer, answer, en, zh)


def with_the_stream_helper(client, context):
    """Another shape: the SDK's responses.stream() helper (it sends stream: true) and its final response."""
    with client.responses.stream(model=model_name(), input=context) as stream:
        return stream.get_final_response().output_text


def returns_at_completed(client, context):
    """Another: joins the pieces and returns on response.completed, from inside the loop (the stream
    is read to its last event; it used to be told response.completed "never reached your code")."""
    text = ""
    for event in client.responses.create(model=model_name(), input=context, stream=True):
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "response.completed":
            return text
    return text


@pytest.mark.parametrize("answer", [with_the_stream_helper, returns_at_completed],
                         ids=["responses.stream()", "returns at response.completed"])
def test_stream_answer_other_right_answers_pass(corpus, answer):
    corpus.right(check_stream_answer, answer)
