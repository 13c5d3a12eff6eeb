"""The stored outputs of the zh-CN twins of notebooks 04, 04b and 04c: the labels a learner reads are
Chinese (the ids line, the field labels, the stream's row words, the finish labels),
while the wire values, ids and field names next to them stay exactly as they are, and the English
notebooks keep their English words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
FEEDBACK, STREAMING, ENVELOPES = ("04_feedback_loop", "04b_streaming_the_call_arrives_in_pieces",
                                  "04c_the_same_call_in_other_envelopes")  # fmt: skip


def outputs(path: Path) -> dict[str, str]:
    """Cell id → the text of its stored stream outputs."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join("".join(o.get("text", "")) for o in c.get("outputs", [])) for c in cells}


@pytest.fixture(scope="module")
def zh() -> dict[str, dict[str, str]]:
    return {stem: outputs(NOTEBOOKS / "zh-CN" / f"{stem}.ipynb") for stem in (FEEDBACK, STREAMING, ENVELOPES)}


@pytest.fixture(scope="module")
def en() -> dict[str, dict[str, str]]:
    return {stem: outputs(NOTEBOOKS / f"{stem}.ipynb") for stem in (FEEDBACK, STREAMING, ENVELOPES)}


def test_04_the_ids_line_speaks_chinese_the_ids_stay(zh, en):
    line = zh[FEEDBACK]["bb1ef78a"].splitlines()[-1]
    assert line.startswith("这段对话的 call_id： call_") and "| 请求 1 的： call_" in line
    assert "conversation" not in zh[FEEDBACK]["bb1ef78a"]
    assert en[FEEDBACK]["bb1ef78a"].splitlines()[-1].startswith("this conversation's call_id: call_")


def test_04_field_labels_and_the_server_log_are_chinese_the_field_names_stay(zh, en):
    out = zh[FEEDBACK]
    assert out["2ccb7364"].startswith("字段:    ['type', 'call_id', 'output']") and "output:  str 共" in out["2ccb7364"]
    assert out["aa750adf"].startswith("根字段: ['model', 'input', 'tools']")
    assert "回答: None" in out["6c82d06c"] and "answer:" not in out["6c82d06c"]
    assert "MCP id 13，1549 个字符" in out["78e8bcb6"] and "chars" not in out["78e8bcb6"]
    assert "root fields:" in en[FEEDBACK]["aa750adf"] and "1549 chars" in en[FEEDBACK]["78e8bcb6"]


def test_04b_the_stream_rows_speak_chinese_the_event_names_stay(zh, en):
    out = zh[STREAMING]
    assert " 3  response.function_call_arguments.delta   第 0 项   '{\"'" in out["76138aaf"]
    assert "item 0" not in out["76138aaf"]
    assert " 2  宣告   output_index 0  id fc_" in out["49131f04"] and "16  完成   output_index 0  item_id fc_" in out["49131f04"]
    assert "added" not in out["49131f04"] and "done " not in out["49131f04"]
    assert out["d97e785b"].rstrip().endswith("(已完成)") and "(done)" not in out["24247208"]
    assert " 2  added  output_index 0" in en[STREAMING]["49131f04"] and "(done)" in en[STREAMING]["24247208"]


def test_04c_the_finish_labels_are_chinese_the_wire_values_stay(zh, en):
    out = zh[ENVELOPES]
    assert out["c10"].startswith("Chat 的 finish_reason: tool_calls\nMessages 的 stop_reason: tool_use\n")
    assert "('user', '字符串')" in out["c12"] and "('assistant', ['tool_use'])" in out["c12"]
    assert en[ENVELOPES]["c10"].startswith("Chat finish_reason: tool_calls\n") and "('user', 'text')" in en[ENVELOPES]["c12"]
