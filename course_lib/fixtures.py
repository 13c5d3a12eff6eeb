"""Regenerate the recorded fixtures from a real run: `python -m course_lib.fixtures [OUT_DIR]`.

The run is the course's running example — "show the first 20 lines of /workspace/notes.txt" —
through the offline model, the real openai SDK, the app's loop and the in-process files server.
Every body is the one that crossed: request bodies as the SDK sent them, responses as they came
back, MCP messages as they crossed the connection. The offline model is deterministic, so running
this twice writes byte-identical files.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from course_lib.paths import fixtures_dir

TASK = "Show the first 20 lines of /workspace/notes.txt"


def record_roundtrip() -> dict[str, Any]:
    """Run the task once offline and return the six recorded bodies plus the MCP declaration."""
    from course_lib.course import start_course

    if os.environ.get("OPENAI_API_KEY"):
        raise RuntimeError("fixtures are recorded from the offline model: unset OPENAI_API_KEY first")
    course = start_course(quiet=True)
    try:
        result = course.run(TASK)
        if result.status != "completed" or len(course.wire.exchanges) != 2:
            raise RuntimeError(f"the recording run did not complete in two requests: {result.status}, {result.reason}")
        first, second = course.wire.exchanges
        call = course.mcp.exchanges("tools/call")[0]
        listing = course.mcp.exchanges("tools/list")[0]
        return {
            "request_1": first.request,
            "response_1": first.response,
            "mcp_request": call.request,
            "mcp_response": call.response,
            "request_2": second.request,
            "response_2": second.response,
            "_mcp_tool": listing.response["result"]["tools"][0],
        }
    finally:
        course.close()


def fragments(roundtrip: dict[str, Any]) -> dict[str, Any]:
    """The key fields of each object, cut from the recorded round trip (nothing re-typed)."""
    call = next(i for i in roundtrip["response_1"]["output"] if i["type"] == "function_call")
    feedback = next(i for i in roundtrip["request_2"]["input"] if i.get("type") == "function_call_output")
    return {
        "mcp_tool": roundtrip["_mcp_tool"],
        "responses_tool": roundtrip["request_1"]["tools"][0],
        "function_call": {k: call[k] for k in ("type", "name", "arguments", "call_id")},
        "mcp_request": roundtrip["mcp_request"],
        "mcp_response": roundtrip["mcp_response"],
        "function_call_output": feedback,
    }


def write(out_dir: Path) -> list[Path]:
    """Record once and write the four fixture files into `out_dir`; returns their paths."""
    roundtrip = record_roundtrip()
    files = {
        "field_fragments.json": fragments(roundtrip),
        "mcp_request.json": roundtrip["mcp_request"],
        "mcp_response.json": roundtrip["mcp_response"],
        "responses_roundtrip.json": {k: v for k, v in roundtrip.items() if not k.startswith("_")},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files.items():
        path = out_dir / name
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else fixtures_dir()
    for path in write(target):
        print(f"wrote {path.name}")
