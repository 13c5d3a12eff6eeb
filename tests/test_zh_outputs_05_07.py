"""The stored zh-CN outputs of notebooks 05 and 07 speak Chinese where the learner reads (table headers,
labels, a never-run call's trace note), while what the model reads (error messages, tool results) and
wire values (error codes, `retryable`, call_ids, step names) stay as the English edition stores them."""

from __future__ import annotations

import json
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _outputs(path: Path) -> dict[str, str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join("".join(o.get("text", "")) for o in c.get("outputs", [])) for c in cells}


def test_05_the_failure_table_and_the_attempts_table_have_chinese_headers():
    english = _outputs(NOTEBOOKS / "05_errors_and_retries.ipynb")
    chinese = _outputs(NOTEBOOKS / "zh-CN" / "05_errors_and_retries.ipynb")
    assert "call     code           retryable  stopped at  decided by\n" in english["db2df083"]
    assert "调用     错误码         retryable  停在哪一步  由谁判定\n" in chinese["db2df083"]
    for word in ("call ", "code ", "stopped at", "decided by", "the app", "the MCP server"):
        assert word not in chinese["db2df083"], word
    # the codes under the headers are the wire's, letter for letter; the step names are the edition's
    assert "call_5   FORBIDDEN      False      execute     the MCP server" in english["db2df083"]
    assert "call_5   FORBIDDEN      False      执行        MCP 服务器" in chinese["db2df083"]
    assert "允许列表 ✓ → 解析 ✓ → schema ✓ → 权限 ✗ FORBIDDEN" in "".join(chinese.values())
    assert "attempt  waited   ceiling  outcome\n" in english["ff0310a6"]
    assert "尝试     已等待   上限     结局\n" in chinese["ff0310a6"]
    assert "attempt" not in chinese["ff0310a6"] and "ceiling" not in chinese["ff0310a6"]
    assert "停止原因： 它成功了" in chinese["ff0310a6"]
    # what the model reads stays the app's English text
    assert '"message": "search_notes did not answer within 0.1s"' in chinese["f53e36f4"]
    # the jitter demo: the seeds are shown, the waits are the same draws, the labels are Chinese
    assert "every client with seed=0: [0.169, 0.169, 0.169, 0.169, 0.169]" in english["c7f0a002"]
    assert "所有客户端都用 seed=0： [0.169, 0.169, 0.169, 0.169, 0.169] → 它们在同一瞬间一起重试" in chinese["c7f0a002"]
    assert "RetryPolicy() 本身：jitter 1.0 （完全抖动），seed None （新的随机性）" in chinese["c7f0a002"]
    assert "every client" not in chinese["c7f0a002"] and "fresh randomness" not in chinese["c7f0a002"]


def test_07_the_mixed_batch_table_the_trace_note_and_the_raw_texts_are_labelled_in_chinese():
    english = _outputs(NOTEBOOKS / "07_parallel_calls.ipynb")
    chinese = _outputs(NOTEBOOKS / "zh-CN" / "07_parallel_calls.ipynb")
    assert "call_id      tool                outcome            last step\n" in english["1ca519f1"]
    assert "call_id      工具                结局               最后一步\n" in chinese["1ca519f1"]
    assert "last step" not in chinese["1ca519f1"] and "outcome" not in chinese["1ca519f1"]
    assert "call_save    save_note           APPROVAL_REQUIRED  批准" in chinese["1ca519f1"]
    assert "call_notes   fs__read_text_file  成功" in chinese["1ca519f1"] and " OK " not in chinese["1ca519f1"]
    assert "#1 call_A  INVALID_INPUT  (not executed)" in english["aec9fa49"]
    assert "#1 call_A  INVALID_INPUT  （未执行）" in chinese["aec9fa49"]
    assert "(not executed)" not in chinese["aec9fa49"]
    # the refusal the model reads is English in both editions, and labelled as the original text
    refusal = "call_id 'call_A' was already used in this turn with different arguments; not executed"
    assert f"#1 says: {refusal}" in english["aec9fa49"]
    assert f"#1 的错误消息（原文）： {refusal}" in chinese["aec9fa49"]
    assert "call_passwd: path is outside /workspace" in english["a5ee96db"]
    assert "call_passwd 返回的原文：path is outside /workspace" in chinese["a5ee96db"]
