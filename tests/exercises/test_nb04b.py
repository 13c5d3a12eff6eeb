"""Wrong answers to notebook 04b's exercises get a message that says what is wrong."""

import json

from course_lib.backend import model_name
from course_lib.exercises.nb04b import SOLUTIONS, check_calls_from_stream, check_stream_answer


def _parse_each_delta(events):
    calls = {}
    for event in events:
        if event.type == "response.function_call_arguments.delta":
            calls[event.item_id] = json.loads(event.delta)
    return calls


def _keyed_by_item_id(events):
    return {e.item_id: json.loads(e.arguments) for e in events if e.type == "response.function_call_arguments.done"}


def _text_not_parsed(events):
    ids = {e.item.id: e.item.call_id for e in events if e.type == "response.output_item.added"}
    return {ids[e.item_id]: e.arguments for e in events if e.type == "response.function_call_arguments.done"}


def _pieces_of_the_latest_call(events):
    """Joins every delta to the call announced last: right while calls stream one after the other."""
    calls, current, text = {}, None, ""
    for event in events:
        if event.type == "response.output_item.added":
            current, text = event.item.call_id, ""
        elif event.type == "response.function_call_arguments.delta":
            text += event.delta
        elif event.type == "response.function_call_arguments.done":
            calls[current] = json.loads(text)
    return calls


def test_parsing_a_delta_is_named(capsys):
    assert check_calls_from_stream(_parse_each_delta) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ on the one-call stream, json.loads failed")
    assert "a delta is a piece of the arguments text, not JSON" in out


def test_item_ids_instead_of_call_ids_are_named(capsys):
    assert check_calls_from_stream(_keyed_by_item_id) is False
    assert "the keys are item ids (fc_…)" in capsys.readouterr().out


def test_arguments_left_as_text_are_named(capsys):
    assert check_calls_from_stream(_text_not_parsed) is False
    assert "the value is the arguments *text*" in capsys.readouterr().out


def test_joining_pieces_to_the_latest_call_fails_only_when_they_interleave(capsys):
    assert check_calls_from_stream(_pieces_of_the_latest_call) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ on the two-call stream with its pieces interleaved")
    assert "the pieces of two calls were joined together" in out


def _not_streamed(client, context):
    return client.responses.create(model=model_name(), input=context).output_text


def _last_piece(client, context):
    delta = ""
    for event in client.responses.create(model=model_name(), input=context, stream=True):
        if event.type == "response.output_text.delta":
            delta = event.delta
    return delta


def _every_delta_as_str(client, context):
    stream = client.responses.create(model=model_name(), input=context, stream=True)
    return "".join(str(getattr(event, "delta", "")) for event in stream if event.type != "response.output_text.done")[:-1]


def _streamed_but_empty(client, context):
    list(client.responses.create(model=model_name(), input=context, stream=True))
    return ""


def test_an_unstreamed_request_is_named(capsys):
    assert check_stream_answer(_not_streamed) is False
    assert "the request was not streamed" in capsys.readouterr().out


def test_keeping_only_the_last_piece_is_named(capsys):
    assert check_stream_answer(_last_piece) is False
    assert "it returned one piece" in capsys.readouterr().out


def test_a_text_that_differs_from_the_stream_is_named(capsys):
    assert check_stream_answer(_every_delta_as_str) is False
    assert "it returned the first" in capsys.readouterr().out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_calls_from_stream(...) is False
    assert check_stream_answer(...) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: define calls_from_stream(events), then pass the function itself (calls_from_stream, "
        "without parentheses) to the check and run the cell again.\n"
        "✗ Not answered yet: define stream_answer(client, context), then pass the function itself (stream_answer, "
        "without parentheses) to the check and run the cell again.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_calls_from_stream(...) is False
    assert check_stream_answer(...) is False
    assert check_calls_from_stream("calls_from_stream") is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：定义 calls_from_stream(events)，然后把函数本身（calls_from_stream，不带括号）传给检查，再运行这个单元格。\n"
        "✗ 还没有作答：定义 stream_answer(client, context)，然后把函数本身（stream_answer，不带括号）传给检查，再运行这个单元格。\n"
        "✗ 请传入函数本身（calls_from_stream，不带括号）；你传入的是 str 'calls_from_stream'。\n"
    )


def test_calls_from_stream_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_calls_from_stream(_parse_each_delta) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 在单个调用的流上，json.loads 失败（") and "增量是参数文本的一个片段，不是 JSON" in out
    assert check_calls_from_stream(_keyed_by_item_id) is False
    assert capsys.readouterr().out.startswith("✗ 在单个调用的流上：键是 item id（fc_…）")
    assert check_calls_from_stream(_text_not_parsed) is False
    out = capsys.readouterr().out
    assert "：值是参数*文本* '{\"path\"" in out and "把它解析成对象" in out
    assert check_calls_from_stream(_pieces_of_the_latest_call) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 在片段交错的两个调用的流上，json.loads 失败（") and "两个调用的片段被拼在了一起" in out
    assert check_calls_from_stream(lambda events: 1 / 0) is False
    assert capsys.readouterr().out.startswith("✗ 在单个调用的流上，calls_from_stream 抛出了 ZeroDivisionError: ")
    assert check_calls_from_stream(lambda events: []) is False
    assert "calls_from_stream 必须返回一个 dict {call_id: arguments}，得到的是 list" in capsys.readouterr().out
    assert check_calls_from_stream(SOLUTIONS["check_calls_from_stream"]()) is True
    assert capsys.readouterr().out.startswith("✓ 每个调用都由它自己的片段拼成")


def test_stream_answer_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_stream_answer(_not_streamed) is False
    assert capsys.readouterr().out.startswith('✗ 在一个调用之后：请求没有以流式发送（线上没有 "stream": true）')
    assert check_stream_answer(_last_piece) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 在一个调用之后：它只返回了 ") and "把每个 output_text.delta 拼起来" in out
    assert check_stream_answer(_every_delta_as_str) is False
    assert "个字符中的前" in capsys.readouterr().out
    assert check_stream_answer(lambda client, context: "") is False
    assert capsys.readouterr().out == "✗ 在一个调用之后：stream_answer 没有发送任何请求\n"
    assert check_stream_answer(_streamed_but_empty) is False
    assert capsys.readouterr().out.startswith("✗ 在一个调用之后：它返回了空文本")
    assert check_stream_answer(SOLUTIONS["check_stream_answer"]()) is True
    assert capsys.readouterr().out == "✓ 两个回答都以流式收到并拼回原样，每个片段都在，顺序不变\n"
