"""The stored outputs of the zh-CN twins of 03, 03b and 03c: the labels a learner reads are Chinese.

Read from the stored notebooks (as tests/test_translations.py does for the pilot): each label
translated in this pass is in its cell's output, and its English is not. What stays English there
(wire names, tool results, server and SDK messages) is not asserted away.
"""

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def outputs(name: str, edition: str = "zh-CN") -> dict[str, str]:
    folder = NOTEBOOKS / edition if edition else NOTEBOOKS
    cells = json.loads((folder / name).read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join("".join(o.get("text", "")) for o in c.get("outputs", [])) for c in cells
            if c["cell_type"] == "code"}


# (notebook, cell id, Chinese that must be there, English that must be gone)
CASES = [
    ("03_calling_mcp_server.ipynb", "33cc86c4", "模型 → 应用    function_call.call_id        : call_", "model → app"),
    ("03_calling_mcp_server.ipynb", "33cc86c4", "应用 → 服务器  tools/call 请求 id           : ", "request id"),
    ("03_calling_mcp_server.ipynb", "33cc86c4", "服务器 → 应用  响应 id                      : ", "response id"),
    ("03_calling_mcp_server.ipynb", "7da093d3", "fs   发送： {'name': 'read_text_file'", "sent:"),
    ("03_calling_mcp_server.ipynb", "7da093d3", "arch 回答： Archived notes from last year.", "answered:"),
    ("03_calling_mcp_server.ipynb", "8a58bbf1", "| declaration.input_schema == 线上的 inputSchema： True", "wire inputSchema"),
    ("03_calling_mcp_server.ipynb", "8a58bbf1", "工具： read_text_file", "tool:"),
    ("03_calling_mcp_server.ipynb", "d3fa0a71", "协议： 2026-07-28 | initialize 的结果： None", "protocol:"),
    ("03_calling_mcp_server.ipynb", "f803f14e", "每个结果的 resultType： ['complete', 'complete', 'complete']", "of each result"),
    ("03b_reference_server_side_by_side.ipynb", "563a1c06", "在 SDK 的默认模式下： ['server/discover', 'initialize'", "default mode"),
    ("03_calling_mcp_server.ipynb", "a5979d24", "MCPError：错误码 -32602，Unknown tool: delete_file", ": code"),
    ("03_calling_mcp_server.ipynb", "25070ee1", "✗ ValidationError，出在 CallToolRequestParams.arguments：", "ValidationError in"),
    ("03b_reference_server_side_by_side.ipynb", "fc8e8ed1", "ref 发送： {'name': 'read_text_file'", "sent:"),
    ("03b_reference_server_side_by_side.ipynb", "fc8e8ed1", "fs  回答： A tool call", "answered:"),
    ("03b_reference_server_side_by_side.ipynb", "623cb71f", "  已暴露   read_text_file            只读", "exposed"),
    ("03b_reference_server_side_by_side.ipynb", "e6557791",
     "additionalProperties  参考服务器：（没有）                                    我们的：False", "(absent)"),
    ("03b_reference_server_side_by_side.ipynb", "f0f5f93e", "命令： <repo>/", "command:"),
    ("03b_reference_server_side_by_side.ipynb", "ca8a1402", "工具： read_text_file | required: ['path']", "tool:"),
    ("03b_reference_server_side_by_side.ipynb", "a6b05e81", "不存在的文件 · missing.txt", "missing file"),
    ("03c_remote_servers_over_http.ipynb", "92ed03ae", "一个客户端已用 DELETE 结束的 2025-11-25 会话： ['POST initialize", "ended with"),
    ("03c_remote_servers_over_http.ipynb", "92ed03ae", "一个使用中的 2025-11-25 会话：", "session in use"),
    ("03c_remote_servers_over_http.ipynb", "60e321eb", "未知的会话               404  -32600  Session not found", "an unknown session"),
    ("03c_remote_servers_over_http.ipynb", "60e321eb", "5 MiB 的报文体           413", "a 5 MiB body"),
    ("03c_remote_servers_over_http.ipynb", "9c1491dc", "自己的源： 200", "own origin"),
]


@pytest.mark.parametrize(("name", "cell", "chinese", "english"), CASES, ids=[f"{n[:3]}-{c}-{e}" for n, c, _, e in CASES])
def test_the_label_is_chinese_in_the_stored_output(name, cell, chinese, english):
    text = outputs(name)[cell]
    assert chinese in text
    assert english not in text
    assert english in outputs(name, "")[cell]  # the English edition still says it


def test_the_padded_columns_line_up_in_the_chinese_tables():
    from course_lib.lang import display_width

    table = outputs("03c_remote_servers_over_http.ipynb")["60e321eb"].splitlines()
    assert {display_width(line[: line.index(" 4")]) for line in table} == {24}
    tools = outputs("03b_reference_server_side_by_side.ipynb")["623cb71f"].splitlines()[1:]
    assert {display_width(line[: line.index("read_")]) for line in tools[:3]} == {11}  # "-" and 已暴露 alike
