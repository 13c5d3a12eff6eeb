"""Notebook 10, drill 2: an approval action id.

`check_action_id(fn)`: `action_id(tool, arguments, user_id) -> str` plugged into the approvals of
a real `Executor`: alice's approval of action A must let A run (in any key order) and nothing
else — another topic, `12` vs `"12"`, bob, another tool. A wrong id lets a write run for real.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from course_lib.approval import Approvals
from course_lib.exercises import failed, passed
from course_lib.exercises.nb10._common import ALICE, _case, _function, _run
from course_lib.execution import CallContext, Execution, Executor, Session, Tool
from course_lib.lang import say


class _GapArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str
    evidence: dict[str, Any]
    priority: int


ACTION_A = ("save_learning_gap",
            {"topic": "call_id vs MCP id", "evidence": {"note": "/workspace/notes.txt", "line": 12}, "priority": 2},
            "alice")  # fmt: skip
"""The action alice approves in every case."""

Action = tuple[str, dict[str, Any], str]
ACTION_CASES: list[tuple[str, Action, str | None]] = [
    ("A again, exactly", ACTION_A, None),
    ("A with its keys in another order", ("save_learning_gap", dict(reversed(list(ACTION_A[1].items()))), "alice"), None),
    ("A with the keys inside evidence in another order",
     ("save_learning_gap", {**ACTION_A[1], "evidence": {"line": 12, "note": "/workspace/notes.txt"}}, "alice"), None),
    ("another topic", ("save_learning_gap", {**ACTION_A[1], "topic": "strict mode"}, "alice"), "arguments"),
    ("evidence line 12 (a number) versus \"12\" (a string)",
     ("save_learning_gap", {**ACTION_A[1], "evidence": {"note": "/workspace/notes.txt", "line": "12"}}, "alice"),
     "argument types"),
    ("the same arguments, sent by bob", ("save_learning_gap", ACTION_A[1], "bob"), "user"),
    ("the same arguments, for delete_learning_gap", ("delete_learning_gap", ACTION_A[1], "alice"), "tool"),
]  # fmt: skip
"""(what the second call is, the action, None if it is A itself else what differs from A)."""

_WHERE = {
    "arguments": ("the arguments: hash all of them, not just the tool and the user",
                  "参数：要把参数全部算进哈希，而不只是工具和用户"),
    "argument types": ("the JSON types of the values: hash the JSON text of the arguments, not str() of the "
                       "values with the types lost",
                       "值的 JSON 类型：要对参数的 JSON 文本做哈希，而不是对丢了类型的 str(值)"),
    "user": ("the user: an approval given by alice must never authorize bob", "用户：alice 给出的批准绝不能授权 bob"),
    "tool": ("the tool: approving a save must never authorize a delete", "工具：批准一次保存绝不能授权一次删除"),
}  # fmt: skip


def play_approval(make_id: Callable[[str, dict[str, Any], str], Any], second: Action) -> tuple[bool, list[Execution]]:
    """Alice asks for A, a person approves the id shown, then `second` is sent: did it run?

    A real `Executor` with two write tools; `make_id` makes every approval id. Returns whether
    the second call's write happened, and both executions.
    """
    writes: list[str] = []

    async def write(arguments: _GapArgs, context: CallContext) -> dict[str, Any]:
        writes.append(context.call_id)
        return {"record_id": f"gap-{len(writes)}"}

    tools = [Tool(name, f"{name} (changes data)", _GapArgs, write, side_effect=True)
             for name in ("save_learning_gap", "delete_learning_gap")]  # fmt: skip
    executor = Executor(tools, approvals=Approvals(id_for=lambda t, a, u: make_id(t, copy.deepcopy(a), u)))
    tool, arguments, user = second

    async def go() -> list[Execution]:
        first = await executor.execute("call_a", ACTION_A[0], json.dumps(ACTION_A[1]), ALICE)
        executor.approvals.approve(first.result["error"]["action_id"])  # the person approves what was shown
        return [first, await executor.execute("call_b", tool, json.dumps(arguments), Session(user))]

    executions = _run(go)
    return "call_b" in writes, executions


def check_action_id(fn: Callable[[str, dict[str, Any], str], str]) -> bool:
    """Approve A with ids from `fn` in a real executor; name the first second call that runs when it
    must not (or is refused when it is A itself)."""
    if problem := _function(fn, "action_id", "tool, arguments, user_id"):
        return failed(problem)
    for label, second, differs in ACTION_CASES:
        try:
            ids = fn(*copy.deepcopy(ACTION_A)), fn(*copy.deepcopy(second))
        except Exception as error:
            return failed(say(f"case '{label}': action_id raised {type(error).__name__}: {error}.",
                              f"{_case(label)}：action_id 抛出了 {type(error).__name__}: {error}。"))
        if ... in ids:
            return failed(say("Not answered yet: action_id still returns ... — return one string per action.",
                              "还没有作答：action_id 仍然返回 ...——每个动作返回一个字符串。"))
        if not all(isinstance(value, str) and value for value in ids):
            return failed(say(f"action_id must return a non-empty str (it is stored and compared as text); it returned "
                              f"{ids[0]!r:.40} ({type(ids[0]).__name__}).",
                              f"action_id 必须返回非空的 str（它以文本形式保存和比较）；它返回的是 "
                              f"{ids[0]!r:.40}（{type(ids[0]).__name__}）。"))  # fmt: skip
        ran, _ = play_approval(fn, second)
        if differs is None and not ran:
            how = (say("the same action got two different ids", "同一个动作得到了两个不同的 id") if label == "A again, exactly"
                   else say(f"your ids differ: {ids[0]!r:.70} vs {ids[1]!r:.70}",
                            f"你的两个 id 不一样：{ids[0]!r:.70} 和 {ids[1]!r:.70}"))  # fmt: skip
            hint = (say("don't use random values, time or id(): the id must be a function of the action only",
                        "不要用随机值、时间或 id()：id 必须只由动作决定")
                    if label == "A again, exactly" else
                    say("key order is not part of the action: json.dumps(..., sort_keys=True) sorts keys at every level",
                        "键的顺序不属于动作：json.dumps(..., sort_keys=True) 会在每一层给键排序"))  # fmt: skip
            return failed(say(f"case '{label}': alice approved A, yet this call stopped at APPROVAL_REQUIRED — {how}. "
                              f"Hint: {hint}.",
                              f"{_case(label)}：alice 批准了 A，这次调用却停在了 APPROVAL_REQUIRED——{how}。提示：{hint}。"))  # fmt: skip
        if differs is not None and ran:
            return failed(say(f"case '{label}': alice approved A, and this call ran on that approval — a write nobody "
                              f"approved happened. Your id ignores {_WHERE[differs][0]}.",
                              f"{_case(label)}：alice 批准的是 A，这次调用却凭那个批准运行了——发生了一次没有人批准的写入。"
                              f"你的 id 没有考虑到{_WHERE[differs][1]}。"))
    return passed(say(f"all {len(ACTION_CASES)} cases right in a real executor: A runs in any key order, and nothing "
                      "else runs on A's approval.",
                      f"{len(ACTION_CASES)} 个用例在真实的执行器里全部正确：A 不论键的顺序如何都能运行，"
                      "其他调用都不能凭 A 的批准运行。"))


def _action_id_solution(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # json.dumps of the list keeps the three parts apart: no "tool"+"user" run-together.
    return "act_" + hashlib.sha256(json.dumps([tool, canonical, user_id]).encode()).hexdigest()[:16]
