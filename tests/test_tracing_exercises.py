"""The checks of notebooks 09b and 09c against the answers they must refuse: each wrong answer is
named for its mistake, every right one passes, and none shows a traceback.

09b (course_lib/exercises/nb09b.py): an answer that never sets a used `tools/call` aside, and one that
reads the code only from the text's `CODE:` prefix (ignoring `structuredContent`), both fail now.
09c (course_lib/exercises/nb09c.py): `find_links` on every framework's recorded tree, `traced_call`
around real calls of the course's host.
"""

from __future__ import annotations

import json

import mcp_types
import pytest

from course_lib.exercises import nb09b, nb09c
from course_lib.loop import error_output
from course_lib.results import result_text


def _printed(capsys) -> str:
    out = capsys.readouterr().out
    assert "Traceback" not in out
    return out


# ---- 09b: the two gaps -------------------------------------------------------------------------


def never_marks_used(run):
    carried = [m.json for m in run.mcp if m.direction == "app→server" and m.json.get("method") == "tools/call"]
    found = {}
    for exchange in run.model:
        for item in exchange.response.get("output", []) if isinstance(exchange.response, dict) else []:
            if item.get("type") == "function_call":
                arguments = json.loads(item["arguments"])
                found.update({item["call_id"]: r["id"] for r in carried[::-1] if r["params"].get("arguments") == arguments})
    return found


def code_from_text_only(result):
    if not result.is_error:
        return result
    text = result_text(result)
    head, sep, rest = text.partition(": ")
    code, message = (head, rest) if sep and head.isupper() else ("UPSTREAM_ERROR", text)
    return result.model_copy(update={"content": [mcp_types.TextContent(type="text", text=error_output(code, message))]})


def test_links_that_never_sets_a_used_tools_call_aside_fails_on_the_same_read_twice(capsys, en):
    assert nb09b.check_links(never_marks_used) is False
    assert "a tools/call carries one call, so once you pair it, take it out" in _printed(capsys)


def test_keep_failure_that_ignores_structured_content_s_code_fails_on_the_locked_note(capsys, en):
    assert nb09b.check_keep_failure(code_from_text_only) is False
    assert "but the result says CONFLICT (notes: a locked note" in _printed(capsys)


def test_the_09b_references_still_pass(capsys):
    assert nb09b.check_links(nb09b.links) and nb09b.check_keep_failure(nb09b.keep_failure)


# ---- 09c: find_links ------------------------------------------------------------------------------


def direct_children_only(spans):
    return {s.get("gen_ai.tool.call.id"): str(c.get("jsonrpc.request.id")) for s in spans if s.get("gen_ai.tool.call.id")
            for c in spans if c.parent_id == s.span_id and c.get("jsonrpc.request.id")}  # fmt: skip


def any_json_rpc_id(spans):
    """The first jsonrpc.request.id of any method below: initialize and tools/list count too."""
    out = {}
    for span in spans:
        if span.get("gen_ai.tool.call.id"):
            below = [s for s in spans if s.trace_id == span.trace_id and s.get("jsonrpc.request.id")]
            if below:
                out[span.get("gen_ai.tool.call.id")] = str(below[0].get("jsonrpc.request.id"))
    return out


def span_ids(spans):
    return {s.get("gen_ai.tool.call.id"): c.span_id for s in spans for c in spans
            if s.get("gen_ai.tool.call.id") and c.parent_id == s.span_id}  # fmt: skip


@pytest.mark.parametrize(("answer", "named"), [
    (lambda spans: ..., "still returns the starter"),
    (lambda spans: [], "must return a dict"),
    (lambda spans: 1 / 0, "find_links raised ZeroDivisionError"),
    (lambda spans: {}, "no link for"),
    (direct_children_only, "look below every child"),
    (span_ids, "a span id"),
])  # fmt: skip
def test_find_links_names_each_mistake(answer, named, capsys, en):
    assert nb09c.check_find_links(answer) is False
    assert named in _printed(capsys)


def test_find_links_that_reads_by_position_fails(capsys, en):
    assert nb09c.check_find_links(any_json_rpc_id) is False
    _printed(capsys)


def test_find_links_accepts_another_correct_answer(capsys):
    def depth_first(spans):
        children = {}
        for s in spans:
            children.setdefault(s.parent_id, []).append(s)

        def below(span, depth=0):
            found = [(depth, span)] if span.get("mcp.method.name") == "tools/call" and span.get("jsonrpc.request.id") else []
            return found + [hit for c in children.get(span.span_id, []) for hit in below(c, depth + 1)]

        out = {}
        for s in spans:
            if s.get("gen_ai.tool.call.id"):
                hits = sorted(below(s), key=lambda hit: hit[0])
                if hits:
                    out[s.get("gen_ai.tool.call.id")] = hits[0][1].get("jsonrpc.request.id")
        return out

    assert nb09c.check_find_links(depth_first) is True
    _printed(capsys)


# ---- 09c: traced_call ------------------------------------------------------------------------------


def no_span(tracer, call_id, name, execute):
    return execute()


def span_not_current(tracer, call_id, name, execute):
    span = tracer.start_span(f"execute_tool {name}", attributes={"gen_ai.operation.name": "execute_tool",
                                                                 "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id})
    try:
        return execute()
    finally:
        span.end()


def wrong_name(tracer, call_id, name, execute):
    with tracer.start_as_current_span(f"tool {name}", attributes={"gen_ai.tool.call.id": call_id}):
        return execute()


def client_kind(tracer, call_id, name, execute):
    from opentelemetry.trace import SpanKind

    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}
    with tracer.start_as_current_span(f"execute_tool {name}", kind=SpanKind.CLIENT, attributes=attributes):
        return execute()


def returns_nothing(tracer, call_id, name, execute):
    with tracer.start_as_current_span(f"execute_tool {name}", attributes={"gen_ai.tool.call.id": call_id}):
        execute()


@pytest.mark.parametrize(("answer", "named"), [
    (no_span, "no span holds gen_ai.tool.call.id"),
    (span_not_current, "is not under your span"),
    (wrong_name, "the conventions name it execute_tool"),
    (client_kind, "a tool execution is INTERNAL"),
    (returns_nothing, "not what execute() returned"),
    (lambda tracer, call_id, name, execute: ..., "still returns the starter"),
    (lambda tracer, call_id, name, execute: {}[call_id], "traced_call raised KeyError"),
])  # fmt: skip
def test_traced_call_names_each_mistake(answer, named, capsys, en):
    assert nb09c.check_tool_span(answer) is False
    assert named in _printed(capsys)


def test_the_09c_references_pass_and_speak_chinese_in_the_zh_edition(capsys, zh):
    assert nb09c.check_find_links(nb09c.find_links) and nb09c.check_tool_span(nb09c.traced_call)
    assert "每个 call_id 都连上了" in _printed(capsys)
