"""Output items found by their type, never by their position.

A real model may put a `reasoning` item before its call, a sentence of text before it (Messages, often),
several calls in one turn, or no call at all. So a cell never takes `output[0]` to be "the" call:

    from course_lib.items import call, calls, kinds, of_type
    kinds(response)                 # ['reasoning', 'function_call']: what came, in order
    calls(response)                 # every function_call, in order
    call(response)                  # the one function_call; NoCall/SeveralCalls say what came instead
    of_type(response, "mcp_call")   # every item of one type (works for any item type)
    of_type(message, "tool_use")    # Anthropic Messages: the content blocks of one type

Works on what the SDKs return (an openai `Response`, an anthropic `Message`), on the JSON a body held
(`{"output": [...]}`, `{"content": [...]}`) and on a plain list of items (typed or dicts), so the same
words serve a live response, a recorded wire body and a loop's `input` list.
"""

from __future__ import annotations

from typing import Any

from course_lib.lang import say

__all__ = ["NoCall", "SeveralCalls", "call", "calls", "kinds", "of_type"]

CALL_TYPES = ("function_call", "tool_use")
"""A call is a Responses `function_call` item or a Messages `tool_use` block."""


class NoCall(LookupError):
    """The response holds no call where one was needed; the message says what came instead."""


class SeveralCalls(LookupError):
    """The response holds more than one call where one was asked for."""


def _items(container: Any) -> list[Any]:
    """The items of a Response/Message (typed or JSON) or of a list."""
    if isinstance(container, (list, tuple)):
        return list(container)
    for name in ("output", "content"):
        value = container.get(name) if isinstance(container, dict) else getattr(container, name, None)
        if isinstance(value, (list, tuple)):
            return list(value)
    raise TypeError(say("expected a response, a message or a list of items, got {kind}",
                        "需要一个响应、一条消息或一个条目列表，得到的是 {kind}", kind=type(container).__name__))


def _type(item: Any) -> str | None:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def kinds(container: Any) -> list[str | None]:
    """The type of every item, in order: what the model sent, at a glance."""
    return [_type(item) for item in _items(container)]


def of_type(container: Any, *types: str) -> list[Any]:
    """Every item whose `type` is one of `types`, in order (the items themselves, typed or JSON)."""
    return [item for item in _items(container) if _type(item) in types]


def calls(container: Any, name: str | None = None) -> list[Any]:
    """Every call (`function_call` items, or `tool_use` blocks), in order; only those of tool `name` if given."""
    found = of_type(container, *CALL_TYPES)
    return [item for item in found if name is None or _field(item, "name") == name]


def call(container: Any, name: str | None = None) -> Any:
    """The one call in the response (of tool `name` if given).

    Raises:
        NoCall: there is none; the message lists what came instead (a real model may answer in text:
            send `tool_choice` to require a call where a lesson needs one).
        SeveralCalls: there are several; walk `calls(...)` instead.
    """
    found = calls(container, name)
    if len(found) == 1:
        return found[0]
    came = ", ".join(str(kind) for kind in kinds(container)) or say("nothing", "什么都没有")
    what = f"'{name}'" if name else say("any tool", "任何工具")
    if not found:
        raise NoCall(say("The model made no call to {what}; it sent: {came}. A model may answer in text instead: "
                         "require a call with tool_choice where the lesson needs one.",
                         "模型没有调用{what}；它发来的是：{came}。模型可能直接用文字回答：需要调用时用 tool_choice 要求它调用。",
                         what=what, came=came))
    raise SeveralCalls(say("The model made {n} calls to {what} in one turn; walk calls(...) and answer each one.",
                           "模型在一轮里对{what}发起了 {n} 个调用；遍历 calls(...)，逐个作答。", n=len(found), what=what))
