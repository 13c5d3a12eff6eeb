"""Wrong answers to notebook 04c's exercises get a message that says what is wrong."""

import json

import pytest

from course_lib.exercises.nb04c import chat_replies, check_chat_replies, check_to_messages, to_messages


def _tools_only(completion, outputs):
    return [{"role": "tool", "tool_call_id": i, "content": t} for i, t in outputs.items()]


def _no_tool_call_id(completion, outputs):
    return [completion.choices[0].message, *({"role": "tool", "content": t} for t in outputs.values())]


def _responses_shape(completion, outputs):
    return [completion.choices[0].message,
            *({"type": "function_call_output", "call_id": i, "output": t} for i, t in outputs.items())]


def _first_only(completion, outputs):
    call = completion.choices[0].message.tool_calls[0]
    return [completion.choices[0].message, {"role": "tool", "tool_call_id": call.id, "content": outputs[call.id]}]


def _swapped(completion, outputs):
    ids, texts = list(outputs), list(outputs.values())
    return [completion.choices[0].message, *({"role": "tool", "tool_call_id": i, "content": t}
                                             for i, t in zip(ids, reversed(texts)))]


def _object_content(completion, outputs):
    return [completion.choices[0].message, *({"role": "tool", "tool_call_id": i, "content": {"text": t}}
                                             for i, t in outputs.items())]


@pytest.mark.parametrize("answer, words", [
    (_tools_only, "the first message must be the assistant message"),
    (_no_tool_call_id, "without 'tool_call_id'"),
    (_responses_shape, "Responses shape"),
    (_first_only, "no tool message answers"),
    (_swapped, "does not carry that call's output"),
    (_object_content, "content is text"),
    (lambda c, o: 1 / 0, "raised ZeroDivisionError"),
])  # fmt: skip
def test_chat_replies_mistakes_are_named(answer, words, capsys):
    assert check_chat_replies(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out, out


def test_chat_replies_accepts_the_sdk_message_object(capsys):
    def typed(completion, outputs):
        return [completion.choices[0].message, *chat_replies(completion, outputs)[1:]]

    assert check_chat_replies(typed) is True


def _input_as_text(task, call, output):
    messages = to_messages(task, call, output)
    messages[1]["content"][0]["input"] = call.arguments
    return messages


def _wrong_pair(task, call, output):
    messages = to_messages(task, call, output)
    messages[2]["content"][0]["tool_use_id"] = "toolu_other"
    return messages


def _result_in_assistant(task, call, output):
    messages = to_messages(task, call, output)
    messages[1]["content"].append(messages[2]["content"][0])
    return messages


def _two_messages(task, call, output):
    return to_messages(task, call, output)[:2]


def _empty_result(task, call, output):
    messages = to_messages(task, call, output)
    messages[2]["content"][0]["content"] = ""
    return messages


@pytest.mark.parametrize("answer, words", [
    (_input_as_text, "tool_use.input is str"),
    (_wrong_pair, "the pair is tied by that id"),
    (_result_in_assistant, "is in the assistant message"),
    (_two_messages, "three message dicts"),
    (_empty_result, "did not answer from the result"),
])  # fmt: skip
def test_to_messages_mistakes_are_named(answer, words, capsys):
    assert check_to_messages(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out, out


def test_the_offline_model_refuses_input_as_text_itself():
    """The check's words match what the endpoint does: input as text is a 400 there too."""
    from course_lib.exercises.nb04c import _anthropic, MESSAGES_TOOLS
    import anthropic

    with _anthropic() as claude, pytest.raises(anthropic.BadRequestError, match="Input should be a valid dictionary"):
        claude.messages.create(model="claude-sonnet-4-6", max_tokens=64, tools=MESSAGES_TOOLS, messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": json.dumps({})}]}])
