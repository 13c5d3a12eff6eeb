"""The stored zh-CN outputs of notebooks 00, 01 and 02 speak Chinese where the learner reads them.

Read from the executed .ipynb files (as test_translations.py does for the pilot): each label that
was translated appears, its English no longer does, and what is deliberately kept in English (wire
values, field names, the messages a model reads) is still there, letter for letter.
"""

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _outputs(stem: str, edition: str = "zh-CN") -> dict[str, str]:
    folder = NOTEBOOKS / edition if edition else NOTEBOOKS
    cells = json.loads((folder / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join("".join(o.get("text", "")) for o in c.get("outputs", [])) for c in cells
            if c["cell_type"] == "code"}


def _source(stem: str, cell_id: str) -> str:
    cells = json.loads((NOTEBOOKS / "zh-CN" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if c.get("id") == cell_id)


# (cell id, Chinese that must be in its stored output, English that must no longer be)
TRANSLATED = {
    "00_map_and_first_run": [
        ("f637cdf5", "feedback.output == MCP 结果文本:", "MCP result text"),
        ("f637cdf5", "请求 2 的 tools == 请求 1 的 tools:", "tools in request 2"),
        ("c3e0d1a2", "旧证据（反馈在回答中）：", "feedback in answer:"),
        ("c3e0d1a2", "answered_from_feedback：", "answered_from_feedback:"),
    ],
    "01_declaring_tools": [
        ("77b6bce9", "pydantic 原始输出的键:", "raw pydantic keys"),
        ("77b6bce9", "→ 对外发布的键:", "published keys"),
        ("77b6bce9", "字段 path: str, required=True", "field path"),
        ("5e1c7a01", "省略 strict", "strict left out"),
        ("5e1c7a01", "strict 设为 false", "strict: false"),
        ("7bc51923", "发送:     {'path': 'notes.txt'", "sent:"),
        ("3a97e9d0", "发送的工具: strict True", "sent: strict"),
        ("fb532a5e", "含糊的描述:", "vague:"),
        ("0574288a", "── search_notes 的 inputSchema（MCP）", "search_notes inputSchema (MCP)"),
    ],
    "02_parsing_arguments": [
        ("e398fcbd", "解析后：   dict", "parsed:"),
        ("e398fcbd", "校验后：   ReadTextFileArgs", "validated:"),
        ("9633694e", "读取次数： 1", "reads:"),
        ("9633694e", "截断的 JSON          INVALID_INPUT", "cut-off JSON"),
        ("df5dc305", "朴素写法 崩溃：TypeError      | 我们的", "naive"),
    ],
}

# (cell id, English kept on purpose: wire values, field names, text the model reads)
KEPT = {
    "00_map_and_first_run": [("f637cdf5", "feedback.call_id == call.call_id:        True")],
    "01_declaring_tools": [
        ("7bc51923", "isError:  False"),
        ("7bc51923", "工具返回: received path='notes.txt' head=5 (int)"),  # the tool's own result text
        ("4d15adc9", "In context=(), 'required' is required"),  # the model API's own words
    ],
    "02_parsing_arguments": [
        ("9633694e", "INVALID_INPUT: head: expected an integer (got string)"),  # read by the model
        ("df5dc305", "✗ head 0 "),  # a value, not a word
    ],
}


@pytest.mark.parametrize("stem", sorted(TRANSLATED))
def test_translated_labels_are_in_the_stored_zh_outputs_and_their_english_is_gone(stem):
    outputs = _outputs(stem)
    for cell_id, chinese, english in TRANSLATED[stem]:
        assert chinese in outputs[cell_id], (stem, cell_id, chinese)
        assert english not in outputs[cell_id], (stem, cell_id, english)


@pytest.mark.parametrize("stem", sorted(KEPT))
def test_wire_values_and_model_read_text_stay_as_they_are(stem):
    outputs = _outputs(stem)
    for cell_id, kept in KEPT[stem]:
        assert kept in outputs[cell_id], (stem, cell_id, kept)


def test_the_english_edition_still_prints_the_english_labels():
    english = _outputs("02_parsing_arguments", edition="")
    assert "parsed:    dict" in english["e398fcbd"] and "\nreads: 1 (still the one real read" in english["9633694e"]
    assert "cut-off JSON         INVALID_INPUT" in english["9633694e"]  # pad() is ljust for English
    assert "✗ head 5 then 20  naive returned 20 lines    | ours" in english["df5dc305"]
    assert "raw pydantic keys:" in _outputs("01_declaring_tools", edition="")["77b6bce9"]


def test_chinese_rows_line_up_by_display_width():
    from course_lib.lang import display_width

    rows = _outputs("02_parsing_arguments")["9633694e"].splitlines()
    starts = {display_width(row.split("INVALID_INPUT")[0]) for row in rows if "INVALID_INPUT" in row}
    assert starts == {21}  # 20 columns of label, one space, whatever the label's script


def test_comments_and_docstrings_of_the_twins_are_chinese():
    assert "# 那次请求携带了这次调用的反馈" in _source("00_map_and_first_run", "85ba258f")
    assert '"""原样返回这个工具收到的参数；它不读取任何文件。"""' in _source("01_declaring_tools", "412c5ad2")
    assert "# 没有解析器的检查，也没有规则" in _source("02_parsing_arguments", "4d3edefa")
