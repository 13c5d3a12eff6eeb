import mcp_types

from course_lib.declarations import alias_for, strict_schema, strict_schema_problems, to_responses_tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read"},
        "head": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None},
        "tail": {"type": "integer", "description": "Last N lines"},
    },
    "required": ["path"],
    "additionalProperties": False,
}
TOOL = mcp_types.Tool(name="read_text_file", description="Read a file", input_schema=SCHEMA)


def test_alias_keeps_the_original_name_after_the_separator():
    assert alias_for("fs", "read_text_file") == "fs__read_text_file"


def test_responses_tool_copies_the_rule_unchanged_when_not_strict():
    tool = to_responses_tool(TOOL, alias="fs__read_text_file")
    assert tool == {
        "type": "function",
        "name": "fs__read_text_file",
        "description": "Read a file",
        "parameters": SCHEMA,
        "strict": False,
    }
    assert tool["parameters"] is not SCHEMA  # a copy: adapting never edits the server's rule


def test_strict_schema_requires_every_property_and_makes_optional_ones_nullable():
    strict = strict_schema(SCHEMA)
    assert strict["required"] == ["path", "head", "tail"]
    assert strict["additionalProperties"] is False
    assert strict["properties"]["path"] == {"type": "string", "description": "File to read"}
    # already nullable: kept, minus the `default` keyword strict mode refuses
    assert strict["properties"]["head"] == {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
    assert strict["properties"]["tail"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "description": "Last N lines",
    }
    assert strict_schema_problems(strict) == []


def test_strict_schema_problems_names_what_a_blind_copy_lacks():
    problems = strict_schema_problems({"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "number"}}, "required": ["path"]})
    assert problems == [
        "In context=(), 'required' is required to be supplied and to be an array including every key in "
        "properties. Missing 'head'.",
        "In context=(), 'additionalProperties' is required to be supplied and to be false.",
    ]


def test_strict_schema_recurses_into_nested_objects():
    nested = {"type": "object", "properties": {"opts": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    assert strict_schema_problems(nested)[2:] == [  # not strict as given; the nested object is named as the API names it
        "In context=('properties', 'opts'), 'required' is required to be supplied and to be an array including "
        "every key in properties. Missing 'x'.",
        "In context=('properties', 'opts'), 'additionalProperties' is required to be supplied and to be false.",
    ]
    assert strict_schema_problems({"anyOf": [{"type": "object", "properties": {}}]}) == [
        "In context=('anyOf', '0'), 'additionalProperties' is required to be supplied and to be false."]
    assert strict_schema_problems(strict_schema(nested)) == []
