"""Checks for notebook 04b (streaming: the call arrives in pieces).

Both checks use real streams from the offline model, typed by the openai SDK:

- `check_calls_from_stream(fn)`: the learner's `calls_from_stream(events)` gets the events of
  three streams (one call; two calls in one turn; the same two calls with their pieces
  interleaved, which the event types allow: every event names its item) and must return
  `{call_id: arguments as a dict}`. It names the mistakes: a delta parsed (`json.loads` on a
  piece), item ids (`fc_…`) where call ids belong, the arguments left as text, the pieces of two
  calls joined together.
- `check_stream_answer(fn)`: the learner's `stream_answer(client, context)` gets a context that
  ends with real `function_call_output` items (one call; two calls) and must stream the final
  answer and return its whole text. The wire must show `stream: true`; the text must be the
  answer the stream carried, every piece of it.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.nb04 import ONE_CALL, TWO_CALLS
from course_lib.exercises.offline import model_name, offline_course
from course_lib.lang import say
from course_lib.loop import execute_call
from course_lib.streaming import wire_events


def interleave(events: list) -> list:
    """The same stream with the pieces of its items alternating, renumbered: what a client must
    also handle, since nothing in the event types promises one item at a time."""
    added = [e for e in events if e.type == "response.output_item.added"]
    ends = ("response.output_item.added", "response.output_item.done")
    inner = [[e for e in events if getattr(e, "output_index", None) == a.output_index and e.type not in ends]
             for a in added]  # fmt: skip
    mixed = [e for group in itertools.zip_longest(*inner) for e in group if e is not None]
    done = [e for e in events if e.type == "response.output_item.done"]
    order = [*events[:2], *added, *mixed, *done, events[-1]]
    return [event.model_copy(update={"sequence_number": n}) for n, event in enumerate(order)]


def _streams() -> list[tuple[str, list, dict[str, dict], bool]]:
    """(label, events, expected calls, pieces interleaved?) for the three streams."""
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        cases = []
        for label, task in ((say("the one-call stream", "单个调用的流"), ONE_CALL),
                            (say("the two-call stream", "两个调用的流"), TWO_CALLS)):
            events = list(course.client.responses.create(model=model_name(), input=task, tools=tools, stream=True))
            calls = {item.call_id: json.loads(item.arguments) for item in events[-1].response.output}
            cases.append((label, events, calls, False))
        cases.append((say("the two-call stream with its pieces interleaved", "片段交错的两个调用的流"),
                      interleave(cases[1][1]), cases[1][2], True))
        return cases
    finally:
        course.close()


def _calls_problem(events: list, expected: dict[str, dict], got: Any) -> str | None:
    if not isinstance(got, dict):
        return say(f"calls_from_stream must return a dict {{call_id: arguments}}, got {type(got).__name__}",
                   f"calls_from_stream 必须返回一个 dict {{call_id: arguments}}，得到的是 {type(got).__name__}")
    item_ids = {e.item.call_id: e.item.id for e in events if e.type == "response.output_item.added"}
    if set(got) == set(item_ids.values()) and set(got) != set(expected):
        return say("the keys are item ids (fc_…), the ids the deltas carry; a function_call_output needs the call_id "
                   "(call_…), which comes whole in the call's response.output_item.added event",
                   "键是 item id（fc_…），也就是增量事件带的 id；function_call_output 需要的是 call_id（call_…），"
                   "它完整地出现在这个调用的 response.output_item.added 事件里")
    if set(got) != set(expected):
        return say(f"the keys should be the call_ids {sorted(expected)}, got {sorted(map(str, got))}",
                   f"键应当是 call_id {sorted(expected)}，得到的是 {sorted(map(str, got))}")
    for call_id, arguments in expected.items():
        value = got[call_id]
        if isinstance(value, str):
            return say(f"{call_id}: the value is the arguments *text* {value[:40]!r}…; parse it into an object "
                       "once the call's .done event has come",
                       f"{call_id}：值是参数*文本* {value[:40]!r}…；等这个调用的 .done 事件到来后，把它解析成对象")
        if value != arguments:
            return say(f"{call_id}: got {value!r}, but its arguments are {arguments!r}: put each delta with its own "
                       "item (item_id or output_index), not with whichever call came last",
                       f"{call_id}：得到的是 {value!r}，但它的参数是 {arguments!r}：把每个增量归到它自己的项"
                       "（item_id 或 output_index），而不是归到最后到来的那个调用")
    return None


def check_calls_from_stream(fn: Any) -> bool:
    """Check `calls_from_stream(events) -> {call_id: dict}` on three real streams."""
    if not_answered(fn):
        return failed(say("Not answered yet: define calls_from_stream(events)",
                          "还没有作答：定义 calls_from_stream(events)"))
    if not callable(fn):
        return failed(say(f"pass the function itself (calls_from_stream), not {type(fn).__name__}",
                          f"请传入函数本身（calls_from_stream），而不是 {type(fn).__name__}"))
    for label, events, expected, interleaved in _streams():
        try:
            got = fn(list(events))
        except json.JSONDecodeError as error:
            if interleaved:  # right while calls came one by one: the pieces went to the wrong call
                return failed(say(f"on {label}, json.loads failed ({error}): the pieces of two calls were joined "
                                  "together; put each delta with its own item (item_id or output_index), not the latest one",
                                  f"在{label}上，json.loads 失败（{error}）：两个调用的片段被拼在了一起；"
                                  "把每个增量归到它自己的项（item_id 或 output_index），而不是最近的那一项"))
            return failed(say(f"on {label}, json.loads failed ({error}): a delta is a piece of the arguments text, "
                              "not JSON; join the pieces and parse the whole text at the call's .done event",
                              f"在{label}上，json.loads 失败（{error}）：增量是参数文本的一个片段，不是 JSON；"
                              "把片段拼起来，等这个调用的 .done 事件到来时再解析完整的文本"))
        except Exception as error:  # the learner's code: report whatever it raised
            return failed(say(f"on {label}, calls_from_stream raised {type(error).__name__}: {error}",
                              f"在{label}上，calls_from_stream 抛出了 {type(error).__name__}：{error}"))
        if not_answered(got):
            return failed(say("Not answered yet: calls_from_stream still returns ...",
                              "还没有作答：calls_from_stream 仍然返回 ..."))
        if (problem := _calls_problem(events, expected, got)) is not None:
            return failed(say(f"on {label}: {problem}", f"在{label}上：{problem}"))
    return passed(say("every call was put together from its own pieces, under its call_id, parsed once complete "
                      "(also with the pieces of two calls interleaved)",
                      "每个调用都由它自己的片段拼成，放在它的 call_id 下，完整之后才解析（两个调用的片段交错时也是如此）"))


def calls_from_stream(events: list) -> dict[str, dict]:
    """Reference solution: assemble by output_index, parse at .done."""
    call_ids, texts, calls = {}, {}, {}
    for event in events:
        if event.type == "response.output_item.added" and event.item.type == "function_call":
            call_ids[event.output_index], texts[event.output_index] = event.item.call_id, ""
        elif event.type == "response.function_call_arguments.delta":
            texts[event.output_index] += event.delta
        elif event.type == "response.function_call_arguments.done":
            calls[call_ids[event.output_index]] = json.loads(texts[event.output_index])
    return calls


# ---- exercise 2: stream_answer ----------------------------------------------------------------


def _answer_problem(answer: Any, events: list[dict]) -> str | None:
    pieces = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    text = "".join(pieces)
    if not isinstance(answer, str):
        return say(f"stream_answer must return the answer's text (a str), got {type(answer).__name__}",
                   f"stream_answer 必须返回回答的文本（一个 str），得到的是 {type(answer).__name__}")
    if answer == text:
        return None
    if answer in (pieces[-1], pieces[0]):
        return say(f"it returned one piece ({answer!r}) of {len(pieces)}: join every output_text.delta",
                   f"它只返回了 {len(pieces)} 个片段中的一个（{answer!r}）：把每个 output_text.delta 拼起来")
    if answer == "":
        return say("it returned an empty text: the answer comes in response.output_text.delta events",
                   "它返回了空文本：回答在 response.output_text.delta 事件里到来")
    return say(f"it returned {answer[:50]!r}…, but the stream's answer is {text[:50]!r}…",
               f"它返回的是 {answer[:50]!r}…，但流里的回答是 {text[:50]!r}…")


def check_stream_answer(fn: Any) -> bool:
    """Check `stream_answer(client, context) -> str` after one call and after two."""
    if not_answered(fn):
        return failed(say("Not answered yet: define stream_answer(client, context)",
                          "还没有作答：定义 stream_answer(client, context)"))
    if not callable(fn):
        return failed(say(f"pass the function itself (stream_answer), not {type(fn).__name__}",
                          f"请传入函数本身（stream_answer），而不是 {type(fn).__name__}"))
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        for label, task in ((say("after one call", "在一个调用之后"), ONE_CALL),
                            (say("after two calls", "在两个调用之后"), TWO_CALLS)):
            first = course.client.responses.create(model=model_name(), input=task, tools=tools)
            context = [{"role": "user", "content": task}, *(item.to_dict() for item in first.output)]
            context += [execute_call(call, course.host)[0] for call in first.output if call.type == "function_call"]
            before = len(course.wire.exchanges)
            try:
                answer = fn(course.client, list(context))
            except Exception as error:  # the learner's code: report whatever it raised
                return failed(say(f"{label}, stream_answer raised {type(error).__name__}: {error}",
                                  f"{label}，stream_answer 抛出了 {type(error).__name__}：{error}"))
            if not_answered(answer):
                return failed(say("Not answered yet: stream_answer still returns ...",
                                  "还没有作答：stream_answer 仍然返回 ..."))
            sent = course.wire.exchanges[before:]
            if not sent:
                return failed(say(f"{label}: stream_answer sent no request", f"{label}：stream_answer 没有发送任何请求"))
            if sent[-1].request.get("stream") is not True:
                return failed(say(f"{label}: the request was not streamed (no \"stream\": true on the wire): "
                                  "pass stream=True and read the events",
                                  f"{label}：请求没有以流式发送（线上没有 \"stream\": true）：传入 stream=True 并读取事件"))
            if sent[-1].status != 200:
                return failed(say(f"{label}: the request was refused ({sent[-1].status}): {sent[-1].response}",
                                  f"{label}：请求被拒绝了（{sent[-1].status}）：{sent[-1].response}"))
            if (problem := _answer_problem(answer, wire_events(sent[-1].response))) is not None:
                return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
    finally:
        course.close()
    return passed(say("both answers were streamed and put back together, every piece in order",
                      "两个回答都以流式收到并拼回原样，每个片段都在，顺序不变"))


def stream_answer(client: Any, context: list) -> str:
    """Reference solution: stream the request, show and keep every text piece."""
    text = ""
    for event in client.responses.create(model=model_name(), input=context, stream=True):
        if event.type == "response.output_text.delta":
            text += event.delta
    return text


SOLUTIONS: Solutions = {
    "check_calls_from_stream": lambda: calls_from_stream,
    "check_stream_answer": lambda: stream_answer,
}
