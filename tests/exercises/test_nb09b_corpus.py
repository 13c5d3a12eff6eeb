"""Notebook 09b's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and a fuzz pass: whatever a function answer returns or
raises, one readable line, never a library traceback."""

from __future__ import annotations

import json

import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_lib.exercises.nb09b import check_keep_failure, check_links
from course_lib.results import result_text, tool_error_code
from test_checks_fuzz import FUNCTIONS, VALUES, assert_refused_readably, returning, verdict

CHECKS = {"links": check_links, "keep_failure": check_keep_failure}

# ---- exercise 1: links ---------------------------------------------------------------------------


def function_calls(run):
    return [item for e in run.model if isinstance(e.response, dict) for item in e.response.get("output", [])
            if item.get("type") == "function_call"]  # fmt: skip


def tools_calls(run):
    return [m.json for m in run.mcp if m.direction == "app→server" and m.json.get("method") == "tools/call"]


def by_position(run):
    return {call["call_id"]: request["id"] for call, request in zip(function_calls(run), tools_calls(run))}


def item_ids(run):
    found = {}
    for call in function_calls(run):
        for request in tools_calls(run):
            if request["params"]["arguments"] == json.loads(call["arguments"]):
                found[call["id"]] = request["id"]
    return found


def counted(run):
    """ids counted: the n-th tools/call is id n + 2 (after initialize and tools/list), as in the first run."""
    found, used = {}, set()
    for call in function_calls(run):
        for n, request in enumerate(tools_calls(run)):
            if n not in used and request["params"]["arguments"] == json.loads(call["arguments"]):
                found[call["call_id"]] = n + 3
                used.add(n)
                break
    return found


def every_call(run):
    """Every function_call, a server ran it or not."""
    found = {}
    requests = tools_calls(run)
    for call in function_calls(run):
        match = next((r for r in requests if r["params"]["arguments"] == json.loads(call["arguments"])), None)
        found[call["call_id"]] = None if match is None else match["id"]
    return found


def successes_only(run):
    """Only the calls whose result was a success: the refused read left out."""
    failed = {m.json.get("id") for m in run.mcp if m.direction == "server→app" and (m.json.get("result") or {}).get("isError")}
    return {k: v for k, v in by_arguments(run).items() if v not in failed}


def the_list_id(run):
    listed = next(m.json["id"] for m in run.mcp if m.json.get("method") == "tools/list")
    return {call["call_id"]: listed for call in function_calls(run)}


def by_arguments(run):
    from course_lib.exercises.nb09b import links

    return links(run)


LINKS_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("paired by position", by_position, ["which carried another call", "match each call by its arguments"],
     ["要按参数配对，不能按位置"]),
    ("function_call item ids as keys", item_ids, ["function_call item ids (fc_…)", "starts at the call_id"],
     ["键是 function_call 项的 id（fc_…）"]),
    ("ids counted", counted, ["no tools/call carried the id", "never a count"], ["从来不是计数"]),
    ("every function_call, a server ran it or not", every_call, ["is a call no server ran", "leave it out"],
     ["没有服务器执行的调用"]),
    ("the refused read left out", successes_only, ["no link for", "a refused read too"], ["被拒绝的读取也有"]),
    ("the tools/list id", the_list_id, ["which a tools/list request carried", "take the id of the tools/call"],
     ["那是一个 tools/list 请求的 id"]),
    ("a list of pairs", lambda run: list(by_arguments(run).items()), ["must return a dict", "got list"],
     ["必须返回一个 dict"]),
    ("a dict instead of the function", {}, ["Pass the function itself (links"], ["请传入函数本身（links"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in LINKS_WRONG], ids=[row[0] for row in LINKS_WRONG])
def test_links_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_links, answer, en, zh)


def by_results_first(run):
    """Another way: walk the server's answers, and hand each tools/call to the first waiting call with its arguments."""
    waiting = [(c["call_id"], json.loads(c["arguments"])) for c in function_calls(run)]
    found = {}
    for request in tools_calls(run):
        for index, (call_id, arguments) in enumerate(waiting):
            if arguments == request["params"]["arguments"]:
                found[call_id] = request["id"]
                del waiting[index]
                break
    return found


