"""Wrong answers to notebook 04's exercises get a message that says what is wrong."""

import json

from course_lib.exercises.nb04 import build_second_input, check_request_2, check_second_input
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
    assert capsys.readouterr().out.startswith("✗ Pass the function itself (build_second_input, without parentheses); you passed list")


def _with_output(make):
    """The reference answer with each feedback's output replaced by `make(text)`."""
    def answer(task_item, response, outputs):
        items = build_second_input(task_item, response, outputs)
        return [{**item, "output": make(item["output"])} if item.get("type") == "function_call_output" else item
                for item in items]  # fmt: skip
    return answer


def test_an_output_given_as_input_text_parts_passes(capsys):
    assert check_second_input(_with_output(lambda text: [{"type": "input_text", "text": text}])) is True
    assert capsys.readouterr().out.startswith("✓")


def test_all_calls_then_all_outputs_is_a_valid_order(capsys):
    def calls_first(task_item, response, outputs):
        items = [item.to_dict() for item in response.output]
        return [task_item, *items] + [feedback_item(call_id, text) for call_id, text in outputs.items()]

    assert check_second_input(calls_first) is True
    capsys.readouterr()


def test_mcp_content_blocks_passed_through_are_named(capsys):
    assert check_second_input(_with_output(lambda text: [{"type": "text", "text": text}])) is False
    out = capsys.readouterr().out
    assert "has type 'text': that is an MCP content block; a function_call_output part is 'input_text'" in out
    assert "the API answered 400: Invalid value: 'text'." in out


def test_output_text_parts_are_named_as_what_only_the_model_writes(capsys):
    assert check_second_input(_with_output(lambda text: [{"type": "output_text", "text": text}])) is False
    assert "has type 'output_text', which only the model writes" in capsys.readouterr().out


def test_the_whole_mcp_result_as_output_is_named(capsys):
    mcp_result = {"content": [{"type": "text", "text": "..."}], "isError": False}
    assert check_second_input(_with_output(lambda text: mcp_result)) is False
    assert "is an MCP result object: send the text it carries" in capsys.readouterr().out


def test_parts_that_lose_the_text_are_named(capsys):
    assert check_second_input(_with_output(lambda text: [{"type": "input_text", "text": text[:10]}])) is False
    assert "do not carry the tool's text, unchanged" in capsys.readouterr().out


def test_a_chat_completions_tool_message_is_named(capsys):
    def chat_style(task_item, response, outputs):
        items = [item.to_dict() for item in response.output]
        return [task_item, *items] + [{"role": "tool", "tool_call_id": c, "content": t} for c, t in outputs.items()]

    assert check_second_input(chat_style) is False
    assert "is a Chat Completions tool message (role 'tool', tool_call_id)" in capsys.readouterr().out


def test_the_call_items_id_used_as_call_id_is_named(capsys):
    def item_id(task_item, response, outputs):
        return [task_item] + [x for item in response.output for x in (item.to_dict(), feedback_item(item.id, outputs[item.call_id]))]

    assert check_second_input(item_id) is False
    assert "is the call item's id; the feedback quotes its call_id" in capsys.readouterr().out


# ---- exercise 2: request_2 -------------------------------------------------------------------------


def _results(outputs):
    return [feedback_item(call_id, text) for call_id, text in outputs.items()]


def test_always_explicit_context_is_told_to_use_previous_response_id(capsys):
    assert check_request_2(lambda task, response, outputs, stored: {
        "input": build_second_input(task, response, outputs)}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ one call, stored: response 1 was stored: continue it with previous_response_id")


def test_sending_the_call_again_with_previous_response_id_is_named_and_refused(capsys):
    def again(task, response, outputs, stored):
        return {"previous_response_id": response.id, "input": [*response.output, *_results(outputs)]}

    assert check_request_2(again) is False
    out = capsys.readouterr().out
    assert "input sends the function_call again, but response 1 is stored with it" in out
    assert "the API answered 400: Duplicate item found with id fc_" in out


def test_sending_the_task_again_with_previous_response_id_is_named(capsys):
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.id, "input": [task, *_results(outputs)]}) is False
    assert "input sends the task again, but it is stored with response 1" in capsys.readouterr().out


def test_the_calls_id_as_previous_response_id_is_named(capsys):
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.output[0].call_id, "input": _results(outputs)}) is False
    out = capsys.readouterr().out
    assert "the call's call_id: it names a response, so it is response.id" in out
    assert "Previous response with id 'call_" in out


def test_previous_response_id_after_store_false_is_named_with_the_real_400(capsys):
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.id, "input": _results(outputs)}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ one call, made with store: false: response 1 was made with store: false")
    assert "the API answered 400: Previous response with id 'resp_" in out and "not found." in out


