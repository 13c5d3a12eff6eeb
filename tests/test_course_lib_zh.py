"""The lines course_lib prints for the learner in nearly every notebook, in both editions: the
English exactly as the stored English outputs show it, and Chinese in the zh-CN edition
(`COURSE_LANG=zh-CN`, as a kernel in `notebooks/zh-CN` gets), with the values themselves
(`status`, ids, error codes, checks a drill answer names) unchanged."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from course_lib import backend, failure_table, http_show, show, side_by_side, verify
from course_lib.connection import Exchange, HttpExchange
from course_lib.course import start_course
from course_lib.loop import LoopResult, TraceLink
from course_lib.paths import fixtures_dir
from course_lib.side_by_side import Row




@pytest.fixture
def offline(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("COURSE_MODEL", raising=False)


# ---- backend: the first line of every notebook ---------------------------------------------------


def test_the_backend_line_in_english_is_unchanged(en, offline):
    assert backend.describe_backend() == \
        "Backend: offline model (deterministic, in-process, no network); model name 'gpt-4.1'."  # fmt: skip


def test_the_backend_line_in_chinese(zh, offline, monkeypatch):
    assert backend.describe_backend() == "后端：离线模型（确定性，在进程内运行，不联网）；模型名 'gpt-4.1'。"
    secret = "sk-test-do-not-print-1234"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://user:{secret}@llm.example.com:8443/v1?key={secret}")
    assert backend.describe_backend() == "后端：真实端点 llm.example.com:8443；模型名 'gpt-4.1'。"


def test_start_course_prints_the_backend_line_of_the_edition(zh, offline, capsys):
    course = start_course()
    try:
        assert capsys.readouterr().out == "后端：离线模型（确定性，在进程内运行，不联网）；模型名 'gpt-4.1'。\n"
    finally:
        course.close()


def _not_found(check: httpx.BaseTransport) -> str:
    with openai.OpenAI(api_key="k", base_url="http://llm.example.com/v1", max_retries=0,
                       http_client=httpx.Client(transport=check)) as client:  # fmt: skip
        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.create(model="gpt-3.5-turbo-0301", input="hi")
    return caught.value.body["message"]


def test_the_unknown_model_line_in_both_editions(monkeypatch):
    said = {"error": {"message": "The model `gpt-3.5-turbo-0301` does not exist", "code": "model_not_found"}}
    upstream = httpx.MockTransport(lambda request: httpx.Response(404, json=said))
    check = backend._ModelCheck(upstream, "gpt-3.5-turbo-0301")
    monkeypatch.setenv("COURSE_LANG", "en")
    assert _not_found(check) == (
        "Model 'gpt-3.5-turbo-0301' was asked for, but the endpoint llm.example.com does not serve it (retired, "
        "mistyped, or not pulled on a local server). Set COURSE_MODEL to a model it lists (`client.models.list()`), "
        "e.g. `%env COURSE_MODEL=<name>` in the first cell, then restart the kernel. "
        "(The endpoint said: The model `gpt-3.5-turbo-0301` does not exist)")
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    message = _not_found(check)
    assert message.startswith("请求的模型是 'gpt-3.5-turbo-0301'，但端点 llm.example.com 不提供它")
    assert "把 COURSE_MODEL 设为它列出的某个模型" in message and "`%env COURSE_MODEL=<name>`" in message
    assert message.endswith("（端点的原话：The model `gpt-3.5-turbo-0301` does not exist）")
    assert backend.unknown_model_line("m", "h", "COURSE_ANTHROPIC_MODEL").count("COURSE_ANTHROPIC_MODEL") == 2


# ---- show: traces, exchanges, long JSON ---------------------------------------------------------

TRACE = LoopResult(status="incomplete", answer=None, reason="max_steps", steps=2, trace=[
    TraceLink("call_1", "fs__read_text_file", '{"path":"notes.txt"}', server="fs", tool="read_text_file", mcp_id=3),
    TraceLink("call_2", "nope__tool", "{}", error_code="UNKNOWN_TOOL"),
])


def test_show_trace_in_english_is_unchanged(en, capsys):
    show.show_trace(TRACE)
    show.show_trace(LoopResult(status="completed", answer="hi", reason=None, steps=1))
    assert capsys.readouterr().out == (
        "status: incomplete   reason: max_steps   model requests: 2\n"
        '  call_1  fs__read_text_file {"path":"notes.txt"}  →  fs/read_text_file  MCP id 3  →  ok\n'
        "  call_2  nope__tool {}  →  (not routed)  no MCP request  →  error UNKNOWN_TOOL\n"
        "status: completed   reason: None   model requests: 1\n"
        "(no tool calls)\n")


def test_show_trace_in_chinese_keeps_the_values(zh, capsys):
    show.show_trace(TRACE)
    show.show_trace(LoopResult(status="completed", answer="hi", reason=None, steps=1))
    assert capsys.readouterr().out == (
        "status: incomplete   reason: max_steps   模型请求数: 2\n"
        '  call_1  fs__read_text_file {"path":"notes.txt"}  →  fs/read_text_file  MCP id 3  →  成功\n'
        "  call_2  nope__tool {}  →  （未路由）  没有 MCP 请求  →  出错 UNKNOWN_TOOL\n"
        "status: completed   reason: None   模型请求数: 1\n"
        "（没有工具调用）\n")


def test_show_exchange_titles_in_both_editions(monkeypatch, capsys):
    exchange = Exchange({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 7, "result": {}})
    monkeypatch.setenv("COURSE_LANG", "en")
    show.show_exchange(exchange)
    english = capsys.readouterr().out.splitlines()
    assert [line for line in english if line.startswith("──")] == [
        "── app → server  (JSON-RPC id 7) " + "─" * 31, "── server → app  (JSON-RPC id 7) " + "─" * 31]
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    show.show_exchange(exchange)
    chinese = capsys.readouterr().out.splitlines()
    assert [line.rstrip("─ ") for line in chinese if line.startswith("──")] == [
        "── 应用 → 服务器（JSON-RPC id 7）", "── 服务器 → 应用（JSON-RPC id 7）"]
    assert [line for line in chinese if not line.startswith("──")] == [line for line in english if not line.startswith("──")]


def test_show_json_says_how_many_lines_were_left_out(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    show.show_json(list(range(10)), limit=3)
    assert capsys.readouterr().out == "[\n  0,\n  1,\n… (9 more lines)\n"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    show.show_json(list(range(10)), limit=3)
    assert capsys.readouterr().out == "[\n  0,\n  1,\n…（还有 9 行）\n"


# ---- http_show: an exchange over Streamable HTTP ------------------------------------------------


def _http(status: int, content_type: str | None, body=None) -> HttpExchange:
    headers = {"content-type": content_type} if content_type else {}
    return HttpExchange("POST", "/mcp", {"accept": "application/json, text/event-stream"},
                        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, status, headers, body)  # fmt: skip


def test_http_show_exchange_in_both_editions(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    http_show.show_exchange(_http(200, "text/event-stream"))
    http_show.show_exchange(_http(202, None), bodies=False)
    assert capsys.readouterr().out == (
        "POST /mcp  →  200 text/event-stream\n"
        "  > accept: application/json, text/event-stream\n"
        '  > body {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
        "  < body: an SSE stream (its JSON-RPC messages are in conn.messages)\n"
        "POST /mcp  →  202 (no body)\n"
        "  > accept: application/json, text/event-stream\n")
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    http_show.show_exchange(_http(200, "text/event-stream"))
    http_show.show_exchange(_http(202, None), bodies=False)
    out = capsys.readouterr().out
    assert "  < body：一个 SSE 流（其中的 JSON-RPC 消息在 conn.messages 里）\n" in out
    assert "POST /mcp  →  202 （没有报文体）\n" in out and "an SSE stream" not in out
    assert '  > body {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n' in out  # the wire stays as it was


# ---- failure_table: notebook 10's table of symptoms ---------------------------------------------


def test_the_failure_table_in_english_is_unchanged(en, capsys):
    failure_table.show_diagnosis_table()
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["A  answers without calling a tool, and makes things up  (不调用工具就编答案)",
                         "   likely cause: the tool's description is unclear, or the instructions let the model guess",
                         "   check first:  call trace · when-to-use conditions · eval samples"]  # fmt: skip
    assert len(lines) == 24


def test_the_failure_table_in_chinese_keeps_each_check_a_drill_answer_names(zh, capsys):
    failure_table.show_diagnosis_table()
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["A  不调用工具就编答案", "   可能的原因：工具描述不清楚，或者指令让模型去猜",
                         "   先检查：call trace（调用轨迹） · when-to-use conditions（何时使用的条件） · eval samples（评估样例）"]  # fmt: skip
    assert "   先检查：call_id · output structure（输出结构） · full context（完整上下文）" in lines
    assert set(failure_table.CAUSES_ZH) == set(failure_table.ROWS)
    assert set(failure_table.CHECKS_ZH) == {check for row in failure_table.DIAGNOSIS_ROWS for check in row.checks}
    for row in failure_table.DIAGNOSIS_ROWS:  # every check still printed as the drill wants it written
        assert all(f"{check}" in "\n".join(lines) for check in row.checks) and row.cause not in "\n".join(lines)


def test_the_chinese_lines_print_no_english_prose(zh, offline, capsys):
    show.show_trace(TRACE)
    failure_table.show_diagnosis_table()
    out = capsys.readouterr().out + backend.describe_backend()
    for english in ("model requests", "not routed", "no MCP request", "likely cause", "check first", "Backend"):
        assert english not in out


# ---- side_by_side: notebook 03b's table ---------------------------------------------------------

ROWS = [Row("whole file · todo.md", {}, "8 lines", "8 lines"), Row("head 3", {}, "3 lines", "3 lines, no final newline"),
        Row("missing file", {}, "error: NOT_FOUND", "error: ENOENT"), Row("head 2.5", {}, "protocol error -32602", "1 line")]


def test_the_side_by_side_table_in_english_is_unchanged(en):
    assert side_by_side.table(ROWS).splitlines() == [
        "case                  ours                   reference                  same?",
        "-" * 77,
        "whole file · todo.md  8 lines                8 lines                    yes",
        "head 3                3 lines                3 lines, no final newline  no",
        "missing file          error: NOT_FOUND       error: ENOENT              no",
        "head 2.5              protocol error -32602  1 line                     no"]


def test_the_side_by_side_table_in_chinese_lines_up_its_columns(zh):
    lines = side_by_side.table(ROWS).splitlines()
    assert lines == [
        "情形                我们的           参考服务器          相同？",
        "-" * 63,
        "整个文件 · todo.md  8 行             8 行                是",
        "head 3              3 行             3 行，结尾没有换行  否",
        "不存在的文件        错误：NOT_FOUND  错误：ENOENT        否",
        "head 2.5            协议错误 -32602  1 行                否"]
    starts = {side_by_side.display_width(line[:line.index(cell)]) for line, cell in zip(lines[2:], ("8 行", "3 行", "错误", "协议"))}
    assert starts == {20}  # the second column starts at the same screen column on every row
    assert [row.ours for row in ROWS][0] == "8 lines"  # the rows' values stay English: `agree` compares them


# ---- verify: notebook 04's link-by-link check of a recorded round trip ---------------------------


def _roundtrip_with_a_wrong_call_id() -> dict:
    recorded = json.loads((fixtures_dir() / "responses_roundtrip.json").read_text(encoding="utf-8"))
    for item in recorded["request_2"]["input"]:
        if item.get("type") == "function_call_output":
            item["call_id"] = "call_someone_else"
    return recorded


def test_verify_findings_in_english_are_unchanged(en):
    findings = verify.check_roundtrip(_roundtrip_with_a_wrong_call_id())
    assert str(findings[0]) == "ok   the first response holds a function_call"
    assert str(next(f for f in findings if not f.ok)) == (
        "FAIL call and feedback call_ids pair: feedback call_id 'call_someone_else' does not match call_id "
        f"{_call_id()!r}")


def test_verify_findings_in_chinese(zh):
    findings = verify.check_roundtrip(_roundtrip_with_a_wrong_call_id())
    assert str(findings[0]) == "通过 第一个响应里有一个 function_call"
    assert str(next(f for f in findings if not f.ok)) == \
        f"失败 调用与反馈的 call_id 成对：反馈的 call_id 'call_someone_else' 与调用的 call_id {_call_id()!r} 不一致"  # fmt: skip
    assert [f.link for f in findings if not f.ok][0] == "call and feedback call_ids pair"  # the key stays English
    assert set(verify.LINKS_ZH) == {f.link for f in findings}
    fragments = json.loads((fixtures_dir() / "field_fragments.json").read_text(encoding="utf-8"))
    fragments["function_call"]["arguments"] = {"path": "notes.txt"}
    text = "\n".join(str(f) for f in verify.check_fields(fragments) if not f.ok)
    assert "失败 模型的参数是 JSON 文本：function_call.arguments 必须是 JSON 文本，却是 dict" in text
    assert "must" not in text


def _call_id() -> str:
    recorded = json.loads((fixtures_dir() / "responses_roundtrip.json").read_text(encoding="utf-8"))
    return next(i for i in recorded["response_1"]["output"] if i["type"] == "function_call")["call_id"]
