"""The offline model reads tool output as a model would, whatever the host forwarded: an error is
answered as an error (what failed, the code, what to try next), a read's lines are quoted as lines,
never as JSON. The shapes are the ones real hosts send (see `tool_output`)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.offline_model import respond
from course_lib.offline_model.tool_output import read_output

LINES = "first line\nsecond line\n"
PATH = "/workspace/notes.txt"
FORBIDDEN = "FORBIDDEN: path is outside /workspace"
READER = {"type": "function", "name": "read_text_file", "description": "Read a text file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                         "required": ["path"]}}  # fmt: skip


def nested(value, times=1):
    for _ in range(times):
        value = json.dumps(value)
    return value


# What each host sends for a good read of two lines.
READS = {
    "plain text (Agents SDK, course host)": LINES,
    "structured content (Agents SDK use_structured_content)": json.dumps({"path": PATH, "text": LINES, "lines": 2}),
    "structured content, compact (pydantic-ai)": json.dumps({"path": PATH, "text": LINES, "lines": 2}, separators=(",", ":")),
    "structured content in a JSON string": nested(json.dumps({"path": PATH, "text": LINES})),
    "an MCP result object": json.dumps({"content": [{"type": "text", "text": LINES}], "isError": False}),
    "an MCP result with structuredContent": json.dumps({"content": [{"type": "text", "text": LINES}],
                                                        "structuredContent": {"path": PATH, "text": LINES}}),
    "content blocks": json.dumps([{"type": "text", "text": LINES}]),
    "the execution layer's envelope": json.dumps({"ok": True, "data": {"text": LINES}}),
    "the Node reference server's structured content": json.dumps({"content": LINES}),
    "fastmcp's structured content of a str result": json.dumps({"result": LINES}),
    "pydantic-ai's wrapper of a non-object result": json.dumps({"return_value": LINES}),
}

# What each host sends for a refused read, and the code the model must report.
ERRORS = {
    "a code line (Agents SDK, isError dropped)": (FORBIDDEN, "FORBIDDEN"),
    "a code line, missing file": ("NOT_FOUND: '/workspace/missing.txt': no such file", "NOT_FOUND"),
    "pydantic-ai: JSON error in a string": (json.dumps({"error": json.dumps(
        {"error": {"code": "FORBIDDEN", "message": "path is outside /workspace"}}, separators=(",", ":"))}), "FORBIDDEN"),
    "a JSON error object": (json.dumps({"error": {"code": "FORBIDDEN", "message": "path is outside /workspace"}}), "FORBIDDEN"),
    "a flat JSON error": (json.dumps({"code": "FORBIDDEN", "message": "path is outside /workspace"}), "FORBIDDEN"),
    "an error string holding a code line": (json.dumps({"error": FORBIDDEN}), "FORBIDDEN"),
    "an MCP isError result": (json.dumps({"content": [{"type": "text", "text": FORBIDDEN}], "isError": True}), "FORBIDDEN"),
    "an MCP isError result, code only in structuredContent": (json.dumps({
        "content": [{"type": "text", "text": "path is outside /workspace"}], "isError": True,
        "structuredContent": {"error": {"code": "FORBIDDEN", "message": "path is outside /workspace"}}}), "FORBIDDEN"),
    "content blocks with a code line": (json.dumps([{"type": "text", "text": FORBIDDEN}]), "FORBIDDEN"),
    "a code line JSON-encoded twice": (nested(FORBIDDEN, 2), "FORBIDDEN"),
    "Error executing tool (a host's wrapper)": ("Error executing tool read_text_file: " + FORBIDDEN, "FORBIDDEN"),
    "an errno line (Node)": ("Error: ENOENT: no such file or directory, open '/workspace/x'", "ENOENT"),
    "the execution layer's envelope": (json.dumps({"ok": False, "error": {"code": "FORBIDDEN", "message":
                                                                          "path is outside /workspace"}}), "FORBIDDEN"),
}


def answer(output: str, arguments: dict | None = None) -> str:
    arguments = {"path": PATH, "head": 2} if arguments is None else arguments
    body = {"model": "m", "tools": [READER], "input": [
        {"role": "user", "content": f"Show the first 2 lines of {PATH}"},
        {"type": "function_call", "call_id": "call_1", "name": "read_text_file", "arguments": json.dumps(arguments)},
        {"type": "function_call_output", "call_id": "call_1", "output": output}]}  # fmt: skip
    return respond(body)["output"][0]["content"][0]["text"]


@pytest.mark.parametrize("host", READS)
def test_a_read_is_quoted_as_lines_whatever_the_host_sent(host):
    assert answer(READS[host]) == f"Here are the first 2 lines of {PATH}, as returned by read_text_file:\n\n{LINES}"


@pytest.mark.parametrize("host", ERRORS)
def test_an_error_is_answered_as_an_error_with_its_code_whatever_the_host_sent(host):
    output, code = ERRORS[host]
    text = answer(output)
    assert text.startswith(f"The tool read_text_file reported an error when asked for the first 2 lines of {PATH}.\n")
    assert f"\nError code: {code}\n" in text and "Here are" not in text and "{" not in text
    assert "I could not read the file, so I won't say anything about what it contains." in text
    # What to try next: every shape but the course's own envelope (its `retryable` drives the host's retries).
    assert ("What to try next:" in text) is (host != "the execution layer's envelope")


# Errors in plain words, as other servers and frameworks write them (their real messages are in
# fixtures/refusal_corpus.json): no code of their own, the kind read from the words.
PLAIN = {
    "Access denied - path outside allowed directories: /etc/passwd not in /workspace": "FORBIDDEN",
    "Access denied: /etc/passwd is outside the allowed directory /workspace": "FORBIDDEN",
    "Cannot specify both head and tail parameters simultaneously": "INVALID_INPUT",
    "Error calling tool 'read_text_file': [Errno 2] No such file or directory: '/workspace/x'": "ENOENT",
    "Error calling tool 'read_text_file'": None,
    "Unknown tool: 'read_txt'": "NOT_FOUND",
    "An error occurred while running the tool. Please try again.": None,
    "Tool 'read_text_file' timed out after 5 seconds.": "TIMEOUT",
    "1 validation error for call[read_text_file]\npath\n  Missing required argument [type=missing_argument]": "INVALID_INPUT",
    json.dumps({"error": [{"type": "string_type", "loc": ["path"], "msg": "Input should be a valid string"}]}):
        "INVALID_INPUT",
}


@pytest.mark.parametrize("output", PLAIN)
def test_an_error_in_plain_words_is_an_error_of_the_kind_its_words_say(output):
    reading = read_output(output)
    assert (reading.ok, reading.code, reading.kind) == (False, None, PLAIN[output])
    text = answer(output)
    assert "reported an error" in text and "Error code:" not in text and "Here are" not in text  # no code invented
    assert text.splitlines()[-1].startswith("What to try next:")


def test_advice_follows_the_kind_the_words_say():
    assert answer(next(iter(PLAIN))).endswith("ask for a file the tool is allowed to read; I won't try to get around "
                                              "the refusal.")  # fmt: skip
    assert "try again in a moment" in answer("Tool 'read_text_file' timed out after 5 seconds.")


@pytest.mark.parametrize("line", ["Cannot wait: deadlines matter", "Access denied is what a refusal says"])
def test_a_one_line_read_that_opens_like_a_refusal_is_reported_as_an_error_never_the_reverse(line):
    # The price of reading plain words (see tool_output): a false refusal, never a false success.
    assert not read_output(line).ok and read_output(line + "\nand a second line").ok


def test_the_agents_sdk_refusal_is_answered_in_full():
    assert answer(FORBIDDEN) == (
        f"The tool read_text_file reported an error when asked for the first 2 lines of {PATH}.\n"
        "Error code: FORBIDDEN\nError message: path is outside /workspace\n"
        "I could not read the file, so I won't say anything about what it contains.\n"
        "What to try next: ask for a file the tool is allowed to read; I won't try to get around the refusal.")


@pytest.mark.parametrize("content", [
    "TODO: write this note\n", "NOTE: read the spec first", "WARNING: draft", "Title: Retries", "HTTP: a protocol",
    "ERROR_LOG: line one\nline two\n",  # an unfamiliar code with more lines: content
    json.dumps({"hits": [{"path": "/notes/a.md", "score": 1}]}),  # JSON without an error: quoted as it is
    json.dumps({"code": "utf-8", "message": "hello"}),  # a "code" that is no error code
    "",
])
def test_content_that_merely_looks_structured_is_still_content(content):
    reading = read_output(content)
    assert reading.ok and reading.text == content


def test_the_reading_keeps_data_code_and_retryable():
    assert read_output(READS["structured content (Agents SDK use_structured_content)"]).data == {
        "path": PATH, "text": LINES, "lines": 2}
    envelope = read_output(json.dumps({"ok": False, "error": {"code": "TIMEOUT", "message": "slow", "retryable": True}}))
    assert (envelope.ok, envelope.code, envelope.text, envelope.retryable, envelope.envelope) == (
        False, "TIMEOUT", "slow", True, True)
    pydantic = read_output(ERRORS["pydantic-ai: JSON error in a string"][0])
    assert (pydantic.code, pydantic.text, pydantic.envelope) == ("FORBIDDEN", "path is outside /workspace", False)


def test_a_failed_write_from_an_outside_host_is_a_change_not_made():
    writer = {"type": "function", "name": "write_file", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}}}  # fmt: skip
    body = {"model": "m", "tools": [writer], "input": [
        {"role": "user", "content": "Save it"},
        {"type": "function_call", "call_id": "c", "name": "write_file", "arguments": json.dumps({"path": PATH, "content": "x"})},
        {"type": "function_call_output", "call_id": "c", "output": "FORBIDDEN: the workspace is read-only"}]}  # fmt: skip
    text = respond(body)["output"][0]["content"][0]["text"]
    assert "Error code: FORBIDDEN" in text and "The change was not made: nothing was saved." in text
    assert text.endswith("What to try next: this change is not allowed here; I won't try to get around the refusal.")


def test_a_write_that_timed_out_is_never_advised_to_be_sent_again_blindly():
    writer = {"type": "function", "name": "write_file", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}}}  # fmt: skip
    body = {"model": "m", "tools": [writer], "input": [
        {"role": "user", "content": "Save it"},
        {"type": "function_call", "call_id": "c", "name": "write_file", "arguments": json.dumps({"path": PATH, "content": "x"})},
        {"type": "function_call_output", "call_id": "c", "output": "TIMEOUT: no answer within 5s"}]}  # fmt: skip
    text = respond(body)["output"][0]["content"][0]["text"]
    assert "may or may not have been saved" in text
    assert text.endswith("What to try next: check whether the change was saved before asking for it again.")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                                            lambda inner: st.lists(inner, max_size=3)
                                            | st.dictionaries(st.sampled_from(["ok", "error", "code", "message", "text",
                                                                               "isError", "content", "data", "type"]),
                                                              inner, max_size=4), max_leaves=10).map(json.dumps))
def test_any_output_is_read_without_raising(text):
    reading = read_output(text)
    assert isinstance(reading.text, str) and reading.ok in (True, False)


def test_deep_nesting_is_read_without_raising():
    for text in ["[" * 50_000, '"' + "\\\"" * 10_000, nested(FORBIDDEN, 12), json.dumps({"error": {"message": nested("x", 8)}})]:
        read_output(text)
    assert read_output(nested(FORBIDDEN, 3)).code == "FORBIDDEN"  # within the depth a model would unwrap


# ---- a field only the caller can know ----------------------------------------------------------

GAP_TOOL = {"type": "function", "name": "save_learning_gap", "description": "Save a learning gap. Changes data.",
            "parameters": {"type": "object", "properties": {
                "topic": {"type": "string"}, "evidence": {"type": "string"}, "suggestion": {"type": "string"},
                "idempotency_key": {"type": "string", "description": "Set by the host application"}},
                "required": ["topic", "evidence", "suggestion", "idempotency_key"]}}  # fmt: skip


def test_a_required_idempotency_key_is_filled_with_a_fresh_deterministic_key():
    from course_lib.offline_model.assistant_calls import _fill

    values = {"topic": "retries", "evidence": "no note", "suggestion": "write one"}
    filled = _fill(GAP_TOOL, values)
    key = filled["idempotency_key"]
    assert list(filled) == ["topic", "evidence", "suggestion", "idempotency_key"]
    assert key.startswith("key-") and len(key) == 28 and 8 <= len(key) <= 128
    assert _fill(GAP_TOOL, values)["idempotency_key"] == key  # the same proposal again: the same key
    assert _fill(GAP_TOOL, {**values, "topic": "backoff"})["idempotency_key"] != key  # another: its own
    optional = {**GAP_TOOL, "parameters": {**GAP_TOOL["parameters"], "required": ["topic"]}}
    assert "idempotency_key" not in _fill(optional, values)  # not required: the model leaves it to the host
    assert _fill(GAP_TOOL, {**values, "idempotency_key": "given-by-host"})["idempotency_key"] == "given-by-host"


@pytest.mark.parametrize("declined", [
    "Tool call was not approved by the user",  # Mastra's default decline
    "Tool execution was not approved.",  # the Agents SDK's
    "The tool call was denied.",  # pydantic-ai's
])  # fmt: skip
def test_a_frameworks_declined_approval_is_read_as_nothing_run_never_as_file_content(declined):
    from course_lib.offline_model.tool_output import read_output

    reading = read_output(declined)
    assert not reading.ok and reading.kind == "FORBIDDEN" and reading.code is None
