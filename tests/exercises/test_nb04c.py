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
    (_empty_result, "the tool_result does not carry the output"),
])  # fmt: skip
def test_to_messages_mistakes_are_named(answer, words, capsys):
    assert check_to_messages(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out, out


def test_the_offline_model_refuses_input_as_text_itself():
    """The check's words match what the endpoint does: input as text is a 400 there too."""
    from course_lib.exercises.nb04c import MESSAGES_TOOLS
    from course_lib.exercises.offline import offline_anthropic
    import anthropic

    with offline_anthropic() as claude, pytest.raises(anthropic.BadRequestError, match="Input should be a valid dictionary"):
        claude.messages.create(model="claude-sonnet-4-6", max_tokens=64, tools=MESSAGES_TOOLS, messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": json.dumps({})}]}])


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_chat_replies(...) is False
    assert check_to_messages(...) is False
    assert capsys.readouterr().out == (
        # (this module imports the reference chat_replies and to_messages: the check sees them defined)
        "✗ You defined chat_replies, but what the check was given is still ...: pass the function itself "
        "(chat_replies, without parentheses) to the check and run the cell again.\n"
        "✗ You defined to_messages, but what the check was given is still ...: pass the function itself "
        "(to_messages, without parentheses) to the check and run the cell again.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_chat_replies(...) is False
    assert check_to_messages(...) is False
    assert check_chat_replies(lambda c, o: ...) is False
    assert check_to_messages(lambda t, c, o: ...) is False
    assert capsys.readouterr().out == (
        "✗ 你已经定义了 chat_replies，但传给检查的仍然是 ...：把函数本身（chat_replies，不带括号）传给检查，再运行这个单元格。\n"
        "✗ 你已经定义了 to_messages，但传给检查的仍然是 ...：把函数本身（to_messages，不带括号）传给检查，再运行这个单元格。\n"
        "✗ chat_replies 仍然返回起始代码里的 (...)：返回要追加的消息列表\n"
        "✗ to_messages 仍然返回起始代码里的 (...)：返回那三条消息\n"
    )


@pytest.mark.parametrize("answer, words", [
    (_tools_only, "第一条消息必须是带 tool_calls 的助手消息"),
    (_no_tool_call_id, "一条没有 'tool_call_id' 的工具消息"),
    (_responses_shape, "'function_call_output' 项是 Responses 的形状"),
    (_first_only, "没有工具消息回答 tool_calls 中的 id 'call_"),
    (_swapped, "的回复没有带上那个调用的输出"),
    (_object_content, "工具消息的 content 是文本"),
    (lambda c, o: {}, "chat_replies 必须返回一个消息列表，得到的是 dict"),
    (lambda c, o: 1 / 0, "chat_replies 抛出了 ZeroDivisionError: division by zero"),
])  # fmt: skip
def test_chat_replies_mistakes_are_explained_in_chinese(answer, words, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_chat_replies(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out, out


def test_chat_replies_right_answer_is_confirmed_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_chat_replies(chat_replies) is True
    assert capsys.readouterr().out == "✓ 助手消息连同它的 tool_calls 发回去了，每个结果都在它的 tool_call_id 下\n"


@pytest.mark.parametrize("answer, words", [
    (_input_as_text, "tool_use.input 是 str：Messages 把值作为对象携带"),
    (_wrong_pair, "tool_result.tool_use_id 是 'toolu_other'，但 tool_use 块的 id 是 'call_"),
    (_result_in_assistant, "tool_result 放在了助手消息里"),
    (_two_messages, "to_messages 必须返回三个消息 dict"),
    (_empty_result, "tool_result 没有带上输出"),
    (lambda t, c, o: [{"role": "assistant"}, {"role": "user"}, {"role": "user"}], "角色是 ['assistant', 'user', 'user']"),
])  # fmt: skip
def test_to_messages_mistakes_are_explained_in_chinese(answer, words, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_to_messages(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out, out


def test_to_messages_right_answer_is_confirmed_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_to_messages(to_messages) is True
    assert capsys.readouterr().out == "✓ 值作为对象发出，结果在 tool_use 块的 id 下发回\n"


def _user_between(completion, outputs):
    replies = chat_replies(completion, outputs)
    return [replies[0], {"role": "user", "content": "and?"}, *replies[1:]]


def _is_error_as_text(task, call, output):
    messages = to_messages(task, call, output)
    messages[2]["content"][0]["is_error"] = "no"
    return messages


def test_a_refusal_by_the_offline_model_is_introduced_in_chinese_and_quoted_as_the_api_words_it(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_chat_replies(_user_between) is False
    assert capsys.readouterr().out.startswith(
        "✗ 离线模型拒绝了这些消息，真实的 API 也会这样：An assistant message with 'tool_calls' must be followed by")
    assert check_to_messages(_is_error_as_text) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 离线模型拒绝了这些消息，真实的 API 也会这样：") and "is_error: Input should be a valid boolean" in out
