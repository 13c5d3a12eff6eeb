"""The personas: *careful* by default; *gullible* when `metadata.course_persona` says so.

The gullible persona takes tool output as an instruction: a `CALL <tool name> <JSON object>` line
in the newest results, naming a tool this request lets the model call, becomes that function call
(the prompt-injection demo). The switch is a real request field, so it shows in the request body.
"""

from __future__ import annotations

import json
import re

from course_lib.offline_model import standin
from course_lib.offline_model.answers import _outcome
from course_lib.offline_model.validation import _invalid_value

PERSONA_KEY = "course_persona"
PERSONAS = ("careful", "gullible")
_INJECTED_CALL = re.compile(r"^[ \t]*CALL[ \t]+([A-Za-z0-9_.-]+)[ \t]+(\{.*\})[ \t]*$", re.M)


def _persona(metadata: dict | None) -> str:
    """The persona the request's metadata asks for (default "careful").

    The stand-in (`standin`) is always careful, as a real model is.

    Raises:
        BadRequest: `course_persona` names no known persona.
    """
    if standin.active():  # a real model has no personas: the switch is echoed and does nothing
        return "careful"
    persona = (metadata or {}).get(PERSONA_KEY, "careful")
    if persona not in PERSONAS:
        raise _invalid_value(persona, f"metadata.{PERSONA_KEY}", list(PERSONAS))
    return persona


def _injected_call(turn: list[dict], tools: list[dict]) -> tuple | None:
    """The first `CALL <tool> {...}` line in the results of the latest calls that names a tool
    this request lets the model call, as a ("call", name, arguments) entry."""
    latest = max(i for i, item in enumerate(turn) if item["kind"] == "call")
    names = {tool["name"] for tool in tools}
    for item in turn[latest + 1 :]:
        if item["kind"] != "output":
            continue
        for match in _INJECTED_CALL.finditer(_outcome(item["text"])[1]):  # the text as the model reads it
            name, raw = match.groups()
            try:
                arguments = json.loads(raw)
            except ValueError:
                continue
            if name in names and isinstance(arguments, dict):
                return ("call", name, arguments)
    return None
