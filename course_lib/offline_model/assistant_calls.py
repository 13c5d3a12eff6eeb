"""The notes assistant's tools and calls: which declared tool searches, reads a note or saves a
learning gap, and what each call of this turn returned (`_Done`), including the search hits worth
reading.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from course_lib.offline_model.reading import _is_reader, _path_property, _properties, _types
from course_lib.offline_model.tool_output import read_output


def _search_tool(tools: list[dict]) -> dict | None:
    """The first tool with a `query` string property (search_notes, notes__search_notes, ...)."""
    return next((tool for tool in tools if "string" in _types(_properties(tool).get("query"))), None)


def _note_reader(tools: list[dict]) -> dict | None:
    """The tool that reads one note by path: a reader with a path property, named for notes if any is."""
    readers = [tool for tool in tools if _is_reader(tool) and _path_property(tool)]
    noted = [tool for tool in readers if {"note", "notes"} & set(re.split(r"[^a-z]+", tool["name"].lower()))]
    return (noted or readers or [None])[0]


def _gap_writer(tools: list[dict]) -> dict | None:
    """The tool that saves a learning gap: named for gaps, with a `topic` property."""
    return next((tool for tool in tools if "gap" in re.split(r"[^a-z]+", tool["name"].lower())
                 and "topic" in _properties(tool)), None)  # fmt: skip


def _caller_key(tool: dict, name: str, values: dict) -> str | None:
    """A value for a required field only the caller can know, as a real model fills it: a fresh key
    for a required idempotency-key string (`idempotency_key`, `idempotencyKey`), made from the tool
    and the other values, so the same proposal sent again carries the same key (a retry replays,
    never writes twice) and a different one gets its own. None for any other field."""
    schema = _properties(tool).get(name)
    required = (tool.get("parameters") or {}).get("required") or []
    if name not in required or not re.search(r"idempotenc", name, re.I) or "string" not in _types(schema):
        return None
    others = {key: value for key, value in values.items() if key != name}
    seed = json.dumps([tool["name"], others], sort_keys=True, ensure_ascii=False)
    return f"key-{hashlib.sha256(seed.encode()).hexdigest()[:24]}"


def _fill(tool: dict, values: dict) -> dict:
    """Arguments in schema order; a strict tool gets every property (null when unused); a required
    idempotency key the host did not hide from the model gets a fresh key (`_caller_key`)."""
    strict = tool.get("strict") is True
    keys = {name: key for name in _properties(tool) if name not in values
            and (key := _caller_key(tool, name, values)) is not None}  # fmt: skip
    values = {**values, **keys}
    return {name: values.get(name) for name in _properties(tool) if name in values or strict}


@dataclass
class _Done:
    """One call of this turn and its result, as the model reads them."""

    kind: str  # "search", "read", "save" or "other"
    arguments: dict
    ok: bool
    data: Any = None
    code: str | None = None
    message: str = ""
    retryable: bool = False


def _done(turn: list[dict], search: dict, reader: dict | None, writer: dict | None) -> list[_Done]:
    """The calls of this turn that have results, in the order the results came back."""
    kinds = {search["name"]: "search", **({reader["name"]: "read"} if reader else {}),
             **({writer["name"]: "save"} if writer else {})}  # fmt: skip
    calls = {item["call_id"]: item for item in turn if item["kind"] == "call"}
    done = []
    for item in turn:
        if item["kind"] != "output" or item["call_id"] not in calls:
            continue
        call = calls[item["call_id"]]
        try:
            arguments = json.loads(call["arguments"])
        except ValueError:
            arguments = {}
        reading = read_output(item["text"])  # whatever the host forwarded: envelope, text, structured JSON
        done.append(_Done(kinds.get(call["name"], "other"), arguments if isinstance(arguments, dict) else {},
                          reading.ok, reading.data if reading.ok else None, reading.code, reading.text,
                          reading.retryable is True))  # fmt: skip
    return done


def _hits(step: _Done) -> list[dict]:
    """The hits of a successful search worth reading: a path, a score above 0 and at least half
    the best score (a hit far behind the best one is rarely about the question)."""
    hits = step.data.get("hits") if isinstance(step.data, dict) else None
    scored = [hit for hit in hits or [] if isinstance(hit, dict) and isinstance(hit.get("path"), str)
              and isinstance(hit.get("score"), (int, float)) and hit["score"] > 0]  # fmt: skip
    best = max((hit["score"] for hit in scored), default=0)
    return [hit for hit in scored if hit["score"] * 2 >= best]
