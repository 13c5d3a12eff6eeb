"""Checks for notebook 06b (a write that takes effect once, on current data).

- `check_run_once(fn)`: the learner's `run_once(records, key, arguments, write, now=..., retention=...)
  -> (result, replayed)` is an idempotency store in one function. The check plays every sequence of
  up to five steps (calls with the same key and the same arguments, the same arguments in another
  key order, other arguments, another key, a write that fails; waits inside, at and past the
  retention window) against the rule, shortest first, and names the first step the function gets
  wrong. It plays them as a walk that extends each distinct state once (the rule's records and the
  learner's `records`, copied, times taken relative to now): the same property as replaying each
  of the 26,330 sequences from fresh records, in about 1,400 calls instead of 88,000. Then once
  more with a short window, so a hard-coded 24 hours does not pass.
- `check_outcomes(answer)`: for six described sends, written, replayed or conflict? Each is then
  played for real — the notes store, the executor with a timeout, `IdempotencyStore`,
  `OperationKeys` — and the learner's answer is compared with what happened.

Whatever the learner passes, a check prints one line naming the mistake and never shows a
traceback of its own; no check calls a model. Messages follow the edition (`course_lib.lang.say`).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.nb06 import _drop_coroutine, _on_fresh_workspaces, _raised, _Said, _shown
from course_lib.lang import say

# ---- exercise 1: run_once ------------------------------------------------------------------------

DAY = 24 * 3600
A = {"text": "Re-read section 4 before Thursday", "when": {"day": "thu", "hour": 9}}
A_REORDERED = {"when": {"hour": 9, "day": "thu"}, "text": "Re-read section 4 before Thursday"}
B = {"text": "Re-read section 5 before Thursday", "when": {"day": "thu", "hour": 9}}


class DiskFull(OSError):
    """What the check's failing write raises."""


@dataclass(frozen=True)
class _Step:
    """One step of a played sequence: a call (key, arguments, does write() fail?) or a wait."""

    label: str
    label_zh: str
    key: str | None = None
    arguments: dict[str, Any] | None = None
    fails: bool = False
    wait: float = 0.0  # seconds the clock moves on before this step (for a wait)

    @property
    def is_call(self) -> bool:
        return self.key is not None


def _steps(retention: float) -> list[_Step]:
    """The alphabet of the sequences: five calls and three waits (inside, at, just past the window)."""
    inside = retention * 13 / 24  # two of them are past the window, one is inside
    return [
        _Step("op-1 with A", "op-1 配 A", "op-1", A),
        _Step("op-1 with A, its keys in another order", "op-1 配 A（键换了顺序）", "op-1", A_REORDERED),
        _Step("op-1 with other arguments B", "op-1 配另一组参数 B", "op-1", B),
        _Step("op-2 with A", "op-2 配 A", "op-2", A),
        _Step("op-1 with A, and write() fails", "op-1 配 A，而 write() 失败", "op-1", A, fails=True),
        _Step(f"wait {_duration(inside)}", f"等 {_duration(inside)}", wait=inside),
        _Step(f"wait {_duration(retention)}", f"等 {_duration(retention)}", wait=retention),
        _Step("wait 1 s", "等 1 s", wait=1),
    ]


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"


@dataclass
class _Model:
    """The rule, as the check plays it: key → (canonical arguments, result, written at)."""

    retention: float
    records: dict[str, tuple[str, Any, float]] = dataclasses.field(default_factory=dict)
    failed: set[str] = dataclasses.field(default_factory=set)  # keys whose last write failed, not stored
    now: float = 0.0  # the time of the step being judged

    def expect(self, step: _Step, fingerprint: str, now: float, result: Any) -> tuple[str, Any, str]:
        """What a right run_once does — ("write", result) / ("replay", stored) / ("conflict", None) /
        ("fail", None) — and why: "new", "forgotten since t=…", "after a failed write", "known". The
        model's records move on as a right one's would."""
        key = step.key or ""
        self.now = now
        known = self.records.get(key)
        why = "known"
        if known is None:
            why = "failed" if key in self.failed else "new"
        elif now - known[2] > self.retention:
            why, known = f"forgotten:{known[2]}", None  # older than the window
        if known is not None:
            return ("replay", known[1], why) if known[0] == fingerprint else ("conflict", None, why)
        if step.fails:
            self.failed.add(key)
            return "fail", None, why
        self.records[key] = (fingerprint, result, now)
        self.failed.discard(key)
        return "write", result, why