def test_links_other_right_answer_passes(corpus):
    corpus.right(check_links, by_results_first)


# ---- exercise 2: keep_failure -----------------------------------------------------------------------


def envelope(result, code=None, message=None, **extra):
    code = code or tool_error_code(result)
    text = json.dumps({"ok": False, "error": {"code": code, "message": message or result_text(result).removeprefix(f"{code}: "),
                                              **extra}})  # fmt: skip
    return result.model_copy(update={"content": [mcp_types.TextContent(type="text", text=text)]})


def as_text(result):
    return envelope(result).content[0].text if result.is_error else result_text(result)


def not_an_error_any_more(result):
    return envelope(result).model_copy(update={"is_error": False}) if result.is_error else result


def always_forbidden(result):
    return envelope(result, code="FORBIDDEN") if result.is_error else result


def success_wrapped_too(result):
    if result.is_error:
        return envelope(result)
    text = json.dumps({"ok": True, "data": result_text(result)})
    return result.model_copy(update={"content": [mcp_types.TextContent(type="text", text=text)]})


def a_python_repr(result):
    if not result.is_error:
        return result
    text = str({"ok": False, "error": {"code": tool_error_code(result), "message": result_text(result)}})
    return result.model_copy(update={"content": [mcp_types.TextContent(type="text", text=text)]})


def structured_only(result):
    if not result.is_error:
        return result
    return result.model_copy(update={"structured_content": {"ok": False, "error": {"code": tool_error_code(result)}}})


def no_message(result):
    return envelope(result, message="the read failed") if result.is_error else result


KEEP_WRONG = [
    ("the envelope's text returned", as_text, ["must return a CallToolResult", "got str"], ["必须返回一个 CallToolResult"]),
    ("isError set to false", not_an_error_any_more, ["came back with isError false", "keep it true"],
     ["isError 成了 false"]),
    ("one code for every failure", always_forbidden, ["the code is 'FORBIDDEN', but the result says", "structuredContent.error.code"],
     ["code 是 'FORBIDDEN'，可结果里写的是"]),
    ("a success wrapped too", success_wrapped_too, ["a success must come back unchanged"], ["成功的结果必须原样返回"]),
    ("a Python repr, not JSON", a_python_repr, ["is not JSON", "json.dumps the envelope"], ["文本块不是 JSON"]),
    ("the mark in structuredContent only", structured_only, ["still carries only the server's words"],
     ["仍然只有服务器的文字"]),
    ("the server's words left out", no_message, ["does not carry the server's words"], ["没有带上服务器的原话"]),
    ("the result unchanged", lambda result: result, ["still carries only the server's words"], ["仍然只有服务器的文字"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in KEEP_WRONG], ids=[row[0] for row in KEEP_WRONG])
def test_keep_failure_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_keep_failure, answer, en, zh)


def compact_with_retryable(result):
    """Another shape: compact JSON, a `retryable` field, the server's whole text as the message."""
    if not result.is_error:
        return result
    text = json.dumps({"ok": False, "error": {"code": tool_error_code(result), "message": result_text(result),
                                              "retryable": False}}, separators=(",", ":"))  # fmt: skip
    return mcp_types.CallToolResult(is_error=True, content=[mcp_types.TextContent(type="text", text=text)])


def test_keep_failure_other_right_answer_passes(corpus):
    corpus.right(check_keep_failure, compact_with_retryable)


# ---- no answer breaks either check ------------------------------------------------------------------


@pytest.mark.parametrize("label", [*VALUES, *FUNCTIONS])
@pytest.mark.parametrize("name", CHECKS)
def test_a_nasty_answer_gets_one_readable_line(name, label, en):
    answer = VALUES[label] if label in VALUES else FUNCTIONS[label]
    assert_refused_readably(*verdict(CHECKS[name], answer))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)  # fmt: skip


@pytest.mark.parametrize("name", CHECKS)
@settings(max_examples=10, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(value=JSON)
def test_any_json_a_function_returns_gets_one_readable_line(name, value):
    returned, printed = verdict(CHECKS[name], returning(value))
    assert "Traceback" not in printed and printed.count("\n") == 1, printed
    assert (returned, printed[:1]) in ((False, "✗"), (True, "✓")), printed

