"""Wrong answers to notebook 01's exercises get a message that says what is wrong."""

import copy

from course_lib.exercises.nb01 import SEARCH_NOTES, SOLUTIONS, check_strict_search_notes, check_tool_choices

STRICT = SOLUTIONS["check_strict_search_notes"]()


def _strict(**properties):
    schema = copy.deepcopy(STRICT)
    schema["properties"].update(properties)
    return schema


def test_the_mcp_schema_copied_blindly_is_not_strict(capsys):
    assert check_strict_search_notes(copy.deepcopy(SEARCH_NOTES.input_schema)) is False
    assert capsys.readouterr().out.startswith(
        "✗ Not strict yet: In context=(), 'required' is required to be supplied and to be an array including "
        "every key in properties. Missing 'limit'."
    )


def test_required_without_null_makes_an_optional_property_mandatory(capsys):
    schema = copy.deepcopy(SEARCH_NOTES.input_schema) | {"required": ["query", "limit"], "additionalProperties": False}
    assert check_strict_search_notes(schema) is False
    assert capsys.readouterr().out.startswith("✗ limit was optional: in strict mode the model must always send it")


def test_a_nullable_query_is_named(capsys):
    assert check_strict_search_notes(_strict(query={"type": ["string", "null"]})) is False
    assert capsys.readouterr().out.startswith("✗ query was required: it must not accept null")


def test_a_lost_range_is_named(capsys):
    assert check_strict_search_notes(_strict(limit={"type": ["integer", "null"]})) is False
    assert capsys.readouterr().out.startswith("✗ limit lost its range (1 to 20 in the MCP rule); yours accepts 0")


def test_a_value_written_into_the_rule_is_not_a_schema(capsys):
    assert check_strict_search_notes(_strict(limit=20)) is False
    assert capsys.readouterr().out.startswith(
        "✗ This is not a valid JSON Schema: 20 is not of type 'object', 'boolean' (at properties/limit)."
    )


def test_a_dropped_property_is_named(capsys):
    schema = copy.deepcopy(STRICT)
    del schema["properties"]["limit"]
    schema["required"] = ["query"]
    assert check_strict_search_notes(schema) is False
    assert capsys.readouterr().out.startswith("✗ You dropped the property 'limit'")


def test_required_lets_the_model_pick_the_wrong_tool(capsys):
    assert check_tool_choices({"use_backup": "required", "no_tools": "none"}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ use_backup: with 'required' the model called fs__read_text_file.")
    assert "Name the tool this step needs" in out


def test_the_original_tool_name_is_refused_by_the_api(capsys):
    assert check_tool_choices({"use_backup": {"type": "function", "name": "read_text_file"}, "no_tools": "none"}) is False
    out = capsys.readouterr().out
    assert "Tool choice 'function' with name 'read_text_file' not found in 'tools' parameter." in out
    assert "its alias, prefix included" in out


def test_a_bare_tool_name_is_not_a_mode(capsys):
    assert check_tool_choices({"use_backup": "backup__read_text_file", "no_tools": "none"}) is False
    out = capsys.readouterr().out
    assert "Invalid value: 'backup__read_text_file'. Supported values are: 'auto', 'none', and 'required'." in out


def test_auto_does_not_turn_tools_off(capsys):
    answer = {"use_backup": {"type": "function", "name": "backup__read_text_file"}, "no_tools": "auto"}
    assert check_tool_choices(answer) is False
    assert capsys.readouterr().out.startswith("✗ no_tools: with 'auto' the model still called fs__read_text_file")


def test_allowed_tools_is_another_right_way_to_pick_backup(capsys):
    allowed = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "backup__read_text_file"}]}
    assert check_tool_choices({"use_backup": allowed, "no_tools": "none"}) is True
    assert capsys.readouterr().out.startswith("✓")


def test_an_openapi_nullable_flag_is_named_as_not_json_schema(capsys):
    limit = {"type": "integer", "minimum": 1, "maximum": 20, "nullable": True}
    assert check_strict_search_notes(_strict(limit=limit)) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ limit was optional") and '"nullable": true is OpenAPI, not JSON Schema' in out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_checks_speak_english_by_default_and_chinese_in_the_zh_cn_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_strict_search_notes(...) is False
    assert check_tool_choices({"use_backup": ..., "no_tools": ...}) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: write the strict parameters schema of search_notes as a dict and set strict_search to it.\n"
        "✗ Not answered yet: give a tool_choice for each of use_backup, no_tools.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_strict_search_notes(...) is False
    assert check_tool_choices({"use_backup": "none", "no_tools": ...}) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：把 search_notes 的严格 parameters schema 写成一个 dict，赋给 strict_search。\n"
        "✗ 'no_tools' 还没有作答（这一轮模型必须不调用任何工具就作答）。\n"
    )


def test_a_lost_meaning_and_the_openapi_hint_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_strict_search_notes(_strict(limit={"type": ["integer", "null"]})) is False
    assert capsys.readouterr().out == "✗ limit 丢掉了它的范围（MCP 规则里是 1 到 20）；你的接受 0。\n"
    limit = {"type": "integer", "minimum": 1, "maximum": 20, "nullable": True}
    assert check_strict_search_notes(_strict(limit=limit)) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ limit 原本是可选的：严格模式下模型必须总是发送它")
    assert '"nullable": true 是 OpenAPI 的写法，不是 JSON Schema' in out


def test_tool_choice_messages_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_tool_choices({"use_backup": "required", "no_tools": "none"}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ use_backup：用 'required' 时模型调用了 fs__read_text_file。")
    assert "请点名这一步需要的工具" in out
    assert check_tool_choices({"use_backup": {"type": "function", "name": "read_text_file"}, "no_tools": "none"}) is False
    out = capsys.readouterr().out  # the API's own sentence stays as the API wrote it
    assert "模型 API 拒绝了你的 tool_choice：Tool choice 'function' with name 'read_text_file' not found" in out
    assert "它的别名，包括前缀" in out
    assert check_tool_choices(SOLUTIONS["check_tool_choices"]()) is True
    assert capsys.readouterr().out.startswith("✓ 模型调用了 backup__read_text_file（backup 服务器读取了文件）")


def test_the_pass_message_of_the_strict_schema_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_strict_search_notes(copy.deepcopy(STRICT)) is True
    assert capsys.readouterr().out.startswith("✓ 既严格又忠实：模型 API 在 strict: true 下接受它")
