"""Checks for notebook 04b (streaming: the call arrives in pieces).

Both checks use real streams from the offline model, typed by the openai SDK:

- `check_calls_from_stream(fn)`: the learner's `calls_from_stream(events)` gets the events of
  nine streams (one call; two calls in one turn; the same two calls with their pieces mixed in
  seven ways, `interleavings`, which the event types allow: every event names its item) and must return
  `{call_id: arguments as a dict}`; then on four real streams cut before `response.completed` (a
  dropped connection: `cuts`), where it must return the calls whose arguments arrived whole (their
  `.done` came) and leave out one still arriving: reading the final event cannot pass. It names the
  mistakes: a delta parsed (`json.loads` on a piece), item ids (`fc_…`) where call ids belong, the
  arguments left as text, the pieces of two calls joined together, the final event read.
- `check_stream_answer(fn)`: the learner's `stream_answer(client, context)` gets a context that
  ends with real `function_call_output` items (one call; two calls) and must stream the final
  answer and return its whole text. The wire must show `stream: true`; the text must be the
  answer the stream carried, every piece of it, and the code must have read the stream to its
  last event, `response.completed` (the body is handed over one event at a time and counted, so
  the check judges what the code read, inside a `with` block or not).

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import openai

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import (as_dict, difference, passed_a_call, raised, returned_early, same,
                                           shown, type_name, unassigned)
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.nb04 import ONE_CALL, TWO_CALLS
from course_lib.exercises.offline import model_name, offline_course
from course_lib.lang import say
from course_lib.loop import execute_call
from course_lib.offline_model import offline_transport
from course_lib.streaming import wire_events


def interleave(events: list, order: list[int] | None = None) -> list:
    """The same stream with the pieces of its items mixed, renumbered: what a client must also
    handle, since nothing in the event types promises one item at a time.

    `order` says which item's next piece comes each time (indexes into the items, in the order
    they were added); by default they alternate. Each item's own pieces keep their order.
    """
    added = [e for e in events if e.type == "response.output_item.added"]
    ends = ("response.output_item.added", "response.output_item.done")
    inner = [[e for e in events if getattr(e, "output_index", None) == a.output_index and e.type not in ends]
             for a in added]  # fmt: skip
    if order is None:
        mixed = [e for group in itertools.zip_longest(*inner) for e in group if e is not None]
    else:
        queues = [list(group) for group in inner]
        mixed = [queues[i].pop(0) for i in order if queues[i]]
        mixed += [e for queue in queues for e in queue]
    done = [e for e in events if e.type == "response.output_item.done"]
    order_of = [*events[:2], *added, *mixed, *done, events[-1]]
    return [event.model_copy(update={"sequence_number": n}) for n, event in enumerate(order_of)]


def interleavings(events: list) -> list[tuple[str, str, list]]:
    """(English, Chinese, events): the two-call stream with its pieces mixed in several ways the
    event types allow (alternating from either call, the second call's pieces all first, and four
    merges from fixed seeds), so a client is tried on many orders, not one."""
    sizes = [sum(1 for e in events if getattr(e, "output_index", None) == a.output_index
                 and e.type not in ("response.output_item.added", "response.output_item.done"))
             for a in events if a.type == "response.output_item.added"]  # fmt: skip
    last = len(sizes) - 1
    orders: list[tuple[str, str, list[int] | None]] = [
        ("the two-call stream with its pieces interleaved", "片段交错的两个调用的流", None),
        ("the two-call stream interleaved, the second call first", "片段交错、第二个调用在先的两个调用的流",
         [i for n in range(max(sizes)) for i in range(last, -1, -1)]),
        ("the two-call stream with the second call's pieces all first", "第二个调用的片段全部在前的两个调用的流",
         [i for i in range(last, -1, -1) for _ in range(sizes[i])]),
    ]
    for seed in range(4):
        merged = [i for i, size in enumerate(sizes) for _ in range(size)]
        random.Random(seed).shuffle(merged)
        orders.append((f"the two-call stream with its pieces shuffled (seed {seed})",
                       f"片段被打乱（种子 {seed}）的两个调用的流", merged))
    return [(en, zh, interleave(events, order)) for en, zh, order in orders]


def cut(events: list, after: Any) -> list:
    """The stream as a dropped connection leaves it: its events up to and including the first for
    which `after(event)` is true (never `response.completed`)."""
    end = next(i for i, event in enumerate(events) if after(event))
    return events[: end + 1]


def whole_calls(events: list) -> dict[str, dict]:
    """{call_id: arguments} of the calls whose arguments arrived whole in `events` (their
    `response.function_call_arguments.done` came): what a cut stream still holds."""
    call_ids = {e.output_index: e.item.call_id for e in events
                if e.type == "response.output_item.added" and e.item.type == "function_call"}  # fmt: skip
    return {call_ids[e.output_index]: json.loads(e.arguments) for e in events
            if e.type == "response.function_call_arguments.done"}  # fmt: skip


def cuts(one: list, two: list) -> list[tuple[str, str, list]]:
    """(English, Chinese, events): real streams cut before `response.completed`, as a dropped
    connection leaves them. No final event to read: only assembling each call from its own events
    gives its arguments."""
    def nth(kind: str, n: int) -> Any:
        seen = [0]

        def hit(event: Any) -> bool:
            seen[0] += event.type == kind
            return event.type == kind and seen[0] == n

        return hit

    mixed = interleavings(two)[0][2]
    second = [e.output_index for e in two if e.type == "response.output_item.added" and e.item.type == "function_call"][1]
    return [
        ("the one-call stream, cut while its arguments were still arriving",
         "在参数还没传完时被截断的单个调用的流", cut(one, nth("response.function_call_arguments.delta", 2))),
        ("the two-call stream, cut while the second call's arguments were arriving",
         "在第二个调用的参数传输途中被截断的两个调用的流",
         cut(two, lambda e: e.type == "response.function_call_arguments.delta" and e.output_index == second)),
        ("the two-call stream, cut just before response.completed", "在 response.completed 之前被截断的两个调用的流",
         two[:-1]),
        ("the interleaved two-call stream, cut just before response.completed",
         "片段交错、在 response.completed 之前被截断的两个调用的流", mixed[:-1]),
    ]


def _streams() -> list[tuple[str, list, dict[str, dict], bool]]:
    """(label, events, expected calls, pieces interleaved?) for the one-call stream, the two-call
    stream, the two-call stream mixed in every way of `interleavings`, and the streams of `cuts`."""
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        cases = []
        for label, task in ((say("the one-call stream", "单个调用的流"), ONE_CALL),
                            (say("the two-call stream", "两个调用的流"), TWO_CALLS)):
            events = list(course.client.responses.create(model=model_name(), input=task, tools=tools, stream=True))
            calls = {item.call_id: json.loads(item.arguments) for item in events[-1].response.output
                     if item.type == "function_call"}  # a reasoning model puts a reasoning item first
            cases.append((label, events, calls, False))
        cases += [(say(en, zh), mixed, cases[1][2], True) for en, zh, mixed in interleavings(cases[1][1])]
        cases += [(say(en, zh), events, whole_calls(events), True) for en, zh, events in cuts(cases[0][1], cases[1][1])]
        return cases
    finally:
        course.close()


def _is_cut(events: list) -> bool:
    return events[-1].type != "response.completed"


def _calls_problem(events: list, expected: dict[str, dict], got: Any) -> str | None:
    calls = as_dict(got)
    item_ids = {e.item.call_id: e.item.id for e in events
                if e.type == "response.output_item.added" and e.item.type == "function_call"}  # fmt: skip
    if calls is not None and _is_cut(events) and not set(calls) & set(item_ids.values()):
        arriving = [e.item.call_id for e in events if e.type == "response.output_item.added"
                    and e.item.type == "function_call" and e.item.call_id not in expected]  # fmt: skip
        if extra := [call_id for call_id in calls if call_id in arriving]:
            return say("{call_id}'s arguments never finished (no .done came before the stream was cut): leave that "
                       "call out, its text is not the arguments",
                       "{call_id} 的参数一直没有传完（流被截断之前没有等到 .done）：把这个调用排除在外，它的文本还不是参数",
                       call_id=extra[0])
        if missing := [call_id for call_id in expected if call_id not in calls]:
            return say("{call_id}'s arguments were whole at its response.function_call_arguments.done, but your result "
                       "leaves it out: this stream was cut before {what}. The .done event is where a call's arguments "
                       "are whole (section 4): do not wait for anything after it",
                       "{call_id} 的参数在它的 response.function_call_arguments.done 时就完整了，可你的结果里没有它："
                       "这个流在 {what} 之前就被截断了。.done 事件就是调用的参数完整的地方（第 4 节）：不要等它之后的任何事件",
                       call_id=missing[0], what=_missing_end(events))
    if calls is None:
        return say("calls_from_stream must return a dict {{call_id: arguments}}, got {kind}",
                   "calls_from_stream 必须返回一个 dict {{call_id: arguments}}，得到的是 {kind}",
                   kind=type_name(got)) + returned_early(got)
    if set(calls) == set(item_ids.values()) and set(calls) != set(expected):
        return say("the keys are item ids (fc_…), the ids the deltas carry; a function_call_output needs the call_id "
                   "(call_…), which comes whole in the call's response.output_item.added event",
                   "键是 item id（fc_…），也就是增量事件带的 id；function_call_output 需要的是 call_id（call_…），"
                   "它完整地出现在这个调用的 response.output_item.added 事件里")
    if set(calls) < set(expected):
        return say("only {n} of the {total} calls ({got}): keep reading to the end of the stream "
                   "(response.completed), not only to the first call's .done",
                   "{total} 个调用里只有 {n} 个（{got}）：要一直读到流的末尾（response.completed），而不是只读到"
                   "第一个调用的 .done", n=len(calls), total=len(expected), got=", ".join(map(str, calls)))
    if set(calls) != set(expected):
        return say("the keys should be the call_ids {want}, got {got}", "键应当是 call_id {want}，得到的是 {got}",
                   want=sorted(expected), got=shown(sorted(map(shown, calls)), 120))
    for call_id, arguments in expected.items():
        value = calls[call_id]
        if isinstance(value, str):
            return say("{call_id}: the value is the arguments *text* {text}…; parse it into an object once the "
                       "call's .done event has come",
                       "{call_id}：值是参数*文本* {text}…；等这个调用的 .done 事件到来后，把它解析成对象",
                       call_id=call_id, text=shown(value, 40))
        if not same(value, arguments):
            return say("{call_id}: got {value}, but its arguments are {arguments!r}: put each delta with its own "
                       "item (item_id or output_index), not with whichever call came last",
                       "{call_id}：得到的是 {value}，但它的参数是 {arguments!r}：把每个增量归到它自己的项"
                       "（item_id 或 output_index），而不是归到最后到来的那个调用",
                       call_id=call_id, value=shown(value), arguments=arguments)
    return None


def _missing_end(events: list) -> str:
    """The events a cut stream never sent, as a message names them."""
    types = {e.type for e in events}
    if "response.output_item.done" not in types or sum(e.type == "response.output_item.done" for e in events) < sum(
            e.type == "response.output_item.added" for e in events):  # fmt: skip
        return "response.output_item.done"
    return "response.completed"


def check_calls_from_stream(fn: Any) -> bool:
    """Check `calls_from_stream(events) -> {call_id: dict}` on three real streams."""
    if not_answered(fn):
        return failed(unassigned("calls_from_stream", "calls_from_stream(events)", through=""))
    if not callable(fn):
        return failed(passed_a_call("calls_from_stream", fn))
    streams = _streams()
    for label, events, expected, interleaved in streams:
        try:
            got = fn([event.model_copy(deep=True) for event in events])  # its own copies: changing them changes nothing here
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
            hint = say(": this stream ends with {last}, cut before response.completed as a dropped connection leaves it, "
                       "so there is no final response to read; put each call together from its own events",
                       "：这个流以 {last} 结束，在 response.completed 之前就被截断了（断开的连接就是这样），所以没有最终的"
                       "响应可读；要由每个调用自己的事件把它拼起来", last=events[-1].type) if _is_cut(events) else ""
            return failed(say("on {label}, calls_from_stream raised {error}{hint}",
                              "在{label}上，calls_from_stream 抛出了 {error}{hint}", label=label, error=raised(error),
                              hint=hint))
        if not_answered(got):
            return failed(say("Not answered yet: calls_from_stream still returns ...",
                              "还没有作答：calls_from_stream 仍然返回 ..."))
        if (problem := _calls_problem(events, expected, got)) is not None:
            return failed(say(f"on {label}: {problem}", f"在{label}上：{problem}"))
    return passed(say("every call was put together from its own pieces, under its call_id, parsed once complete "
                      "(also with the pieces of two calls mixed in {n} different orders, and on {m} streams cut before "
                      "response.completed)",
                      "每个调用都由它自己的片段拼成，放在它的 call_id 下，完整之后才解析（两个调用的片段以 {n} 种不同顺序"
                      "交错时也是如此，在 {m} 个于 response.completed 之前被截断的流上也是如此）",
                      n=sum(1 for _, events, _, mixed in streams if mixed and not _is_cut(events)),
                      m=sum(1 for _, events, _, _ in streams if _is_cut(events))))


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
    if isinstance(answer, (list, tuple)) and all(isinstance(piece, str) for piece in answer):
        return say("stream_answer returned the {n} pieces as a {kind}: join them into one str, ''.join(pieces)",
                   "stream_answer 把 {n} 个片段作为 {kind} 返回了：把它们拼成一个 str，''.join(pieces)",
                   n=len(answer), kind=type_name(answer))
    if not isinstance(answer, str):
        return say("stream_answer must return the answer's text (a str), got {kind}",
                   "stream_answer 必须返回回答的文本（一个 str），得到的是 {kind}", kind=type_name(answer)) + returned_early(answer)
    answer = str.__str__(answer)
    if answer == text:
        return None
    if answer in (pieces[-1], pieces[0]):
        return say("it returned one piece ({piece}) of {n}: join every output_text.delta",
                   "它只返回了 {n} 个片段中的一个（{piece}）：把每个 output_text.delta 拼起来", piece=shown(answer), n=len(pieces))
    if answer == "":
        return say("it returned an empty text: the answer comes in response.output_text.delta events",
                   "它返回了空文本：回答在 response.output_text.delta 事件里到来")
    if text.startswith(answer):
        return say("it returned the first {n} characters of {total}: keep joining until the text is done",
                   "它只返回了 {total} 个字符中的前 {n} 个：一直拼接，直到文本结束", n=len(answer), total=len(text))
    if answer.replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", ""):
        return say("the pieces are joined with something in between: join them with nothing, ''.join(...)",
                   "片段之间被加了东西：拼接时中间什么也不加，''.join(...)")
    mine, theirs = difference(answer, text, 50)
    return say("it returned {mine}, but the stream's answer is {theirs}",
               "它返回的是 {mine}，但流里的回答是 {theirs}", mine=mine, theirs=theirs)


class _CountedEvents(httpx.SyncByteStream):
    """A response body handed over one server-sent event at a time, counting how many were taken.
    The SDK reads the next event only when the code iterating the stream asks for it, so the count
    says which events reached the learner's code (the last one read is `events[taken - 1]`)."""

    def __init__(self, body: bytes) -> None:
        self.chunks = [chunk + b"\n\n" for chunk in body.split(b"\n\n") if chunk.strip()]
        self.taken = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.taken += 1
            yield chunk

    def close(self) -> None:
        pass


