"""Wrong answers to notebook 04's exercises get a message that says what is wrong."""

import json

from course_lib.exercises.nb04 import check_final_text, check_second_input
from course_lib.loop import feedback_item


def _feedback_only(task_item, response, outputs):
    return [task_item] + [feedback_item(call_id, text) for call_id, text in outputs.items()]


def _first_item_only(task_item, response, outputs):
    call = response.output[0]
    return [task_item, call, feedback_item(call.call_id, outputs[call.call_id])]


def _model_dump(task_item, response, outputs):
    items = [item.model_dump() for item in response.output]
    return [task_item, *items] + [feedback_item(call_id, text) for call_id, text in outputs.items()]


def _feedback_first(task_item, response, outputs):
    items = [item.to_dict() for item in response.output]
    return [task_item] + [feedback_item(call_id, text) for call_id, text in outputs.items()] + items


def _wrong_call_id(task_item, response, outputs):
    items = [item.to_dict() for item in response.output]
    return [task_item, *items] + [feedback_item("call_demo_1", text) for text in outputs.values()]


def _arguments_as_object(task_item, response, outputs):
    items = [{**item.to_dict(), "arguments": json.loads(item.arguments)} for item in response.output]
    return [task_item, *items] + [feedback_item(call_id, text) for call_id, text in outputs.items()]


def test_feedback_without_its_call_is_named_and_refused_for_real(capsys):
    assert check_second_input(_feedback_only) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ on the one-call task: the original function_call call_")
    assert "the API answered 400: No tool call found for function call output with call_id call_" in out


def test_handling_only_output_0_fails_on_two_calls(capsys):
    assert check_second_input(_first_item_only) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ on the two-call task: the original function_call call_")
    assert "it is response.output[1]: walk every output item, not only output[0]" in out


def test_a_plain_model_dump_is_named(capsys):
    assert check_second_input(_model_dump) is False
    assert "carries null fields the model never sent (async_, caller, namespace)" in capsys.readouterr().out


def test_feedback_before_its_call_is_named(capsys):
    assert check_second_input(_feedback_first) is False
    out = capsys.readouterr().out
    assert "comes before its call (input[2]): the call goes first" in out
    assert "the API answered 400" in out


def test_a_call_id_that_matches_nothing_is_named(capsys):
    assert check_second_input(_wrong_call_id) is False
    out = capsys.readouterr().out
    assert "answers call_id 'call_demo_1', which matches no call" in out
    assert "No tool call found for function call output with call_id call_demo_1." in out


def test_arguments_turned_into_an_object_are_named(capsys):
    assert check_second_input(_arguments_as_object) is False
    out = capsys.readouterr().out
    assert "has arguments as a JSON object: keep the model's arguments text unchanged" in out


def test_passing_a_list_instead_of_the_function_is_named(capsys):
    assert check_second_input([]) is False
    assert capsys.readouterr().out.startswith("✗ pass the function itself (build_second_input), not list")


def test_output_text_is_not_a_json_field(capsys):
    assert check_final_text(lambda response: response["output_text"]) is False
    assert "it is a property of the SDK's Response object, not a field" in capsys.readouterr().out


def test_output_0_fails_on_a_response_that_holds_only_a_call(capsys):
    assert check_final_text(lambda response: response["output"][0]["content"][0]["text"]) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ final_text raised KeyError('content') on the fixture's response_1 (a function_call only)")


def test_none_for_a_response_without_message_is_named(capsys):
    def first_message(response):
        for item in response["output"]:
            if item["type"] == "message":
                return item["content"][0]["text"]

    assert check_final_text(first_message) is False
    assert "there is no message, so the final text is '' (you returned None)" in capsys.readouterr().out


def test_returning_the_whole_body_is_named(capsys):
    assert check_final_text(lambda response: response) is False
    assert "final_text must return a string; for the fixture's response_2" in capsys.readouterr().out
