"""The output plan for one request: which function calls to make, or what to say instead.

After tool results: answer from them (or make the next serial call); the gullible persona may obey
an injected `CALL` line first. Before results: a call per read the request names, the notes
assistant's moves for a question, or a plain-text reply. The rules in full are in the package
docstring (`course_lib.offline_model`).
"""

from __future__ import annotations

import json

from course_lib.offline_model.answers import _answer_from_outputs
from course_lib.offline_model.assistant import _assistant_plan
from course_lib.offline_model.personas import _injected_call
from course_lib.offline_model.reading import (
    _FILE_INTENT,
    _arguments,
    _empty_arguments,
    _extract_reads,
    _find_reader_tool,
    _last_turn,
    _latest_user_text,
    _path_property,
)
from course_lib.offline_model.structured import evidence, fill, is_output_tool
from course_lib.offline_model.tool_output import read_output
from course_lib.offline_model.wording import language, listed, say


def _listed(paths: list[str], lang: str = "en") -> str:
    return listed(paths, lang)


def _decide(items: list[dict], mode: str, tools: list[dict], parallel: bool, persona: str = "careful") -> list[tuple]:
    """The output plan: ("call", tool name, arguments) and ("message", text) entries.

    Under a forcing `tool_choice` ("required", a named function, allowed tools in "required" mode)
    the plan always holds a call, as the real API guarantees; see `_forced_calls`. With an output
    tool declared (`structured.is_output_tool`), the answer goes into a call of it: `_with_output_tool`.
    """
    forced = tools[0]["name"] if mode == "forced" and tools else None
    finals = [tool for tool in tools if is_output_tool(tool, forced)] if mode != "none" else []
    if finals:
        return _with_output_tool(items, [tool for tool in tools if tool not in finals], finals[0], parallel, persona)
    plan = _plan(items, mode, tools, parallel, persona)
    if mode in ("required", "forced") and tools and not any(step[0] == "call" for step in plan):
        return _forced_calls([], tools[0], parallel)  # e.g. the notes assistant had its answer ready
    return plan


def _plan(items: list[dict], mode: str, tools: list[dict], parallel: bool, persona: str) -> list[tuple]:
    """The plan as a careful model would make it, before the forcing rule of `_decide`.

    After results: answer from the results only (or, with serial calls, make the next one); the
    gullible persona first obeys a `CALL` line in the newest results (see the module docstring).
    Before results: call the tool for every read the request names, or reply in text.
    """
    text, turn = _latest_user_text(items), _last_turn(items)
    outputs = [item for item in turn if item["kind"] == "output"]
    if outputs and persona == "gullible" and mode != "none" and (obeyed := _injected_call(turn, tools)):
        return [obeyed]
    reads = _extract_reads(text)
    if mode in ("auto", "required") and not reads and (plan := _assistant_plan(text, turn, tools, mode, parallel)):
        return plan  # a question (no file named) and a search tool: the notes assistant's moves
    forced = tools[0] if mode == "forced" else None
    if mode == "none" or (forced and not _path_property(forced)):
        reader = None
    else:
        reader = forced or _find_reader_tool(tools, text)
    calls = [("call", reader["name"], _arguments(reader, read)) for read in reads] if reader else []
    if outputs:
        # Serial calls (parallel_tool_calls false) went out one per request, in plan order: ask for
        # the next one. Otherwise every call is answered, so answer from the results alone.
        made = sum(1 for item in turn if item["kind"] == "call")
        pending = [] if parallel else calls[made : made + 1]
        if not pending and mode in ("required", "forced") and tools:
            # Still obliged to call, even with every result in: the same calls again (a loop that
            # keeps sending a forcing tool_choice never gets an answer; see loop.next_tool_choice).
            return _forced_calls(calls, forced or reader or tools[0], parallel)
        return pending or [("message", _answer_from_outputs(items, outputs, tools, language(text)))]
    if calls:
        return calls if parallel else calls[:1]
    if mode in ("required", "forced") and tools:
        return _forced_calls(calls, forced or reader or tools[0], parallel)
    return [("message", _reply_without_call(text, mode, reader, reads))]


def _with_output_tool(items: list[dict], data: list[dict], final: dict, parallel: bool, persona: str) -> list[tuple]:
    """The plan when the final answer is a call of the output tool `final`: first the calls of the
    data tools the task needs (as a careful model would make them, free to choose); then, in place
    of the answer it would have written, `final` filled from the evidence (`structured.fill`). A
    call of `final` the framework refused (its retry) is not made again with the same arguments:
    the answer goes out in prose instead, so the framework's own check reports the failure."""
    plan = _plan(items, "auto", data, parallel, persona)
    calls = [step for step in plan if step[0] == "call"]
    if calls:
        return calls
    prose = "\n\n".join(step[1] for step in plan if step[0] == "message")
    arguments = fill(final.get("parameters"), evidence(items, prose, frozenset({final["name"]})),
                     strict=final.get("strict") is True)
    if _refused_before(items, final["name"], arguments):
        return [("message", prose)]
    return [("call", final["name"], arguments)]


def _refused_before(items: list[dict], name: str, arguments: dict) -> bool:
    """Whether this turn already called `name` with these very arguments and got an error back."""
    turn = _last_turn(items)
    outputs = {item["call_id"]: item["text"] for item in turn if item["kind"] == "output"}
    for item in turn:
        if item["kind"] == "call" and item["name"] == name and item["call_id"] in outputs:
            try:
                same = json.loads(item["arguments"]) == arguments
            except ValueError:
                same = False
            if same and not read_output(outputs[item["call_id"]]).ok:
                return True
    return False


def _forced_calls(calls: list[tuple], tool: dict, parallel: bool) -> list[tuple]:
    """What comes out when `tool_choice` obliges a call (the real API guarantees one): the planned
    calls, or, when the request gives nothing to fill one with, `tool` with empty values — never
    guesses, so the tool's own checks refuse it visibly."""
    if calls:
        return calls if parallel else calls[:1]
    return [("call", tool["name"], _empty_arguments(tool))]


def _reply_without_call(text: str, mode: str, reader: dict | None, reads: list[tuple]) -> str:
    """Plain text when no call is made: tools off, no reading tool, no path, or nothing to read;
    in the language of the request."""
    lang = language(text)
    paths = list(dict.fromkeys(path for path, _, _ in reads))
    contents = say("contents_many" if len(paths) > 1 else "contents_one", lang)
    if paths and mode == "none":
        return say("tools_off", lang, paths=_listed(paths, lang), contents=contents)
    if paths:
        return say("no_reader", lang, paths=_listed(paths, lang), contents=contents)
    if reader and _FILE_INTENT.search(text):
        return say("which_file", lang)
    offer = say("offer_reader", lang, tool=reader["name"]) if reader else say("offer_none", lang)
    return say("intro", lang) + offer