def _story(done: list[tuple[_Step, float, str]], step: _Step, now: float) -> str:
    """The steps so far, short: 't=0 op-1 with A → wrote; t=0 op-1 with A, its keys… '."""
    said = {"write": say("wrote", "写入"), "replay": say("replayed", "重放"), "conflict": "ValueError",
            "fail": say("write() raised", "write() 抛出异常")}  # fmt: skip
    parts = [f"t={_duration(when) if when else '0'} {say(s.label, s.label_zh)} → {said[outcome]}" for s, when, outcome in done]
    parts.append(f"t={_duration(now) if now else '0'} {say(step.label, step.label_zh)}")
    return say("; ", "；").join(parts)


@dataclass
class _Node:
    """Where a played sequence stands: the learner's `records` after it, the rule's own records,
    the clock, how many writes happened, and the story so far (for the message)."""

    records: Any
    model: _Model
    now: float = 0.0
    written: int = 0
    done: tuple[tuple[_Step, float, str], ...] = ()
    path: tuple[_Step, ...] = ()


def _copied(node: _Node, fn: Callable[..., Any], retention: float) -> _Node:
    """A copy of `node` whose records the learner may change freely: `copy.deepcopy`, or, for records
    that cannot be copied, the same steps played again on fresh ones."""
    try:
        records = copy.deepcopy(node.records)
    except Exception:  # noqa: BLE001 — a lock, a generator, a file in the learner's records
        replayed, _ = _walk(fn, node.path, retention)
        return dataclasses.replace(replayed, model=copy.deepcopy(node.model))
    return dataclasses.replace(node, records=records, model=copy.deepcopy(node.model))


def _step(fn: Callable[..., Any], parent: _Node, step: _Step, retention: float, *,
          in_place: bool = False) -> tuple[_Node, str | None]:  # fmt: skip
    """Play one more step after `parent`: (the new node, the message naming a wrong call, or None).
    The parent is left as it was, unless `in_place` (a replay of a whole path)."""
    node = parent if in_place else _copied(parent, fn, retention)
    node.path = (*parent.path, step)
    if not step.is_call:
        node.now += step.wait
        return node, None
    calls, written = [0], [node.written]

    def write(step: _Step = step) -> dict[str, int]:
        calls[0] += 1
        if step.fails:
            raise DiskFull("disk full: nothing was written")
        written[0] += 1
        return {"reminder": written[0]}

    expected, value, why = node.model.expect(step, _TEXTS[id(step.arguments)], node.now, {"reminder": node.written + 1})
    try:
        got = fn(node.records, step.key, json.loads(_as_sent(step)), write, now=node.now, retention=retention)
        raised: BaseException | None = None
    except TypeError as error:
        if calls[0] == 0 and not parent.done:
            return node, say(f"run_once raised {_raised(error)}: the check calls run_once(records, key, arguments, "
                             "write, now=..., retention=...) — name the last two parameters now and retention.",
                             f"run_once 抛出了 {_raised(error)}：检查这样调用它：run_once(records, key, arguments, "
                             "write, now=..., retention=...)：最后两个参数要叫 now 和 retention。")
        got, raised = None, error
    except Exception as error:
        got, raised = None, error
    if problem := _judge(expected, value, why, got, raised, calls[0], step, node.model):
        return node, (say(f"After {_story(list(parent.done), step, node.now)}: ",
                          f"在这一串步骤之后（{_story(list(parent.done), step, node.now)}）：") + problem)
    node.written, node.done = written[0], (*node.done, (step, node.now, expected))
    return node, None


def _walk(fn: Callable[..., Any], path: tuple[_Step, ...], retention: float) -> tuple[_Node, str | None]:
    """Play `path` from fresh records (for records `copy.deepcopy` cannot copy)."""
    node = _Node(records={}, model=_Model(retention))
    for step in path:
        node, problem = _step(fn, node, step, retention, in_place=True)
        if problem:
            return node, problem
    return node, None