def test_dropping_the_call_from_the_explicit_context_is_named(capsys):
    def no_call(task, response, outputs, stored):
        if stored:
            return {"previous_response_id": response.id, "input": _results(outputs)}
        return {"input": [task, *_results(outputs)], "store": False}

    assert check_request_2(no_call) is False
    out = capsys.readouterr().out
    assert "with store: false the input must carry the whole story: the original function_call call_" in out
    assert "No tool call found for function call output with call_id" in out


def test_only_the_first_calls_result_is_named_on_two_calls(capsys):
    def first_only(task, response, outputs, stored):
        call_id = response.output[0].call_id
        return {"previous_response_id": response.id, "input": [feedback_item(call_id, outputs[call_id])]}

    assert check_request_2(first_only) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ two calls in one turn, stored: no function_call_output for call_id call_")
    assert "No tool output found for function call" in out


def test_setting_model_and_tools_and_a_wrong_return_type_are_named(capsys):
    assert check_request_2(lambda task, response, outputs, stored: {
        "model": "gpt-4.1", "previous_response_id": response.id, "input": _results(outputs)}) is False
    assert "the check adds model and tools itself (you set model)" in capsys.readouterr().out
    assert check_request_2(lambda task, response, outputs, stored: _results(outputs)) is False
    assert "request_2 must return a dict of request fields" in capsys.readouterr().out


def test_forgetting_store_false_on_request_2_is_named(capsys):
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.id, "input": _results(outputs)} if stored
        else {"input": build_second_input(task, response, outputs)}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ one call, made with store: false: request 1 was made with store: false")
    assert "pass store=False again" in out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_second_input(...) is False
    assert check_request_2(...) is False
    assert capsys.readouterr().out == (
        # (this module imports the reference build_second_input: the check sees it defined)
        "✗ You defined build_second_input, but what the check was given is still ...: pass the function itself "
        "(build_second_input, without parentheses) to the check and run the cell again.\n"
        "✗ Not answered yet: define request_2(task_item, response, outputs_by_call_id, stored), then pass the function "
        "itself (request_2, without parentheses) to the check and run the cell again.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_second_input(...) is False
    assert check_request_2(...) is False
    assert capsys.readouterr().out == (
        "✗ 你已经定义了 build_second_input，但传给检查的仍然是 ...：把函数本身（build_second_input，不带括号）传给检查，"
        "再运行这个单元格。\n"
        "✗ 还没有作答：定义 request_2(task_item, response, outputs_by_call_id, stored)，然后把函数本身（request_2，不带括号）"
        "传给检查，再运行这个单元格。\n"
    )


def test_second_input_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_second_input(_feedback_only) is False
    out = capsys.readouterr().out  # the API's own 400 message stays as the API wrote it
    assert out.startswith("✗ 在有一个调用的任务上：缺少原来的 function_call call_")
    assert "；API 答复了 400：No tool call found for function call output with call_id call_" in out
    assert check_second_input(_first_item_only) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 在有两个调用的任务上：缺少原来的 function_call call_")
    assert "（它是 response.output[1]：要遍历每一个输出项，而不只是 output[0]）" in out
    assert check_second_input(_feedback_first) is False
    assert "排在它的调用（input[2]）之前：调用必须在前" in capsys.readouterr().out
    assert check_second_input(_wrong_call_id) is False
    assert "答复的是 call_id 'call_demo_1'，它对不上任何调用" in capsys.readouterr().out
    assert check_second_input(build_second_input) is True
    assert capsys.readouterr().out.startswith("✓ 两次第二次请求都被接受了")


def test_request_2_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_request_2(lambda task, response, outputs, stored: {
        "input": build_second_input(task, response, outputs)}) is False
    assert capsys.readouterr().out.startswith("✗ 一个调用，已保存：响应 1 已经保存：用 previous_response_id=response.id 接着它")
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.output[0].call_id, "input": _results(outputs)}) is False
    assert "，即调用的 call_id：它指名的是一个响应，所以应该是 response.id" in capsys.readouterr().out
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.id, "input": _results(outputs)}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 一个调用，用 store: false 生成：响应 1 是用 store: false 生成的，所以平台什么也没保留")
    assert "API 答复了 400：Previous response with id 'resp_" in out
    assert check_request_2(lambda task, response, outputs, stored: {
        "previous_response_id": response.id, "input": _results(outputs)} if stored
        else {"input": build_second_input(task, response, outputs)}) is False
    assert "请再次传入 store=False" in capsys.readouterr().out