class _WholeBodies(httpx.BaseTransport):
    """Keeps each response body whole as it passes, under the wire capture, and hands a streamed one
    over event by event (`_CountedEvents`): the check sees the whole stream, and how much of it the
    learner's code read, whether it read to the end, closed the stream early or left it open."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner, self.bodies, self.streams = inner, [], []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        body = response.read()
        self.bodies.append(body.decode("utf-8", "replace"))
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            return httpx.Response(response.status_code, headers=response.headers, content=body, request=request)
        counted = _CountedEvents(body)
        self.streams.append(counted)
        return httpx.Response(response.status_code, headers=response.headers, stream=counted, request=request)

    def close(self) -> None:
        self.inner.close()


def check_stream_answer(fn: Any) -> bool:
    """Check `stream_answer(client, context) -> str` after one call and after two."""
    if not_answered(fn):
        return failed(unassigned("stream_answer", "stream_answer(client, context)", through=""))
    if not callable(fn):
        return failed(passed_a_call("stream_answer", fn))
    bodies = _WholeBodies(offline_transport())
    course = offline_course(transport=bodies)
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
                hint = say(" The model API refused the request: send the whole context as input, as it was given.",
                           " 模型 API 拒绝了这个请求：把传入的整个上下文原样作为 input 发送。") \
                    if isinstance(error, openai.BadRequestError) else ""
                return failed(say("{label}, stream_answer raised {error}", "{label}，stream_answer 抛出了 {error}",
                                  label=label, error=raised(error)) + hint)
            if not_answered(answer):
                return failed(say("Not answered yet: stream_answer still returns ...",
                                  "还没有作答：stream_answer 仍然返回 ..."))
            sent = course.wire.exchanges[before:]
            if not sent:
                return failed(say(f"{label}: stream_answer sent no request", f"{label}：stream_answer 没有发送任何请求"))
            request = sent[-1].request if isinstance(sent[-1].request, dict) else {}
            if request.get("stream") is not True:
                return failed(say(f"{label}: the request was not streamed (no \"stream\": true on the wire): "
                                  "pass stream=True and read the events",
                                  f"{label}：请求没有以流式发送（线上没有 \"stream\": true）：传入 stream=True 并读取事件"))
            whole = bodies.bodies[-1]
            if sent[-1].status != 200:
                return failed(say(f"{label}: the request was refused ({sent[-1].status}): {whole}",
                                  f"{label}：请求被拒绝了（{sent[-1].status}）：{whole}"))
            events = wire_events(whole)
            if (problem := _answer_problem(answer, events)) is not None:
                return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
            counted = bodies.streams[-1] if bodies.streams else None
            if counted is not None and counted.taken < len(events):  # what the code read, not how it left the stream
                return failed(say("{label}: your text is whole, but your code stopped reading at {at} (event {n} of "
                                  "{total}): {last} never reached it, and only that event says the answer is complete "
                                  "(a message may have more parts, or end incomplete). Read the stream to its last "
                                  "event before you return.",
                                  "{label}：你的文本是完整的，但你的代码读到 {at}（第 {n} 个事件，共 {total} 个）就停了："
                                  "{last} 从未到达它，而只有这个事件说明回答已经完整（一条消息可能还有更多部分，也可能以"
                                  "未完成结束）。返回之前，把流读到最后一个事件。", label=label,
                                  at=events[counted.taken - 1]["type"] if counted.taken else say("nothing", "还没读"),
                                  n=counted.taken, total=len(events), last=events[-1]["type"]))
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


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
