"""Notebook 10, drill 2: an approval action id.

`check_action_id(fn)`: `action_id(tool, arguments, user_id) -> str` plugged into the approvals of
a real `Executor`: alice's approval of action A must let A run (in any key order) and nothing
else — another topic, `12` vs `"12"`, bob, another tool. A wrong id lets a write run for real.
Then what a forged approval cannot hit (`ids.forgery_problem`): no two of 1,024 distinct actions
share an id, and the id holds at least 64 bits.
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
from course_lib.exercises.answers import difference, raised, shown
from course_lib.exercises.ids import forgery_problem, size_words
from course_lib.exercises.nb10._common import ALICE, _case, _function, _returned, _run
from course_lib.execution import CallContext, Execution, Executor, Session, Tool
from course_lib.exercises.guard import guard_checks
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
    ("another note inside evidence",
     ("save_learning_gap", {**ACTION_A[1], "evidence": {"note": "/workspace/todo.md", "line": 12}}, "alice"),
     "nested values"),
    ("another priority", ("save_learning_gap", {**ACTION_A[1], "priority": 3}, "alice"), "every argument"),
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
    "every argument": ("one of the arguments: hash every argument (priority too), not the ones that look like the "
                       "action's name",
                       "其中一个参数：要把每个参数都算进哈希（priority 也算），而不只是看起来像动作名字的那几个"),
    "nested values": ("the values inside evidence: hash the whole arguments object, every level of it",
                      "evidence 里面的值：要对整个参数对象做哈希，每一层都算"),
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
        case = _case(label)
        try:
            ids = fn(*copy.deepcopy(ACTION_A)), fn(*copy.deepcopy(second))
        except Exception as error:
            return failed(say("{case}: action_id raised {error}.", "{case}：action_id 抛出了 {error}。",
                              case=case, error=raised(error)))
        if any(value is ... for value in ids):
            return failed(say("Not answered yet: action_id still returns ... — return one string per action.",
                              "还没有作答：action_id 仍然返回 ...，每个动作返回一个字符串。"))
        if bad := [value for value in ids if not (isinstance(value, str) and value)]:
            got = say("an empty str.", "空字符串。") if isinstance(bad[0], str) else _returned(bad[0])
            return failed(say("action_id must return a non-empty str (it is stored and compared as text); it returned "
                              "{got}", "action_id 必须返回非空的 str（它以文本形式保存和比较）；它返回的是 {got}", got=got))
        try:
            ran, _ = play_approval(fn, second)
        except Exception as error:  # an id the approvals cannot keep, or a function that raises only sometimes
            return failed(say("{case}: the executor could not use your ids: {error}.", "{case}：执行器没法使用你的 id：{error}。",
                              case=case, error=raised(error)))
        if differs is None and not ran:
            how = (say("the same action got two different ids", "同一个动作得到了两个不同的 id") if label == "A again, exactly"
                   else say("your ids differ: {a} vs {b}", "你的两个 id 不一样：{a} 和 {b}",
                            **dict(zip("ab", difference(ids[0], ids[1], 70)))))  # fmt: skip
            hint = (say("don't use random values, time or id(): the id must be a function of the action only",
                        "不要用随机值、时间或 id()：id 必须只由动作决定")
                    if label == "A again, exactly" else
                    say("key order is not part of the action: json.dumps(..., sort_keys=True) sorts keys at every level",
                        "键的顺序不属于动作：json.dumps(..., sort_keys=True) 会在每一层给键排序"))  # fmt: skip
            return failed(say("{case}: alice approved A, yet this call stopped at APPROVAL_REQUIRED: {how}. Hint: {hint}.",
                              "{case}：alice 批准了 A，这次调用却停在了 APPROVAL_REQUIRED：{how}。提示：{hint}。",
                              case=case, how=how, hint=hint))
        if differs is not None and ran:
            return failed(say("{case}: alice approved A, and this call ran on that approval: a write nobody approved "
                              "happened. Your id ignores {where}.",
                              "{case}：alice 批准的是 A，这次调用却凭那个批准运行了：发生了一次没有人批准的写入。"
                              "你的 id 没有考虑到{where}。", case=case, where=say(*_WHERE[differs])))
    size, problem = forgery_problem(fn, ACTION_A, name="action_id")
    if size is None:
        return failed(problem or "")
    return passed(say("all {n} cases right in a real executor: A runs in any key order, and nothing else runs on A's "
                      "approval; {size}.",
                      "{n} 个用例在真实的执行器里全部正确：A 不论键的顺序如何都能运行，其他调用都不能凭 A 的批准运行；"
                      "{size}。", n=len(ACTION_CASES), size=size_words(size)))


def _action_id_solution(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # json.dumps of the list keeps the three parts apart: no "tool"+"user" run-together.
    return "act_" + hashlib.sha256(json.dumps([tool, canonical, user_id]).encode()).hexdigest()[:16]


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
