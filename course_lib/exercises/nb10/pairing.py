"""Notebook 10, drill 1: pair call_ids.

`check_pair_call_ids(fn)`: `pair_call_ids(items) -> {call_id: output}` on the input lists the
loop really sent (three reads at once, one at a time, one failing), then broken ones: an orphan
output and an unanswered call (both refused by the model API too), a call_id on two calls, two
outputs for one call.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from typing import Any

from course_lib.broken_traces import THREE_READS
from course_lib.exercises import failed, passed
from course_lib.exercises.nb10._common import _case, _function
from course_lib.lang import say


def _offline_client() -> Any:
    """An openai client on the offline model, whatever the environment says: the cases are recorded."""
    from course_lib.exercises.offline import offline_client

    return offline_client()


@cache
def _recorded_contexts() -> dict[str, list[dict[str, Any]]]:
    """Input lists the loop really built (offline model, real files server), by label."""
    from course_lib.host import files_host
    from course_lib.loop import run_loop

    client = _offline_client()
    try:
        with files_host() as host:
            together = run_loop(client, host, THREE_READS)
            serial = run_loop(client, host, THREE_READS, parallel_tool_calls=False, max_steps=6)
            mixed = run_loop(client, host, "Show the first 2 lines of /workspace/notes.txt and the first 2 lines "
                                           "of /etc/passwd")  # fmt: skip
    finally:
        client.close()
    return {"together": together.context, "serial": serial.context, "mixed": mixed.context}


def _calls_in(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in items if item.get("type") == "function_call"]


def _outputs_in(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in items if item.get("type") == "function_call_output"]


def pairing_cases() -> dict[str, tuple[list[dict[str, Any]], str | None]]:
    """label → (an input list, None if it is valid, else the reason it must be refused)."""
    contexts = copy.deepcopy(_recorded_contexts())
    together, serial, mixed = contexts["together"], contexts["serial"], contexts["mixed"]
    user, calls, outputs = together[0], _calls_in(together), _outputs_in(together)
    finished = [outputs[1], outputs[2], outputs[0]]  # the order the reads completed in a real run
    orphan = {"type": "function_call_output", "call_id": "call_never_made", "output": outputs[0]["output"]}
    reused = {**calls[1], "call_id": calls[0]["call_id"]}
    return {
        "three reads in one turn, outputs in the model's order": (together, None),
        "the same turn, outputs in the order the reads finished": ([user, *calls, *finished], None),
        "three reads one at a time (three turns)": (serial, None),
        "a read that worked beside one that was refused": (mixed, None),
        "an output for a call nobody made": ([user, *calls, *outputs, orphan], "orphan"),
        "a call left without an output": ([user, *calls, *outputs[:2]], "unanswered"),
        "one call_id on two different calls": ([user, calls[0], reused, calls[2], outputs[0], outputs[2]], "reused"),
        "two outputs for one call": ([user, *calls, *outputs, {**outputs[0], "output": outputs[1]["output"]}], "twice"),
    }  # fmt: skip


def _api_refusal(items: list[dict[str, Any]]) -> str | None:
    """What the (offline) Responses API says about this input list, if it refuses it."""
    from course_lib.exercises.offline import model_name
    from course_lib.offline_model import BadRequest, respond

    try:
        respond({"model": model_name(), "input": items})
    except BadRequest as error:
        return error.message
    return None


_REFUSE = {
    "orphan": ("an output arrived for call_never_made, which no call in the list has; your function accepted it",
               "来了一个属于 call_never_made 的输出，而列表里没有哪个调用是这个 call_id；你的函数接受了它"),
    "unanswered": ("{cid} has no output; your function accepted it", "{cid} 没有输出；你的函数接受了它"),
    "reused": ("{cid} names two calls with different arguments; your function accepted it — one of them would get "
               "the other's result",
               "{cid} 指向两个参数不同的调用；你的函数接受了它——其中一个会拿到另一个的结果"),
    "twice": ("{cid} has two outputs with different texts; your function kept one — which one is true is a guess",
              "{cid} 有两个文本不同的输出；你的函数只留下了一个——哪个是真的，只能靠猜"),
}  # fmt: skip


def _describe_call(item: dict[str, Any]) -> str:
    try:
        arguments = json.loads(item["arguments"])
        return say(f"{item['call_id']} (read {arguments['path']})", f"{item['call_id']}（读取 {arguments['path']}）")
    except (ValueError, KeyError, TypeError):
        return item["call_id"]


def _pair_problem(label: str, items: list[dict[str, Any]], got: Any) -> str | None:
    expected = _pair_solution(items)
    if not isinstance(got, dict):
        return say(f"pair_call_ids must return a dict {{call_id: output text}}; it returned a {type(got).__name__}.",
                   f"pair_call_ids 必须返回一个字典 {{call_id: 输出文本}}；它返回的是 {type(got).__name__}。")
    case = _case(label)
    calls = {item["call_id"]: item for item in _calls_in(items)}
    for call_id in expected:
        if call_id not in got:
            return say(f"{case}: {_describe_call(calls[call_id])} is missing from your dict.",
                       f"{case}：你的字典里缺少 {_describe_call(calls[call_id])}。")
    if extra := [key for key in got if key not in expected]:
        return say(f"{case}: {extra[0]!r} is not the call_id of any call in the list.",
                   f"{case}：{extra[0]!r} 不是列表里任何一个调用的 call_id。")
    owner = {item["output"]: item["call_id"] for item in _outputs_in(items)}
    for call_id, text in expected.items():
        if got[call_id] != text:
            other = owner.get(got[call_id])
            if other is not None and other != call_id:
                return say(f"{case}: {_describe_call(calls[call_id])} got the output of "
                           f"{_describe_call(calls[other])}. Pair by call_id, never by position.",
                           f"{case}：{_describe_call(calls[call_id])} 拿到了 {_describe_call(calls[other])} 的输出。"
                           "要按 call_id 配对，绝不能按位置。")  # fmt: skip
            return say(f"{case}: the value for {call_id} must be its output text, exactly as it arrived.",
                       f"{case}：{call_id} 对应的值必须是它的输出文本，和到达时一模一样。")
    return None


def check_pair_call_ids(fn: Callable[[list[dict[str, Any]]], dict[str, str]]) -> bool:
    """Run `fn` on eight input lists (four real, four broken); explain the first it gets wrong."""
    if problem := _function(fn, "pair_call_ids", "items"):
        return failed(problem)
    for label, (items, refuse) in pairing_cases().items():
        try:
            got = fn(copy.deepcopy(items))
        except ValueError as error:
            if refuse:
                continue
            return failed(say(f"case '{label}': you raised ValueError ({error}), but this list is valid: every call has "
                              "exactly one output under its own call_id. Items of other types (messages) are not calls.",
                              f"{_case(label)}：你抛出了 ValueError（{error}），但这个列表是有效的：每个调用在自己的 "
                              "call_id 下恰好有一个输出。其他类型的项（消息）不是调用。"))
        except KeyError as error:
            why = {"'id'": ("outputs have no 'id': pair on 'call_id' (a call's 'id', fc_…, names the item, not the call).",
                            "输出没有 'id'：要按 'call_id' 配对（调用的 'id'，即 fc_…，标识的是这个项，不是这次调用）。"),
                   "'type'": ("a message has a 'role' and no 'type': use item.get('type').",
                              "消息有 'role'，没有 'type'：用 item.get('type')。"),
                   "'call_id'": ("only calls and outputs have a 'call_id': look at the 'type' first.",
                                 "只有调用和输出才有 'call_id'：先看 'type'。")}.get(
                       str(error), ("items are dicts as they crossed: messages have a 'role', calls and outputs a 'type' "
                       "and a 'call_id'.", "这些项是在线上传输时的字典：消息有 'role'，调用和输出有 'type' 和 'call_id'。"))  # fmt: skip
            return failed(say(f"case '{label}': pair_call_ids raised KeyError: {error}; {why[0]}",
                              f"{_case(label)}：pair_call_ids 抛出了 KeyError: {error}；{why[1]}"))
        except Exception as error:
            return failed(say(f"case '{label}': pair_call_ids raised {type(error).__name__}: {error}. Items are dicts as "
                              "they crossed: messages have a 'role', calls and outputs have a 'type' and a 'call_id'.",
                              f"{_case(label)}：pair_call_ids 抛出了 {type(error).__name__}: {error}。这些项是在线上传输时的"
                              "字典：消息有 'role'，调用和输出有 'type' 和 'call_id'。"))
        if got is ...:
            return failed(say("Not answered yet: pair_call_ids still returns ... — return the dict.",
                              "还没有作答：pair_call_ids 仍然返回 ...——请返回那个字典。"))
        if refuse:
            cid = _calls_in(items)[0]["call_id"] if refuse != "unanswered" else _calls_in(items)[2]["call_id"]
            api = _api_refusal(items)
            said = say(f" The Responses API refuses it too: {api!r}." if api else " The API may not notice: your app must.",
                       f"Responses API 也会拒绝它：{api!r}。" if api else "API 未必能发现：你的应用必须发现。")
            why_refuse = say(*_REFUSE[refuse]).format(cid=cid)
            return failed(say(f"case '{label}': {why_refuse}. Raise ValueError.{said}",
                              f"{_case(label)}：{why_refuse}。请抛出 ValueError。{said}"))
        if problem := _pair_problem(label, items, got):
            return failed(problem)
    return passed(say("all 8 input lists right: outputs found by call_id across turns, and orphans, unanswered calls, "
                      "reused call_ids and double outputs refused.",
                      "8 个输入列表全部正确：跨轮次按 call_id 找到了输出，并拒绝了孤立的输出、没有回答的调用、"
                      "重复使用的 call_id 和重复的输出。"))


def _pair_solution(items: list[dict[str, Any]]) -> dict[str, str]:
    calls: dict[str, dict[str, Any]] = {}
    for item in _calls_in(items):
        if item["call_id"] in calls:
            raise ValueError(f"call_id {item['call_id']} is used by two calls")
        calls[item["call_id"]] = item
    outputs: dict[str, str] = {}
    for item in _outputs_in(items):
        if item["call_id"] not in calls:
            raise ValueError(f"no call has call_id {item['call_id']}")
        if item["call_id"] in outputs:
            raise ValueError(f"call_id {item['call_id']} has two outputs")
        outputs[item["call_id"]] = item["output"]
    if missing := [call_id for call_id in calls if call_id not in outputs]:
        raise ValueError(f"no output for {', '.join(missing)}")
    return {call_id: outputs[call_id] for call_id in calls}
