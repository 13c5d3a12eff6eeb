"""Parsing the model's arguments text by hand, and the rule of read_text_file."""

from __future__ import annotations

import json

import jsonschema
import pytest

from course_lib.arguments import (
    MAX_ARGUMENTS_CHARS,
    MAX_DEPTH,
    ArgumentsError,
    ReadTextFileArgs,
    input_schema,
    parse_arguments_text,
    parse_read_args,
    validate_arguments,
    validate_read_args,
)
from course_lib.fs_server import Workspace


def refusal(func, value) -> str:
    """Call `func(value)`, expect an ArgumentsError, and return its message."""
    with pytest.raises(ArgumentsError) as caught:
        func(value)
    assert caught.value.code == "INVALID_INPUT"
    assert str(caught.value) == caught.value.message
    assert "Traceback" not in caught.value.message
    return caught.value.message


# --- parse_arguments_text: refusals -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"path": "/workspace/notes.txt"}, "arguments must be JSON text, got an object"),
        ([1], "arguments must be JSON text, got an array"),
        (None, "arguments must be JSON text, got null"),
        (20, "arguments must be JSON text, got an integer"),
        (b'{"path": "x"}', "arguments must be JSON text, got bytes"),
    ],
)
def test_not_text_is_refused(value, expected):
    assert refusal(parse_arguments_text, value) == expected


def test_size_cap_is_checked_before_parsing():
    # Invalid JSON, yet the message is about size: the parser never saw it.
    text = "{" * (MAX_ARGUMENTS_CHARS + 1)
    message = refusal(parse_arguments_text, text)
    assert message == f"arguments text is too long: {MAX_ARGUMENTS_CHARS + 1} characters (limit {MAX_ARGUMENTS_CHARS})"


def test_text_at_the_cap_is_accepted():
    text = json.dumps({"path": "x" * (MAX_ARGUMENTS_CHARS - 12)})
    assert len(text) == MAX_ARGUMENTS_CHARS
    assert parse_arguments_text(text)["path"].startswith("xxx")


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_refused(text):
    assert refusal(parse_arguments_text, text) == "arguments text is empty: expected a JSON object"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"path": "x"', "(line 1, column 13)"),
        ('{"path": "x",\n "head": 5,}', "(line 2, column 12)"),
        ("{'path': 'x'}", "(line 1, column 2)"),
        ('{"path": x}', "(line 1, column 10)"),
    ],
)
def test_invalid_json_says_where(text, where):
    message = refusal(parse_arguments_text, text)
    assert message.startswith("arguments are not valid JSON: ")
    assert message.endswith(where)


def test_duplicate_keys_are_refused():
    message = refusal(parse_arguments_text, '{"path": "a.txt", "head": 5, "head": 20}')
    assert message == "duplicate key 'head' in arguments"


def test_duplicate_keys_in_nested_objects_are_refused():
    assert refusal(parse_arguments_text, '{"a": {"b": 1, "b": 2}}') == "duplicate key 'b' in arguments"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_constants_are_refused(token):
    message = refusal(parse_arguments_text, f'{{"path": "x", "head": {token}}}')
    assert message == f"{token} is not allowed: JSON numbers must be finite"


def test_overflowing_number_is_refused():
    message = refusal(parse_arguments_text, '{"head": 1e999}')
    assert message == "number '1e999' is out of range: JSON numbers must be finite"


def test_very_long_integer_is_refused():
    message = refusal(parse_arguments_text, '{"head": ' + "9" * 200 + "}")
    assert message == "integer is too long (more than 100 digits)"


def test_nesting_deeper_than_max_depth_is_refused():
    deep = '{"a": ' * MAX_DEPTH + "1" + "}" * MAX_DEPTH
    assert parse_arguments_text(deep)["a"]  # exactly MAX_DEPTH levels: fine
    too_deep = '{"a": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)
    assert refusal(parse_arguments_text, too_deep) == f"arguments are nested too deeply (more than {MAX_DEPTH} levels)"


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"path": "[" * 100 + '\\"{' * 50})
    assert parse_arguments_text(text)["path"].startswith("[[[")


