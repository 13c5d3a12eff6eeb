"""Anthropic message threads (beta): the server holds a conversation, so each turn sends only what is new.

The anthropic SDK's tool runner (`client.beta.messages.tool_runner`) sends, with the beta header
`anthropic-beta: message-threads-2026-08-12` (`anthropic/lib/threads/_thread_state.py`,
`MESSAGE_THREADS_BETA`):

- its first turn with `thread: {"type": "create"}` and the whole request (messages, system, tools);
- every later turn with `thread: {"type": "continue", "previous_message_id": <the reply's id>}` and
  only the new messages (the `tool_result`s), without `system` and `tools`, which the server takes
  from the thread ("Request fields the server takes from the thread on a `continue` and rejects if
  the request repeats them", the SDK's `CREATE_ONLY_FIELDS`).

So the offline model keeps, under each threaded reply's id, the messages so far (the reply
included), `system` and `tools` (`remember`), and answers a `continue` as if its messages followed
them (`resolve`). A reply is continued once; what the SDK recovers from gets the error codes it
reads in `error.details.error_code` (`_REPLAY_ERROR_CODES`): `thread_not_found` for an id this
process never held (or forgot: at most `CAPACITY` threads), `thread_already_continued` for a
second continue from the same reply. The wording of those messages is this model's own (not
verified against the real API); the codes are the SDK's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

BETA = "message-threads-2026-08-12"
CAPACITY = 512
CREATE_ONLY = ("system", "tools")

_lock = threading.Lock()
_held: OrderedDict[str, dict[str, Any]] = OrderedDict()  # reply id → {"messages", "system", "tools"}
_continued: set[str] = set()


class ThreadError(Exception):
    """A `thread` the server cannot follow: `code` is what the SDK reads in `error.details.error_code`
    (None for a malformed request)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


def resolve(body: dict, betas: list[str]) -> tuple[dict, dict | None]:
    """The body as the model answers it (a `continue` with the thread's messages, system and tools in
    front), and the `thread` it named (None without one).

    Raises:
        ThreadError: `thread` without the threads beta header, of the wrong shape, repeating a field the
            thread holds, naming a reply not held, or one already continued.
    """
    thread = body.get("thread")
    if thread is None or thread is False:
        return body, None
    if BETA not in betas:
        raise ThreadError("thread: Extra inputs are not permitted")  # without the beta, an unknown key
    kind = thread.get("type") if isinstance(thread, dict) else None
    if kind == "create":
        return body, thread
    if kind != "continue" or not isinstance(thread.get("previous_message_id"), str):
        raise ThreadError("thread: Input should be {'type': 'create'} or {'type': 'continue', 'previous_message_id': …}")
    repeated = [key for key in CREATE_ONLY if key in body]
    if repeated:
        raise ThreadError(f"{repeated[0]}: the thread holds it; a `continue` turn must not send it again")
    previous = thread["previous_message_id"]
    with _lock:
        held = _held.get(previous)
        if held is not None and previous in _continued:
            raise ThreadError(f"thread: the message {previous} was already continued", "thread_already_continued")
        if held is not None:
            _continued.add(previous)
    if held is None:
        raise ThreadError(f"thread: no thread holds the message {previous}", "thread_not_found")
    fields = {key: held[key] for key in CREATE_ONLY if held.get(key) is not None}
    return {**body, **fields, "messages": [*held["messages"], *body["messages"]]}, thread


def remember(body: dict, thread: dict | None, reply: dict) -> None:
    """Hold the thread up to `reply` (a Message dict) under its id, when the request named a thread."""
    if thread is None:
        return
    messages = [*body["messages"], {"role": "assistant", "content": reply["content"]}]
    with _lock:
        _held[reply["id"]] = {"messages": messages, **{key: body.get(key) for key in CREATE_ONLY}}
        _held.move_to_end(reply["id"])
        while len(_held) > CAPACITY:
            forgotten, _ = _held.popitem(last=False)
            _continued.discard(forgotten)


def forget_all() -> None:
    """Drop every thread (for tests)."""
    with _lock:
        _held.clear()
        _continued.clear()