def _shape(value: Any, node: _Node, depth: int = 0) -> Any:
    """`value` (the learner's records) as something hashable, every number that is the time of a
    step written relative to now: two sequences that leave the same records, as far as the future
    steps can tell, get the same shape. A value that cannot be read gets a shape of its own."""
    if depth > 12:
        raise ValueError("records nested too deeply to compare")
    times = {when for _, when, _ in node.done}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return ("t-", node.now - value) if value in times else value
    if isinstance(value, Mapping):
        return ("{", frozenset((_shape(k, node, depth + 1), _shape(v, node, depth + 1)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("[", tuple(_shape(v, node, depth + 1) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_shape(v, node, depth + 1) for v in value))
    raise ValueError(f"cannot compare a {type(value).__name__}")


def _state(node: _Node) -> Any:
    """What decides every later step: the rule's records and the learner's, both relative to now."""
    model = node.model
    ruled = frozenset((key, fingerprint, str(result), node.now - at) for key, (fingerprint, result, at) in model.records.items())
    try:
        learned = _shape(node.records, node)
    except Exception:  # noqa: BLE001 — records the check cannot compare: never merged with another state
        learned = ("opaque", id(node))
    return ruled, frozenset(model.failed), learned, node.written


def _play_all(fn: Callable[..., Any], retention: float, longest: int) -> tuple[int, int, str | None]:
    """Every sequence of up to `longest` steps that starts with a call, shortest first, played as a
    walk that extends each distinct state once (two sequences that leave the rule's records and the
    learner's in the same state, relative to now, have the same futures). Returns (states reached,
    calls made, the message naming the first wrong step or None)."""
    steps = _steps(retention)
    root = _Node(records={}, model=_Model(retention))
    frontier, seen, calls = [root], set(), 0
    for depth in range(longest):
        following = []
        for node in frontier:
            for step in steps:
                if depth == 0 and not step.is_call:
                    continue  # a wait first changes nothing
                calls += step.is_call
                child, problem = _step(fn, node, step, retention)
                if problem:
                    return len(seen), calls, problem
                if (state := _state(child)) not in seen:
                    seen.add(state)
                    following.append(child)
        frontier = following
    return len(seen), calls, None


_TEXTS = {id(A): json.dumps(A, sort_keys=True), id(A_REORDERED): json.dumps(A_REORDERED, sort_keys=True),
          id(B): json.dumps(B, sort_keys=True)}  # fmt: skip
"""The canonical text of each argument set (what a right answer compares)."""
_SENT = {id(A): json.dumps(A), id(A_REORDERED): json.dumps(A_REORDERED), id(B): json.dumps(B)}
"""Each argument set as it is sent, key order kept: every call gets a fresh copy parsed from it."""


def _as_sent(step: _Step) -> str:
    return _SENT[id(step.arguments)]


def _judge(expected: str, value: Any, why: str, got: Any, raised: BaseException | None, calls: int, step: _Step,
           model: _Model) -> str | None:  # fmt: skip
    """Compare one step with the rule; the message naming the mistake, or None when it is right."""
    if _drop_coroutine(got):
        return say("run_once is an async def: it returned a coroutine. Write a plain def (write() is a plain function).",
                   "run_once 是 async def：它返回了一个协程。请写成普通的 def（write() 是普通函数）。")
    if calls > 1:
        return say(f"write() was called {calls} times in one call of run_once: call it at most once.",
                           f"一次 run_once 里 write() 被调用了 {calls} 次：最多调用一次。")
    if raised is not None and not isinstance(raised, (ValueError, DiskFull)):
        return say(f"run_once raised {_raised(raised)}.", f"run_once 抛出了 {_raised(raised)}。")
    if expected == "replay" and calls:
        if step.arguments is A_REORDERED:
            return say("the same arguments with their keys in another order wrote again: compare canonical "
                               "JSON, json.dumps(arguments, sort_keys=True).",
                               "键换了顺序的同一组参数又写了一次：请比较标准化的 JSON，json.dumps(arguments, sort_keys=True)。")
        return _written_again_hint(model, step)
    if expected == "fail":
        if raised is None:
            return say("write() raised, and run_once returned instead of letting the error through: the caller "
                               "would believe it was written. Do not catch it.",
                               "write() 抛出了异常，run_once 却正常返回了，没有让错误传出去：调用方会以为已经写入。不要捕获它。")
        return None
    if isinstance(raised, DiskFull):
        return say("run_once raised the DiskFull of an earlier write(): it remembered a failure. Remember a key "
                           "only after write() returned.",
                           "run_once 抛出了之前某次 write() 的 DiskFull：它记住了一次失败。只在 write() 返回之后才记住键。")
    if expected == "conflict":
        if isinstance(raised, ValueError):
            return None if calls == 0 else say(
                "run_once raised ValueError, but only after calling write(): the other arguments were written. "
                "Check the key before writing.",
                "run_once 抛出了 ValueError，但那是在调用 write() 之后：另一组参数已经写进去了。写入之前先检查键。")
        if calls:
            return say("the same key with other arguments was written: a key reused by mistake must be refused "
                               "(raise ValueError) before anything is written.",
                               "同一个键配另一组参数被写入了：被误用的键必须在写入任何东西之前就被拒绝（抛出 ValueError）。")
        return say("the same key with other arguments replayed the first result: the caller would believe its "
                           "other change was made. Compare the arguments and raise ValueError when they differ.",
                           "同一个键配另一组参数重放了第一次的结果：调用方会以为它的另一次修改已经完成。请比较参数，不同时抛出 ValueError。")
    if isinstance(raised, ValueError):
        if expected == "replay" and step.arguments is A_REORDERED:
            return say("the same arguments with their keys in another order were refused as other arguments: "
                               "compare canonical JSON, json.dumps(arguments, sort_keys=True), not the dict as sent.",
                               "键换了顺序的同一组参数被当作另一组参数拒绝了：请比较标准化的 JSON，"
                               "json.dumps(arguments, sort_keys=True)，而不是原样的 dict。")
        if expected == "write":
            return _must_write(why, step, model) + say(
                " Yours raised ValueError instead of writing.", "你的函数没有写入，而是抛出了 ValueError。")
        return say("run_once raised ValueError on a call that must replay.",
                           "在一次应该重放的调用上，run_once 抛出了 ValueError。")
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return say(f"run_once must return a pair (result, replayed); it returned {_shown(got)}.",
                           f"run_once 必须返回一对值 (result, replayed)；它返回了 {_shown(got)}。")
    result, replayed = got
    if not isinstance(replayed, bool):
        return say(f"replayed must be True or False; yours is {_shown(replayed)}.",
                           f"replayed 必须是 True 或 False；你的是 {_shown(replayed)}。")
    if expected == "replay":
        if not replayed:
            return say("a replay must say so: return (stored result, True).",
                               "重放就要说明是重放：返回 (存下的结果, True)。")
        if not _equal(result, value):
            return say(f"a replay must return the first write's result {_shown(value)}; yours returned "
                               f"{_shown(result)}.",
                               f"重放必须返回第一次写入的结果 {_shown(value)}；你的函数返回了 {_shown(result)}。")
        return None
    # expected == "write"
    if not calls:
        return _must_write(why, step, model) + say(
            f" Yours did not call write() (it returned {_shown(got)}).", f"你的函数没有调用 write()（它返回了 {_shown(got)}）。")
    if replayed:
        return say("a new write must return (result, False): replayed is True only when write() was not called.",
                           "一次新的写入必须返回 (result, False)：只有没有调用 write() 时 replayed 才是 True。")
    if not _equal(result, value):
        return say(f"return what write() returned ({_shown(value)}); yours returned {_shown(result)}.",
                           f"请返回 write() 返回的值（{_shown(value)}）；你的函数返回了 {_shown(result)}。")
    return None


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _must_write(why: str, step: _Step, model: _Model) -> str:
    """Why this call must write: a new key, a key past its window, or a key whose write failed."""
    if why.startswith("forgotten:"):
        at = float(why.split(":", 1)[1])
        return say(f"this call must write: {step.key} was written at t={_duration(at) if at else '0'}, more than the "
                   f"retention window ({_duration(model.retention)}) ago, so it is forgotten (a replay does not renew "
                   "the window: it counts from the write).",
                   f"这次调用必须写入：{step.key} 写于 t={_duration(at) if at else '0'}，距今已超过保留窗口"
                   f"（{_duration(model.retention)}），所以它已被遗忘（重放不会续期窗口：窗口从写入那一刻算起）。")
    if why == "failed":
        return say(f"this call must write: {step.key} has no stored result (its earlier write() failed, so nothing was "
                   "remembered). Remember a key only after write() returned.",
                   f"这次调用必须写入：{step.key} 没有存下的结果（它之前的 write() 失败了，所以什么也没记住）。"
                   "只在 write() 返回之后才记住键。")
    return say(f"this call must write: {step.key} was never written before — another operation, even if its "
               "arguments are the same. Look records up by key, not by the arguments.",
               f"这次调用必须写入：{step.key} 以前从未写入过。这是另一次操作，哪怕参数相同。请按键查找记录，而不是按参数。")


def _written_again_hint(model: _Model, step: _Step) -> str:
    known = model.records[step.key]  # type: ignore[index]
    return say("the same key and the same arguments, within the window, wrote a second time: return the stored result "
               "without calling write().",
               "同一个键、同样的参数、在窗口之内，却又写了一次：请返回存下的结果，不要调用 write()。") + (
        say(f" (Written at t={_duration(known[2]) if known[2] else '0'}: at exactly the retention window the key is still "
            "remembered; forget it only when now − written_at > retention.)",
            f"（写于 t={_duration(known[2]) if known[2] else '0'}：恰好到达保留窗口时，键仍然被记住；只有当 "
            "now − written_at > retention 时才遗忘它。）") if _at_the_edge(model, known[2]) else "")


def _at_the_edge(model: _Model, written_at: float) -> bool:
    return model.now - written_at == model.retention


def check_run_once(fn: Callable[..., Any]) -> bool:
    """Play every sequence of up to five steps (and four with a one-minute window) against `fn`."""
    if not_answered(fn):
        return failed(unassigned("run_once", "run_once(records, key, arguments, write, now, retention)"))
    if not callable(fn):
        return failed(say(f"Pass the function itself (run_once, without parentheses); you passed {_shown(fn)}.",
                          f"请传入函数本身（run_once，不带括号）；你传入的是 {_shown(fn)}。"))
    states = calls = 0
    for retention, longest in ((DAY, 5), (60, 4)):
        reached, made, problem = _play_all(fn, retention, longest)
        states, calls = states + reached, calls + made
        if problem:
            if retention != DAY:
                problem += say(" (This was with retention=60: use the retention you are given.)",
                               "（这是在 retention=60 时：请使用传给你的 retention。）")
            return failed(problem)
    return passed(say(f"every sequence of up to five steps right ({states} distinct states, {calls} calls): one write "
                      "per key, a retry replays it (in any key order), other arguments are refused, a failed write "
                      "leaves nothing behind, and a key is forgotten only after its window.",
                      f"最多五步的每一串步骤都对了（{states} 个不同的状态，{calls} 次调用）：每个键只写一次，重试会重放它"
                      "（键的顺序随意），另一组参数被拒绝，失败的写入不留下任何东西，键只有在窗口过去之后才被遗忘。"))


def _run_once_solution(records: dict[str, Any], key: str, arguments: dict[str, Any], write: Callable[[], Any], *,
                       now: float, retention: float) -> tuple[Any, bool]:  # fmt: skip
    fingerprint = json.dumps(arguments, sort_keys=True)  # canonical: key order does not matter, at any depth
    if key in records and now - records[key]["at"] <= retention:
        if records[key]["arguments"] != fingerprint:
            raise ValueError(f"idempotency key {key!r} was already used with other arguments")
        return records[key]["result"], True
    result = write()  # if it raises, nothing is remembered and the error goes to the caller
    records[key] = {"arguments": fingerprint, "result": result, "at": now}
    return result, False


# ---- exercise 2: written, replayed or conflict? -----------------------------------------------------

SENDS: Mapping[str, str] = _Said({
    "a": ("alice's first try of C timed out after the note was written; her app sends C again (same call, same approval)",
          "alice 第一次尝试 C 时超时了，但笔记已经写入；她的应用再次发送 C（同一个调用，同一个批准）"),
    "b": ("after C ran, a client sends another text to the same note under C's idempotency key",
          "C 运行之后，一个客户端用 C 的幂等键给同一篇笔记发送另一段文本"),
    "c": ("the user really saves the same reminder twice; the app keys each save by its content (the action id): "
          "the second save", "用户真的把同一条提醒保存了两次；应用按内容（动作 id）给每次保存定键：第二次保存"),
    "d": ("the same two saves, each under a key the client issued for its operation: the second save",
          "同样的两次保存，每次都用客户端为这次操作签发的键：第二次保存"),
    "e": ("a retry arrives 25 hours after the first save; the server keeps keys for 24 hours",
          "一次重试在第一次保存 25 小时之后才到达；服务器把键保留 24 小时"),
    "f": ("bob's change to docs/mcp.md was approved on version 1, but alice's change was applied first; then bob's is sent",
          "bob 对 docs/mcp.md 的修改是基于版本 1 批准的，但 alice 的修改先提交了；然后发送 bob 的修改"),
})
"""The six sends of exercise 2: for each, is the (last) send written, replayed or a conflict?"""

OUTCOMES = ("written", "replayed", "conflict")

WHY: Mapping[str, str] = _Said({
    "a": ("the first try did write; the retry carries the same idempotency key (the action id), finds the stored "
          "result and returns it: one write", "第一次尝试其实写入了；重试带着同一个幂等键（动作 id），找到存下的结果并返回它：只写了一次"),
    "b": ("the same key with other arguments is refused, and nothing is written", "同一个键配另一组参数会被拒绝，什么也不写"),
    "c": ("a content key cannot tell a second real save from a retry: the second is merged into the first, and lost",
          "内容键分不清第二次真正的保存和一次重试：第二次被并进了第一次，丢失了"),
    "d": ("a key per operation keeps two real saves apart: the second is written", "每次操作一个键，就能把两次真正的保存分开：第二次被写入"),
    "e": ("the server forgot the key after 24 hours, so the late retry is treated as new: written a second time",
          "服务器在 24 小时之后就忘了这个键，所以迟到的重试被当作新的请求：又写了一次"),
    "f": ("bob's expected_version is stale: the conditional write refuses it, and alice's text stays",
          "bob 的 expected_version 已经过时：条件写入拒绝了它，alice 的文本得以保留"),
})


async def _play_send(label: str, root: Path) -> str:
    """Play one send for real; return how the last send ended: written, replayed or conflict."""
    from course_lib.approval import IdempotencyConflict, IdempotencyStore, OperationKeys, action_id
    from course_lib.execution import Session, ToolError
    from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools

    if label in ("c", "d", "e"):
        clock = ManualClock(step=0)
        keys = IdempotencyStore(retention=DAY, clock=clock)
        reminder = {"text": "Re-read section 4 before Thursday"}

        async def add() -> dict[str, str]:
            return {"reminder": "stored"}

        if label == "c":
            the_key = action_id("add_reminder", reminder, "alice")
            first, second = the_key, the_key
        elif label == "d":
            issued = OperationKeys()
            first, second = issued.for_operation("save 1"), issued.for_operation("save 2")
        else:
            first = second = OperationKeys().for_operation("save 1")
        await keys.run(first, reminder, add)
        if label == "e":
            clock.advance(25 * 3600)
        try:
            _, replayed = await keys.run(second, reminder, add)
        except IdempotencyConflict:
            return "conflict"
        return "replayed" if replayed else "written"

    clock = ManualClock(step=0)
    store = NotesStore(root, clock=clock)
    try:
        preview, apply = notes_tools(store)
        if label == "a":  # the first answer is lost: the note is written, then the handler hangs past the timeout
            lost: list[bool] = []
            real = apply.handler

            async def loses_first_answer(arguments: Any, context: Any) -> Any:
                result = await real(arguments, context)
                if not lost:
                    lost.append(True)
                    await anyio.sleep(5)
                return result

            apply = dataclasses.replace(apply, handler=loses_first_answer, timeout=0.05)
        executor = AuditedExecutor([preview, apply], audit=store.audit, ttl=300)
        alice, bob = Session("alice"), Session("bob")

        async def approved(path: str, content: str, who: Session) -> dict[str, Any]:
            shown = await executor.execute("call_p", "preview_note_update", json.dumps({"path": path, "content": content}), who)
            arguments = shown.result["data"]["arguments"]
            asked = await executor.execute("call_a", "apply_note_update", json.dumps(arguments), who)
            executor.approvals.approve(asked.result["error"]["action_id"])
            return arguments

        def send(arguments: dict[str, Any], who: Session, call_id: str) -> Any:
            return executor.execute(call_id, "apply_note_update", json.dumps(arguments), who)

        path = "/workspace/todo.md" if label in ("a", "b") else "/workspace/docs/mcp.md"
        base, _ = store.read(path)
        if label == "f":
            for_alice = await approved(path, base + "Alice: one change.\n", alice)
            for_bob = await approved(path, base + "Bob: another change.\n", bob)
            await send(for_alice, alice, "call_1")
            last = await send(for_bob, bob, "call_2")
        else:
            c = await approved(path, base + "- [x] Learn about idempotency\n", alice)
            last = await send(c, alice, "call_1")  # label a: TIMEOUT, though the note was written
            if label == "a":
                last = await send(c, alice, "call_2")
            else:
                key = action_id("apply_note_update", c, "alice")
                try:
                    await store.apply(c["path"], "# something else entirely\n", c["expected_version"], key=key)
                except ToolError as error:
                    return "conflict" if error.code == "CONFLICT" else error.code
                return "written"
        if last.ok:
            return "replayed" if last.result["data"].get("replayed") else "written"
        return "conflict" if last.error_code == "CONFLICT" else str(last.error_code)
    finally:
        store.close()


def play_sends() -> dict[str, str]:
    """Play every send on its own fresh copy of the workspace: {label: written / replayed / conflict}."""
    return _on_fresh_workspaces(SENDS, _play_send, "course-nb06b-")


def _outcome(value: Any) -> str | None:
    """A learner's answer as one of OUTCOMES (any case, spaces around allowed), or None."""
    if not isinstance(value, str):
        return None
    word = str.__str__(value).strip().lower()
    return word if word in OUTCOMES else None


def check_outcomes(answer: Mapping[str, str]) -> bool:
    """Compare `{label: "written" / "replayed" / "conflict"}` with what really happened, send by send."""
    if not_answered(answer):
        return failed(say("Not answered yet: fill in outcomes = {'a': 'written', 'replayed' or 'conflict', ...}.",
                          "还没有作答：填好 outcomes = {'a': 'written'、'replayed' 或 'conflict', ...}。"))
    if not isinstance(answer, Mapping):
        return failed(say(f"outcomes must be a dict like {{'a': 'replayed', ...}}; you gave a {type(answer).__name__}.",
                          f"outcomes 必须是形如 {{'a': 'replayed', ...}} 的 dict；你给的是一个 {type(answer).__name__}。"))
    try:
        given = {label: answer[label] for label in SENDS if label in answer}
    except Exception as error:
        return failed(say(f"outcomes could not be read: looking an entry up raised {_raised(error)}; use a plain dict.",
                          f"outcomes 读不出来：查找其中一项时抛出了 {_raised(error)}；请用普通的 dict。"))
    missing = [label for label in SENDS if label not in given]
    if missing:
        return failed(say(f"outcomes has no entry for {', '.join(missing)}: answer all six sends (a to f).",
                          f"outcomes 里没有 {', '.join(missing)} 的条目：请回答全部六次发送（a 到 f）。"))
    open_ = [label for label in SENDS if given[label] is ...]
    if open_:
        return failed(say(f"Not answered yet: replace the ... of {', '.join(open_)} with 'written', 'replayed' or 'conflict'.",
                          f"还没有作答：把 {', '.join(open_)} 的 ... 换成 'written'、'replayed' 或 'conflict'。"))
    for label in SENDS:
        if _outcome(given[label]) is None:
            return failed(say(f"({label}): answer 'written', 'replayed' or 'conflict'; you gave {_shown(given[label])}.",
                              f"({label})：请回答 'written'、'replayed' 或 'conflict'；你给的是 {_shown(given[label])}。"))
    real = play_sends()
    for label, happened in real.items():
        said = _outcome(given[label])
        if said != happened:
            return failed(say(f"({label}) {SENDS[label]}: you said {said}, but it was {happened} — {WHY[label]}.",
                              f"({label}) {SENDS[label]}：你说 {said}，但实际是 {happened}。{WHY[label]}。"))
    return passed(say("all six right: a key makes a retry safe for as long as the server remembers it, and only a "
                      "key per operation keeps two real saves apart; a stale version is refused.",
                      "六个全对：只要服务器还记得键，它就能让重试安全；只有每次操作一个键，才能把两次真正的保存分开；"
                      "过时的版本会被拒绝。"))


SOLUTIONS: Solutions = {
    "check_run_once": lambda: _run_once_solution,
    "check_outcomes": lambda: {"a": "replayed", "b": "conflict", "c": "replayed", "d": "written", "e": "written",
                               "f": "conflict"},
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
