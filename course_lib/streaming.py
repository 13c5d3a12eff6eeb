"""Streaming: the call arrives in pieces, and the app puts it back together.

With `stream: true` a response comes as events, not as one JSON body. Each output item is
announced (`response.output_item.added`, at an `output_index`, with its `id`), then grows by
deltas that name it (`item_id`, `output_index`): a message's text (`response.output_text.delta`)
or a call's *arguments text* (`response.function_call_arguments.delta`), then is finished
(`….done`, `response.output_item.done`); `response.completed` carries the whole Response.

    from course_lib.streaming import StreamedRequests, show_stream
    streamed = StreamedRequests(course.client, on_event=show_stream)
    result = course.run("Show the first 5 lines of /workspace/notes.txt", create=streamed)
    streamed.turns[0].items[0]          # a PartialItem: what arrived for output item 0

`StreamAssembler` is the accumulation the openai SDK's own `ResponseStream` does, small enough to
read: pieces are put together per item, by `output_index` (checked against `item_id`), and a
call's arguments are parsed only once its `response.function_call_arguments.done` event has come
(the openai SDK's `ResponseFunctionCallArgumentsDoneEvent`, "emitted when function-call arguments
are finalized", carries the whole text) — a delta is a piece of text, not JSON. The item itself is
finished at `response.output_item.done`, which comes after it. The loop around it is the course's own
(`loop.run_loop`, through its `create` hook): the same calls through the same `McpHost`, the same
trace.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openai import OpenAI
from openai.types.responses import Response, ResponseStreamEvent

from course_lib.arguments import parse_arguments_text
from course_lib.host import McpHost
from course_lib.lang import say
from course_lib.loop import LoopResult, run_loop


class StreamBroken(Exception):
    """The events do not add up: an error event, a piece for an item never announced, pieces that
    do not join to the finished text, or a stream that ended without its final response."""


@dataclass
class PartialItem:
    """One output item while it streams: what has arrived so far."""

    output_index: int
    item_id: str
    type: str  # "message", "function_call", …
    name: str | None = None  # a function_call's tool name and call_id come whole, in the first event
    call_id: str | None = None
    text: str = ""  # a message's text so far, or a call's arguments *text* so far
    arguments_done: bool = False  # a call's response.function_call_arguments.done has arrived: text is final
    done: bool = False  # its response.output_item.done has arrived
    item: Any = None  # the finished item (a typed openai output item), once done

    def arguments(self) -> dict[str, Any]:
        """A call's arguments as an object, from its `response.function_call_arguments.done` on.

        That event carries the whole arguments text (and the assembler has checked that the deltas
        join to it), so the call can be parsed there, before its `response.output_item.done`.

        Raises:
            StreamBroken: the item is no function_call, or its arguments are still streaming (the
                text so far is no JSON yet).
            ArgumentsError: the finished text is not a JSON object (as `arguments.parse_arguments_text`).
        """
        if self.type != "function_call":
            raise StreamBroken(say(f"output item {self.output_index} is a {self.type}, not a function_call: it has no arguments",
                                   f"输出项 {self.output_index} 是 {self.type}，不是 function_call：它没有 arguments"))
        if not self.arguments_done:
            raise StreamBroken(say(f"output item {self.output_index} is still streaming; parse it at its "
                                   "response.function_call_arguments.done event",
                                   f"输出项 {self.output_index} 还在流式传输中；等它的 "
                                   "response.function_call_arguments.done 事件到来再解析"))
        return parse_arguments_text(self.text)

    def line(self) -> str:
        """One line: index, type, id, and the text so far."""
        what = f"{self.name} {self.text}" if self.type == "function_call" else repr(self.text)
        state = say("done", "已完成") if self.done else say("streaming", "传输中")
        return f"[{self.output_index}] {self.type:<13} {self.item_id[:12]}…  {what}  ({state})"


@dataclass
class StreamAssembler:
    """Events in, items out: `feed` every event of one streamed response, in order."""

    items: dict[int, PartialItem] = field(default_factory=dict)  # by output_index
    events: list[ResponseStreamEvent] = field(default_factory=list)
    response: Response | None = None  # from response.completed (or .incomplete)

    def feed(self, event: ResponseStreamEvent) -> PartialItem | None:
        """Add one event; return the item it belongs to (None for a response-level event).

        Raises:
            StreamBroken: see the class; an `error` or `response.failed` event, with its message.
        """
        self.events.append(event)
        kind = event.type
        if kind in ("response.completed", "response.incomplete"):
            self.response = event.response
            return None
        if kind in ("error", "response.failed"):
            raise StreamBroken(f"{kind}: {getattr(event, 'message', None) or event.response.error}")
        if kind == "response.output_item.added":
            item = event.item
            partial = PartialItem(event.output_index, item.id, item.type, getattr(item, "name", None),
                                  getattr(item, "call_id", None))  # fmt: skip
            self.items[event.output_index] = partial
            return partial
        if not hasattr(event, "output_index"):
            return None  # response.created, response.in_progress
        partial = self.items.get(event.output_index)
        if partial is None or getattr(event, "item_id", partial.item_id) != partial.item_id:
            raise StreamBroken(say("{kind} for output item {index} that was never announced",
                                   "{kind} 指向输出项 {index}，但这一项从未宣告过",
                                   kind=kind, index=event.output_index))
        if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
            partial.text += event.delta
        elif kind == "response.function_call_arguments.done":
            if event.arguments != partial.text:
                raise StreamBroken(say("the deltas of item {item_id} do not join to its arguments",
                                       "项 {item_id} 的增量拼起来不等于它的 arguments", item_id=partial.item_id))
            partial.arguments_done = True  # the whole text has come: parse from here on
        elif kind == "response.output_item.done":
            partial.done, partial.item = True, event.item
            # A finished call's arguments are final too, even if no arguments .done event came first.
            partial.arguments_done = partial.arguments_done or partial.type == "function_call"
        return partial

    def final(self) -> Response:
        """The finished Response, after checking that every item streamed is in it.

        Raises:
            StreamBroken: the stream ended before `response.completed`, or its output differs.
        """
        if self.response is None:
            raise StreamBroken(say("the stream ended after {count} events without response.completed",
                                   "流在 {count} 个事件之后就结束了，没有 response.completed", count=len(self.events)))
        streamed = [self.items[i].item for i in sorted(self.items)]
        if streamed != list(self.response.output):
            raise StreamBroken(say("the items streamed are not the items of the final response",
                                   "流式传来的项与最终响应里的项不一致"))
        return self.response

    def text(self) -> str:
        """The partial state: one line per item."""
        return "\n".join(self.items[i].line() for i in sorted(self.items)) or say("(no output item yet)", "（还没有输出项）")


OnEvent = Callable[[ResponseStreamEvent, StreamAssembler], None]


@dataclass
class StreamedRequests:
    """`client.responses.create` with `stream: true`, assembled into the Response it streams.

    Pass it as `run_loop(..., create=streamed)` (or `course.run(..., create=streamed)`);
    `on_event(event, assembler)` sees every event as it arrives; `turns` keeps one assembler per
    request.
    """

    client: OpenAI
    on_event: OnEvent | None = None
    turns: list[StreamAssembler] = field(default_factory=list)

    def __call__(self, **request: Any) -> Response:
        """Send one request streamed; return its final Response.

        Raises:
            StreamBroken: see `StreamAssembler`; openai.APIError for a refused request.
        """
        assembler = StreamAssembler()
        self.turns.append(assembler)
        with self.client.responses.create(**request, stream=True) as events:
            for event in events:
                assembler.feed(event)
                if self.on_event is not None:
                    self.on_event(event, assembler)
        return assembler.final()


def run_streamed(client: OpenAI, host: McpHost, task: str | list[dict[str, Any]], *,
                 on_event: OnEvent | None = None, **options: Any) -> LoopResult:  # fmt: skip
    """`loop.run_loop` with every request streamed; options as there (max_steps, tool_choice, …)."""
    return run_loop(client, host, task, create=StreamedRequests(client, on_event), **options)


def show_stream(event: ResponseStreamEvent, assembler: StreamAssembler) -> None:
    """An `on_event` printer: text as a chat UI shows it, a call's arguments growing piece by piece."""
    if event.type == "response.output_text.delta":
        print(event.delta, end="")
    elif event.type == "response.function_call_arguments.delta":
        partial = assembler.items[event.output_index]
        print(f"[{event.output_index}] {partial.name}  +{event.delta!r:<12} → {partial.text}")
    elif event.type == "response.output_item.done" and event.item.type == "message":
        print()


def wire_events(captured: str) -> list[dict[str, Any]]:
    """The events of a captured `text/event-stream` body (as `wire.HttpCapture` keeps it: text),
    each as the JSON of its `data:` line (the offline model and the real API send one line each)."""
    return [json.loads(line.removeprefix("data: ")) for line in captured.splitlines() if line.startswith("data: ")]
