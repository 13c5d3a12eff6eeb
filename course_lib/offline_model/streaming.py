"""`stream_events`: a finished Response dict → the server-sent events of `stream: true` (pure).

The offline model decides its whole answer first (`respond`), then tells it in pieces, in the
order and shapes the openai SDK's event types define (`openai/types/responses/*_event.py`):

    response.created, response.in_progress             the response, in_progress, no output yet
    per output item, at its output_index:
      response.output_item.added                       the item in_progress: "" arguments, no content
      message:   response.content_part.added           an empty output_text part (content_index 0)
                 response.output_text.delta  × n       the text in token-sized pieces
                 response.output_text.done             the whole text
                 response.content_part.done            the whole part
      call:      response.function_call_arguments.delta × n   the arguments *text* in pieces
                 response.function_call_arguments.done        the whole arguments text
      mcp_list_tools: response.mcp_list_tools.in_progress, .completed   (the hosted mcp tool, `hosted_mcp`;
      mcp_call:  response.mcp_call_arguments.delta × n, .done,           added with no tools / "" arguments)
                 response.mcp_call.in_progress, .completed (or .failed)
      response.output_item.done                        the finished item, as in the final output
    response.completed (response.incomplete when its status is "incomplete")   the final Response

Every event carries a `sequence_number` (0, 1, 2, …) and every item event its `output_index` and
`item_id`, which is how a client puts the pieces back together. A delta is a piece of text, not
JSON: `{"path":"/workspace/no` is what a call's arguments look like halfway.

Not sent (the real API sends it by default): the `obfuscation` field of delta events, random
padding that hides token lengths; it is random, and this model's output must be byte-identical
every time, so the stream is the one the real API sends with `stream_options.include_obfuscation:
false`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx

# A piece is roughly a token: a run of letters/digits or of punctuation, with the spaces before it.
_PIECE = re.compile(r"\s*(?:\w{1,12}|[^\w\s]{1,4})|\s+")


def pieces(text: str) -> list[str]:
    """`text` cut into token-sized pieces that join back to exactly `text` ("" gives no pieces)."""
    return _PIECE.findall(text)


def stream_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The events that stream `response` (a Response dict as `respond` returns it), in order."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    started = {**response, "status": "in_progress", "completed_at": None, "incomplete_details": None,
               "output": [], "usage": None}  # fmt: skip
    emit("response.created", response=started)
    emit("response.in_progress", response=started)
    for index, item in enumerate(response["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "function_call":
            started_item = {**item, "status": "in_progress", "arguments": ""}
            emit("response.output_item.added", output_index=index, item=started_item)
            for piece in pieces(item["arguments"]):
                emit("response.function_call_arguments.delta", **at, delta=piece)
            emit("response.function_call_arguments.done", **at, arguments=item["arguments"])
        elif item["type"] == "message":
            started_item = {**item, "status": "in_progress", "content": []}
            emit("response.output_item.added", output_index=index, item=started_item)
            for content_index, part in enumerate(item["content"]):
                emit("response.content_part.added", **at, content_index=content_index, part={**part, "text": ""})
                for piece in pieces(part["text"]):
                    emit("response.output_text.delta", **at, content_index=content_index, delta=piece, logprobs=[])
                emit("response.output_text.done", **at, content_index=content_index, text=part["text"], logprobs=[])
                emit("response.content_part.done", **at, content_index=content_index, part=part)
        elif item["type"].startswith("mcp_"):  # the hosted mcp tool's items have events of their own
            mcp_item_events(item, index, emit)
        else:  # any other item (e.g. reasoning) arrives whole
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.incomplete" if response.get("status") == "incomplete" else "response.completed", response=response)
    return events


def mcp_item_events(item: dict[str, Any], index: int, emit: Callable[..., None]) -> None:
    """The events of one mcp_* output item (`hosted_mcp`), in the real API's order, up to its
    output_item.done (which `stream_events` adds, as for every item):

        mcp_list_tools:  output_item.added (no tools yet), mcp_list_tools.in_progress, .completed
        mcp_call:        output_item.added ("" arguments), mcp_call_arguments.delta × n, .done,
                         mcp_call.in_progress, mcp_call.completed (or .failed)
        other mcp_*:     output_item.added, whole
    """
    at = {"item_id": item["id"], "output_index": index}
    if item["type"] == "mcp_list_tools":
        emit("response.output_item.added", output_index=index, item={**item, "tools": []})
        emit("response.mcp_list_tools.in_progress", **at)
        emit("response.mcp_list_tools.completed", **at)
    elif item["type"] == "mcp_call":
        started = {**item, "arguments": "", "output": None, "error": None, "status": "in_progress"}
        emit("response.output_item.added", output_index=index, item=started)
        for piece in pieces(item["arguments"]):
            emit("response.mcp_call_arguments.delta", **at, delta=piece)
        emit("response.mcp_call_arguments.done", **at, arguments=item["arguments"])
        emit("response.mcp_call.in_progress", **at)
        emit("response.mcp_call.failed" if item["error"] else "response.mcp_call.completed", **at)
    else:
        emit("response.output_item.added", output_index=index, item=item)


def sse_frame(event: dict[str, Any]) -> bytes:
    """One event as it crosses: `event: <type>` and `data: <JSON on one line>`, then a blank line."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode("utf-8")


class _Frames(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body handed over one event at a time, to sync and async clients alike."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames

    def __iter__(self) -> Iterator[bytes]:
        yield from self.frames

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for frame in self.frames:
            yield frame


def event_stream(response: dict[str, Any]) -> httpx.Response:
    """A 200 `text/event-stream` HTTP response that streams `response`, one frame per event.

    The events are all built before the first byte goes out, so nothing can fail mid-stream.
    """
    frames = [sse_frame(event) for event in stream_events(response)]
    headers = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
    return httpx.Response(200, headers=headers, stream=_Frames(frames))