def test_deep_arrays_do_not_reach_the_recursion_limit():
    assert "nested too deeply" in refusal(parse_arguments_text, "[" * 5000 + "]" * 5000)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[1, 2]", "an array"), ('"x"', "a string"), ("5", "an integer"), ("5.5", "a number"),
     ("true", "a boolean"), ("null", "null")],
)
def test_top_level_must_be_an_object(text, kind):
    assert refusal(parse_arguments_text, text) == f"expected a JSON object, got {kind}"


@pytest.mark.parametrize(
    ("text", "where"),
    [('{"path": "x"} {"path": "y"}', "(line 1, column 15)"), ('{"path": "x"}\n]', "(line 2, column 1)")],
)
def test_trailing_data_is_refused(text, where):
    assert refusal(parse_arguments_text, text) == f"unexpected data after the JSON value {where}"


def test_long_values_are_not_echoed_back():
    key = "k" * 500
    message = refusal(parse_arguments_text, json.dumps({key: 1})[:-1] + f', "{key}": 2}}')
    assert len(message) < 80
    assert key not in message


# --- parse_arguments_text: accepted ---------------------------------------------------------


def test_whitespace_around_the_object_is_fine():
    assert parse_arguments_text(' \n{"path": "/workspace/notes.txt", "head": 20}\n ') == {
        "path": "/workspace/notes.txt",
        "head": 20,
    }


def test_parsing_keeps_types_as_written():
    # Parsing is not validation: "5" stays a string until the rule looks at it.
    assert parse_arguments_text('{"path": "x", "head": "5", "tail": 5.0}') == {"path": "x", "head": "5", "tail": 5.0}


# --- the rule: validate_read_args ------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({}, "path: required"),
        ({"head": 5}, "path: required"),
        ({"path": None}, "path: expected a string (got null)"),
        ({"path": 7}, "path: expected a string (got integer)"),
        ({"path": "x", "head": "5"}, "head: expected an integer (got string)"),
        ({"path": "x", "head": 5.5}, "head: expected an integer (got number)"),
        ({"path": "x", "head": True}, "head: expected an integer (got boolean)"),
        ({"path": "x", "tail": [3]}, "tail: expected an integer (got array)"),
        ({"path": "x", "head": 0}, "head: must be ≥ 1 (got 0)"),
        ({"path": "x", "tail": -2}, "tail: must be ≥ 1 (got -2)"),
        ({"path": "x", "lines": 3}, "unknown property 'lines' (allowed: path, head, tail)"),
        ({"path": "x", "head": 1, "tail": 2}, "Cannot specify both head and tail parameters simultaneously"),
    ],
)
def test_rule_refusals(obj, expected):
    assert refusal(validate_read_args, obj) == expected


def test_every_problem_is_listed():
    message = refusal(validate_read_args, {"head": "20", "tail": 0, "lines": 3})
    assert message == (
        "path: required; head: expected an integer (got string); tail: must be ≥ 1 (got 0); "
        "unknown property 'lines' (allowed: path, head, tail)"
    )


def test_head_zero_with_tail_is_a_range_error_not_a_truthiness_pass():
    # The reference server's `head && tail` would let this through and read the tail.
    assert refusal(validate_read_args, {"path": "x", "head": 0, "tail": 3}) == "head: must be ≥ 1 (got 0)"


def test_unknown_property_name_is_truncated():
    message = refusal(validate_read_args, {"path": "x", "z" * 300: 1})
    assert "z" * 60 not in message
    assert message.startswith("unknown property 'zzz")


def test_non_object_is_refused():
    assert refusal(validate_read_args, ["path"]) == "expected a JSON object, got an array"


@pytest.mark.parametrize(
    ("obj", "head", "tail"),
    [
        ({"path": "/workspace/notes.txt", "head": 20}, 20, None),
        ({"path": "notes.txt", "tail": 3}, None, 3),
        ({"path": "notes.txt", "head": None, "tail": None}, None, None),
        ({"path": "notes.txt", "head": 5, "tail": None}, 5, None),
        ({"path": "notes.txt"}, None, None),
    ],
)
def test_valid_arguments(obj, head, tail):
    args = validate_read_args(obj)
    assert (args.path, args.head, args.tail) == (obj["path"], head, tail)


