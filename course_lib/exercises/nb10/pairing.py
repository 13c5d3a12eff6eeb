"""Notebook 10, drill 1: pair call_ids.

`check_pair_call_ids(fn)`: `pair_call_ids(items) -> {call_id: output}` on the input lists the
loop really sent (three reads at once, their outputs in all six orders; one at a time; one
failing), then broken ones: an orphan output and an unanswered call (both refused by the model API
too), a call_id on two calls, two outputs for one call.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from course_lib.broken_traces import THREE_READS
from course_lib.exercises import failed, passed
from course_lib.exercises.answers import as_dict, raised, same, shown, type_name
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.nb10._common import Label, _case, _function, _returned
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


def pairing_cases() -> dict[Label, tuple[list[dict[str, Any]], str | None]]:
    """label → (an input list, None if it is valid, else the reason it must be refused).

    The three reads of one turn come back in every order they could finish in (all six), so a
    pairing that leans on position cannot pass on a lucky order."""
    contexts = copy.deepcopy(_recorded_contexts())
    together, serial, mixed = contexts["together"], contexts["serial"], contexts["mixed"]
    user, calls, outputs = together[0], _calls_in(together), _outputs_in(together)
    finished = [outputs[1], outputs[2], outputs[0]]  # the order the reads completed in a real run
    orphan = {"type": "function_call_output", "call_id": "call_never_made", "output": outputs[0]["output"]}
    reused = {**calls[1], "call_id": calls[0]["call_id"]}
    cases: dict[Label, tuple[list[dict[str, Any]], str | None]] = {
        "three reads in one turn, outputs in the model's order": (together, None),
        "the same turn, outputs in the order the reads finished": ([user, *calls, *finished], None),
    }
    names = {call["call_id"]: PurePosixPath(_path_of(call)).name for call in calls}
    for order in itertools.permutations(outputs):
        if list(order) not in (outputs, finished):
            files = [names[item["call_id"]] for item in order]
            label = (f"the same turn, outputs arriving as {', '.join(files)}", f"同一轮，输出按 {'、'.join(files)} 的顺序到达")
            cases[label] = ([user, *calls, *order], None)
    cases |= {
        "three reads one at a time (three turns)": (serial, None),
        "a read that worked beside one that was refused": (mixed, None),
        "an output for a call nobody made": ([user, *calls, *outputs, orphan], "orphan"),
        "a call left without an output": ([user, *calls, *outputs[:2]], "unanswered"),
        "one call_id on two different calls": ([user, calls[0], reused, calls[2], outputs[0], outputs[2]], "reused"),
        "two outputs for one call": ([user, *calls, *outputs, {**outputs[0], "output": outputs[1]["output"]}], "twice"),
    }  # fmt: skip
    return cases


def _path_of(call: dict[str, Any]) -> str:
    try:
        arguments = json.loads(call["arguments"])
    except (ValueError, KeyError, TypeError):
        return ""
    return str(arguments.get("path", "")) if isinstance(arguments, dict) else ""


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
    "reused": ("{cid} names two calls with different arguments; your function accepted it: one of them would get "
               "the other's result",
               "{cid} 指向两个参数不同的调用；你的函数接受了它：其中一个会拿到另一个的结果"),
    "twice": ("{cid} has two outputs with different texts; your function kept one: which one is true is a guess",
              "{cid} 有两个文本不同的输出；你的函数只留下了一个：哪个是真的，只能靠猜"),
}  # fmt: skip


def _describe_call(item: dict[str, Any]) -> str:
    path = _path_of(item)
    if not path:
        return str(item["call_id"])
    return say("{id} (read {path})", "{id}（读取 {path}）", id=item["call_id"], path=path)


def _pair_problem(label: Label, items: list[dict[str, Any]], got: Any) -> str | None:
    expected = _pair_solution(items)
    answer = as_dict(got)
    case = _case(label)
    if answer is None:
        return say("{case}: pair_call_ids must return a dict {{call_id: output text}}; it returned {got}",
                   "{case}：pair_call_ids 必须返回一个字典 {{call_id: 输出文本}}；它返回的是 {got}",
                   case=case, got=_returned(got))
    calls = {item["call_id"]: item for item in _calls_in(items)}
    if extra := [key for key in answer if key not in expected]:
        return say("{case}: {key} is not the call_id of any call in the list.",
                   "{case}：{key} 不是列表里任何一个调用的 call_id。", case=case, key=shown(extra[0]))
    for call_id in expected:
        if call_id not in answer:
            return say("{case}: {call} is missing from your dict.", "{case}：你的字典里缺少 {call}。",
                       case=case, call=_describe_call(calls[call_id]))
    owner = {item["output"]: item["call_id"] for item in _outputs_in(items)}
    for call_id, text in expected.items():
        value = answer[call_id]
        if not same(value, text):
            other = owner.get(value) if isinstance(value, str) else None
            if other is not None and other != call_id:
                return say("{case}: {call} got the output of {other}. Pair by call_id, never by position.",
                           "{case}：{call} 拿到了 {other} 的输出。要按 call_id 配对，绝不能按位置。",
                           case=case, call=_describe_call(calls[call_id]), other=_describe_call(calls[other]))
            return say("{case}: the value for {cid} must be its output text, exactly as it arrived; yours is {kind} "
                       "{value}.",
                       "{case}：{cid} 对应的值必须是它的输出文本，和到达时一模一样；你的是 {kind} {value}。",
                       case=case, cid=call_id, kind=type_name(value), value=shown(value))
    return None


_KEY_HINTS = {
    "'id'": ("outputs have no 'id': pair on 'call_id' (a call's 'id', fc_…, names the item, not the call).",
             "输出没有 'id'：要按 'call_id' 配对（调用的 'id'，即 fc_…，标识的是这个项，不是这次调用）。"),
    "'type'": ("a message has a 'role' and no 'type': use item.get('type').",
               "消息有 'role'，没有 'type'：用 item.get('type')。"),
    "'call_id'": ("only calls and outputs have a 'call_id': look at the 'type' first.",
                  "只有调用和输出才有 'call_id'：先看 'type'。"),
}
_ITEMS = ("items are dicts as they crossed: messages have a 'role', calls and outputs a 'type' and a 'call_id'.",
          "这些项是在线上传输时的字典：消息有 'role'，调用和输出有 'type' 和 'call_id'。")


def check_pair_call_ids(fn: Callable[[list[dict[str, Any]]], dict[str, str]]) -> bool:
    """Run `fn` on every input list of `pairing_cases` (real ones in every order, then broken
    ones); explain the first it gets wrong."""
    if problem := _function(fn, "pair_call_ids", "items"):
        return failed(problem)
    cases = pairing_cases()
    for label, (items, refuse) in cases.items():
        case = _case(label)
        try:
            got = fn(copy.deepcopy(items))
        except ValueError as error:
            if refuse:
                continue
            return failed(say("{case}: you raised {error}, but this list is valid: every call has exactly one output "
                              "under its own call_id. Items of other types (messages) are not calls.",
                              "{case}：你抛出了 {error}，但这个列表是有效的：每个调用在自己的 call_id 下恰好有一个输出。"
                              "其他类型的项（消息）不是调用。", case=case, error=raised(error)))
        except KeyError as error:
            if refuse and _key_of(error) not in _KEY_HINTS:  # e.g. outputs[call_id] for the call with no output
                return failed(say("{case}: pair_call_ids raised {error} where a ValueError is wanted: check for the "
                                  "missing or unknown call_id and raise ValueError naming it, so the caller can tell a "
                                  "broken list from a bug.",
                                  "{case}：pair_call_ids 抛出了 {error}，这里应该是 ValueError：检查缺失或未知的 call_id，"
                                  "并抛出指明它的 ValueError，这样调用方才能分清坏掉的列表和 bug。",
                                  case=case, error=raised(error)))
            why = say(*_KEY_HINTS.get(_key_of(error), _ITEMS))
            return failed(say("{case}: pair_call_ids raised {error}; {why}", "{case}：pair_call_ids 抛出了 {error}；{why}",
                              case=case, error=raised(error), why=why))
        except Exception as error:
            return failed(say("{case}: pair_call_ids raised {error}. {why}", "{case}：pair_call_ids 抛出了 {error}。{why}",
                              case=case, error=raised(error), why=say(*_ITEMS)))
        if got is ...:
            return failed(say("Not answered yet: pair_call_ids still returns ... — return the dict.",
                              "还没有作答：pair_call_ids 仍然返回 ...，请返回那个字典。"))
        if refuse:
            calls = _calls_in(items)
            cid = calls[0]["call_id"] if refuse != "unanswered" else calls[2]["call_id"]
            api = _api_refusal(items)
            said = (say(" The Responses API refuses it too: {api!r}.", "Responses API 也会拒绝它：{api!r}。", api=api)
                    if api else say(" The API may not notice: your app must.", "API 未必能发现：你的应用必须发现。"))
            why_refuse = say(*_REFUSE[refuse]).format(cid=cid)
            return failed(say("{case}: {why}. Raise ValueError.{said}", "{case}：{why}。请抛出 ValueError。{said}",
                              case=case, why=why_refuse, said=said))
        if problem := _pair_problem(label, items, got):
            return failed(problem)
    return passed(say("all {n} input lists right: outputs found by call_id across turns and in every order, and "
                      "orphans, unanswered calls, reused call_ids and double outputs refused.",
                      "{n} 个输入列表全部正确：跨轮次、不论顺序都按 call_id 找到了输出，并拒绝了孤立的输出、没有回答的调用、"
                      "重复使用的 call_id 和重复的输出。", n=len(cases)))


def _key_of(error: KeyError) -> str:
    """`"'id'"`: the key a KeyError names, as `str(error)` writes it ('' when that raises)."""
    try:
        return str(error)
    except Exception:
        return ""


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


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
