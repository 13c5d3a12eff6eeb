"""course_lib.show: the compact JSON layout keeps every byte of content, in few lines."""

import json

from hypothesis import given
from hypothesis import strategies as st

from course_lib.show import compact_json, show_json

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=40,
)


@given(JSON, st.integers(min_value=1, max_value=160))
def test_the_compact_layout_is_the_same_json(value, width):
    assert json.loads(compact_json(value, width)) == value


def test_a_line_is_wider_than_the_width_only_for_a_string_that_cannot_be_cut():
    description = "Read a file. " * 20
    body = {"tools": [{"type": "function", "name": "read", "description": description,
                       "parameters": {"properties": {"path": {"type": "string"}}, "required": ["path"]}}]}
    wide = [line for line in compact_json(body, 60).splitlines() if len(line) > 60]
    assert wide == [f'      "description": {json.dumps(description)},']


def test_a_small_container_stays_on_one_line_and_short_members_share_lines():
    body = {"model": "gpt-4.1", "input": [{"role": "user", "content": "hi"}], "store": True, "tools": []}
    assert compact_json(body, 200) == json.dumps(body, separators=(", ", ": "))
    assert compact_json(body, 50).splitlines() == [
        "{",
        '  "model": "gpt-4.1",',
        '  "input": [{"role": "user", "content": "hi"}],',
        '  "store": true, "tools": []',
        "}",
    ]


def test_show_json_compact_prints_the_whole_body_under_its_title(capsys):
    body = {"id": "resp_1", "output": [{"type": "function_call", "arguments": '{"path":"a"}'}]}
    show_json(body, "response 1", compact=True)
    title, *rest = capsys.readouterr().out.splitlines()
    assert title.startswith("── response 1 ")
    assert json.loads("\n".join(rest)) == body