def test_parse_read_args_parses_then_validates():
    assert parse_read_args('{"path": "/workspace/notes.txt", "head": 20}') == ReadTextFileArgs(
        path="/workspace/notes.txt", head=20
    )
    assert refusal(parse_read_args, '{"path": "x", "head": "20"}') == "head: expected an integer (got string)"
    assert refusal(parse_read_args, {"path": "x"}) == "arguments must be JSON text, got an object"


# --- the published schema --------------------------------------------------------------------


def test_input_schema_shape():
    assert input_schema() == {
        "type": "object",
        "additionalProperties": False,
        "required": ["path"],
        "properties": {
            "path": {
                "type": "string",
                "description": "Path of the file to read, e.g. /workspace/notes.txt (or relative to /workspace)",
            },
            "head": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": None,
                "description": "If provided, returns only the first N lines of the file",
            },
            "tail": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": None,
                "description": "If provided, returns only the last N lines of the file",
            },
        },
    }


def test_input_schema_is_valid_json_schema_and_agrees_with_the_model():
    schema = input_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert "title" not in json.dumps(schema)
    assert validator.is_valid({"path": "x", "head": 5, "tail": None})
    for bad in ({"path": "x", "head": "5"}, {"path": "x", "head": 0}, {"path": "x", "lines": 1}, {"head": 1}):
        assert not validator.is_valid(bad)
        with pytest.raises(ArgumentsError):
            validate_read_args(bad)


# The rule-and-check agreement notebooks 01, 02 and 03b teach: one verdict per value, whoever judges.
NUMBERS = [20, 20.0, 1e2, 1.0, 20.5, 0, 0.0, -3, -3.0, "20", True, False, None, [20], 1e300]


@pytest.mark.parametrize("value", NUMBERS, ids=repr)
@pytest.mark.parametrize("field", ["head", "tail"])
def test_the_published_rule_and_the_check_agree_on_every_number(field, value):
    # JSON Schema's "integer" is any number with a zero fractional part, so 20.0 and 1e2 are integers.
    obj = {"path": "x", field: value}
    published = jsonschema.Draft202012Validator(input_schema()).is_valid(obj)
    try:
        checked = getattr(validate_read_args(obj), field)
    except ArgumentsError:
        checked = "refused"
    assert (checked != "refused") == published, f"{obj}: schema says {published}, the check gave {checked!r}"
    if published and value is not None:
        assert type(checked) is int and checked == value  # 20.0 arrives as the integer 20


def test_integral_numbers_in_the_arguments_text_become_integers():
    assert parse_read_args('{"path": "x", "head": 20.0}').head == 20
    assert parse_read_args('{"path": "x", "tail": 1e2}').tail == 100
    assert refusal(parse_read_args, '{"path": "x", "head": 2.5}') == "head: expected an integer (got number)"


# --- parsing executes nothing ----------------------------------------------------------------


def test_parsing_and_validating_read_no_file(tmp_path):
    workspace = Workspace(tmp_path)
    (tmp_path / "notes.txt").write_text("one\n")
    args = parse_read_args('{"path": "/workspace/notes.txt", "head": 20}')
    assert args.head == 20
    # Even a path the server would refuse is just a string at this stage.
    assert parse_read_args('{"path": "/etc/passwd"}').path == "/etc/passwd"
    assert workspace.reads == 0


@pytest.mark.parametrize("value", [5, 5.0, 2e1, 5.5, "5", True, 0, 21.0], ids=repr)
def test_search_notes_limit_agrees_with_its_published_rule_too(value):
    from course_lib.notes_server import SearchNotesArgs

    obj = {"query": "retries", "limit": value}
    published = jsonschema.Draft202012Validator(SearchNotesArgs.model_json_schema()).is_valid(obj)
    try:
        checked = validate_arguments(SearchNotesArgs, obj).limit
    except ArgumentsError:
        checked = "refused"
    assert (checked != "refused") == published, f"{obj}: schema says {published}, the check gave {checked!r}"
