"""The fields the Responses API knows in each `input` item and content part, read from the openai
SDK's own request types rather than typed by hand.

The SDK's TypedDicts (`ResponseInputItemParam` and the content part params inside it) are generated
from the API's OpenAPI spec, so every item the SDK itself produces passes: a typed output item,
`item.to_dict()`, `model_dump(exclude_none=True)`. A key none of them declares is unknown: the real
API answers 400 `Unknown parameter: 'input[0].foo'.` (code `unknown_parameter`), and does so even
when the value is null, which is how a plain `model_dump()` fails (`async_: null`, a Python name).
Seen in https://github.com/pydantic/pydantic-ai/issues/3653 and
https://github.com/openai/openai-python/issues/3008.
"""

from __future__ import annotations

import functools
import typing
from typing import Any, Iterator

import typing_extensions

# The one key the SDK declares that the real API refuses: `status` on a reasoning item is output-only
# (`Unknown parameter: 'input[1].status'.`, https://github.com/openai/openai-agents-python/pull/3026,
# https://github.com/BerriAI/litellm/issues/13420).
_REFUSED = {("reasoning",): {"status"}}


def _typed_dicts(annotation: Any) -> Iterator[type]:
    """The TypedDicts an annotation names, through Union, Optional, List, Iterable and Required."""
    if typing_extensions.is_typeddict(annotation):  # the SDK uses typing_extensions' TypedDict
        yield annotation
    else:
        for arg in typing.get_args(annotation):
            yield from _typed_dicts(arg)


def _type_values(annotation: Any) -> list[str]:
    """The strings of the Literal inside an annotation: `Optional[Literal["message"]]` → ["message"]."""
    if typing.get_origin(annotation) is typing.Literal:
        return [value for value in typing.get_args(annotation) if isinstance(value, str)]
    return [value for arg in typing.get_args(annotation) for value in _type_values(arg)]


@functools.cache
def _fields() -> dict[tuple[str, ...], frozenset[str]]:
    """("message",) → the keys a message item may have; ("message", "content", "input_text") → the
    keys of an input_text part in a message's `content`. Several TypedDicts with one `type` (the
    three message shapes) give the union of their keys."""
    # Imported here, on the first request with list input: the types take a few tenths of a second.
    from openai.types.responses import ResponseInputItemParam

    fields: dict[tuple[str, ...], set[str]] = {}
    for item in _typed_dicts(ResponseInputItemParam):
        hints = typing.get_type_hints(item)
        for kind in _type_values(hints.get("type")):
            fields.setdefault((kind,), set()).update(hints)
            for name, hint in hints.items():
                for part in _typed_dicts(hint):
                    part_hints = typing.get_type_hints(part)
                    for part_kind in _type_values(part_hints.get("type")):
                        fields.setdefault((kind, name, part_kind), set()).update(part_hints)
    return {path: frozenset(keys - _REFUSED.get(path, set())) for path, keys in fields.items()}


def unknown_field(obj: dict, *path: str) -> str | None:
    """The first key of `obj` the API does not know at `path` ("message"; "message", "content",
    "input_text"), whatever its value; None when every key is known or the path itself is not."""
    known = _fields().get(path)
    return None if known is None else next((key for key in obj if key not in known), None)
