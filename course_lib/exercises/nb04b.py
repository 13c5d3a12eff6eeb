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
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from course_lib.backend import model_name
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.nb04 import ONE_CALL, TWO_CALLS, offline_course
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


def _streams() -> list[tuple[str, list, dict[str, dict]]]:
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        cases = []
        for label, task in (("the one-call stream", ONE_CALL), ("the two-call stream", TWO_CALLS)):
            events = list(course.client.responses.create(model=model_name(), input=task, tools=tools, stream=True))
            calls = {item.call_id: json.loads(item.arguments) for item in events[-1].response.output}
            cases.append((label, events, calls))
        cases.append(("the two-call stream with its pieces interleaved", interleave(cases[1][1]), cases[1][2]))
        return cases
    finally:
        course.close()


def _calls_problem(events: list, expected: dict[str, dict], got: Any) -> str | None:
    if not isinstance(got, dict):
        return f"calls_from_stream must return a dict {{call_id: arguments}}, got {type(got).__name__}"
    item_ids = {e.item.call_id: e.item.id for e in events if e.type == "response.output_item.added"}
    if set(got) == set(item_ids.values()) and set(got) != set(expected):
        return ("the keys are item ids (fc_…), the ids the deltas carry; a function_call_output needs the call_id "
                "(call_…), which comes whole in the call's response.output_item.added event")
    if set(got) != set(expected):
        return f"the keys should be the call_ids {sorted(expected)}, got {sorted(map(str, got))}"
    for call_id, arguments in expected.items():
        value = got[call_id]
        if isinstance(value, str):
            return (f"{call_id}: the value is the arguments *text* {value[:40]!r}…; parse it into an object "
                    "once the call's .done event has come")
        if value != arguments:
            return (f"{call_id}: got {value!r}, but its arguments are {arguments!r}: put each delta with its own "
                    "item (item_id or output_index), not with whichever call came last")
    return None


def check_calls_from_stream(fn: Any) -> bool:
    """Check `calls_from_stream(events) -> {call_id: dict}` on three real streams."""
    if not_answered(fn):
        return failed("Not answered yet: define calls_from_stream(events)")
    if not callable(fn):
        return failed(f"pass the function itself (calls_from_stream), not {type(fn).__name__}")
    for label, events, expected in _streams():
        try:
            got = fn(list(events))
        except json.JSONDecodeError as error:
            if "interleaved" in label:  # right while calls came one by one: the pieces went to the wrong call
                return failed(f"on {label}, json.loads failed ({error}): the pieces of two calls were joined together; "
                              "put each delta with its own item (item_id or output_index), not the latest one")
            return failed(f"on {label}, json.loads failed ({error}): a delta is a piece of the arguments text, "
                          "not JSON; join the pieces and parse the whole text at the call's .done event")
        except Exception as error:  # the learner's code: report whatever it raised
            return failed(f"on {label}, calls_from_stream raised {type(error).__name__}: {error}")
        if not_answered(got):
            return failed("Not answered yet: calls_from_stream still returns ...")
        if (problem := _calls_problem(events, expected, got)) is not None:
            return failed(f"on {label}: {problem}")
    return passed("every call was put together from its own pieces, under its call_id, parsed once complete "
                  "(also with the pieces of two calls interleaved)")


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
        return f"stream_answer must return the answer's text (a str), got {type(answer).__name__}"
    if answer == text:
        return None
    if answer in (pieces[-1], pieces[0]):
        return f"it returned one piece ({answer!r}) of {len(pieces)}: join every output_text.delta"
    if answer == "":
        return "it returned an empty text: the answer comes in response.output_text.delta events"
    return f"it returned {answer[:50]!r}…, but the stream's answer is {text[:50]!r}…"


def check_stream_answer(fn: Any) -> bool:
    """Check `stream_answer(client, context) -> str` after one call and after two."""
    if not_answered(fn):
        return failed("Not answered yet: define stream_answer(client, context)")
    if not callable(fn):
        return failed(f"pass the function itself (stream_answer), not {type(fn).__name__}")
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        for label, task in (("after one call", ONE_CALL), ("after two calls", TWO_CALLS)):
            first = course.client.responses.create(model=model_name(), input=task, tools=tools)
            context = [{"role": "user", "content": task}, *(item.to_dict() for item in first.output)]
            context += [execute_call(call, course.host)[0] for call in first.output if call.type == "function_call"]
            before = len(course.wire.exchanges)
            try:
                answer = fn(course.client, list(context))
            except Exception as error:  # the learner's code: report whatever it raised
                return failed(f"{label}, stream_answer raised {type(error).__name__}: {error}")
            if not_answered(answer):
                return failed("Not answered yet: stream_answer still returns ...")
            sent = course.wire.exchanges[before:]
            if not sent:
                return failed(f"{label}: stream_answer sent no request")
            if sent[-1].request.get("stream") is not True:
                return failed(f"{label}: the request was not streamed (no \"stream\": true on the wire): "
                              "pass stream=True and read the events")
            if sent[-1].status != 200:
                return failed(f"{label}: the request was refused ({sent[-1].status}): {sent[-1].response}")
            if (problem := _answer_problem(answer, wire_events(sent[-1].response))) is not None:
                return failed(f"{label}: {problem}")
    finally:
        course.close()
    return passed("both answers were streamed and put back together, every piece in order")


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
