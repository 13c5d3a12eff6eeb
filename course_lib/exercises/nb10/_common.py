"""What several of notebook 10's drills share: the user, the read tool, a write's arguments,
running async code from a check, the "is it a function yet?" test, and the cases' labels in Chinese.

Every message a check writes itself follows the edition's language (`course_lib.lang.say`); a
case is named by its label, in Chinese through `CASE_LABELS_ZH` (`_case`). What the checks quote
(an error's message, the model API's 400, the learner's own values) stays as it was."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.exercises import not_answered
from course_lib.exercises.answers import passed_a_call, returned_early, shown, type_name, unassigned
from course_lib.execution import Session
from course_lib.lang import language, say

ALICE = Session("alice")

READ = "fs__read_text_file"
"""The files server's read tool, under the name the offline model calls it by."""


class _SaveArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str


def _run(async_fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run `async_fn()` on an event loop of its own (a notebook cell already runs inside one)."""
    with start_blocking_portal() as portal:
        return portal.call(async_fn)


def _function(fn: Any, name: str, signature: str) -> str | None:
    """Why `fn` is not a usable answer yet, or None: the starter's `answer = ...` still there (the
    message names that step), or a value where the function itself belongs."""
    if not_answered(fn):
        return unassigned(name, f"{name}({signature})")
    if not callable(fn) or isinstance(fn, type):
        return passed_a_call(name, fn)
    return None


def _returned(got: Any) -> str:
    """What a learner's function returned, as a message quotes it: `None` and the hint for it, or
    `list [...]`."""
    if got is None:
        hint = returned_early(None)
        return say("None.{hint}", "None。{hint}", hint=hint.lstrip() if language() == "zh-CN" else hint)
    return say("{kind} {value}.", "{kind} {value}。", kind=type_name(got), value=shown(got, 80))


Label = str | tuple[str, str]
"""A case's label: English (its Chinese in `CASE_LABELS_ZH`), or (English, 中文) for a generated case."""


def _case(label: Label) -> str:
    """`case 'label'`, or in the zh-CN edition 用例“…” with the label in Chinese."""
    en, zh = label if isinstance(label, tuple) else (label, CASE_LABELS_ZH.get(label, label))
    return say("case '{label}'", "用例“{label}”", label=say(en, zh))


CASE_LABELS_ZH = {
    # pairing
    "three reads in one turn, outputs in the model's order": "一轮里的三次读取，输出按模型的顺序排列",
    "the same turn, outputs in the order the reads finished": "同一轮，输出按读取完成的先后排列",
    "three reads one at a time (three turns)": "三次读取逐个进行（三轮）",
    "a read that worked beside one that was refused": "一次成功的读取，旁边一次被拒绝的读取",
    "an output for a call nobody made": "一个没有对应调用的输出",
    "a call left without an output": "一个没有输出的调用",
    "one call_id on two different calls": "两个不同的调用用了同一个 call_id",
    "two outputs for one call": "一个调用有两个输出",
    # action_id
    "A again, exactly": "原样再来一次 A",
    "A with its keys in another order": "A，键的顺序不同",
    "A with the keys inside evidence in another order": "A，evidence 里的键顺序不同",
    "another topic": "换一个 topic",
    "another priority": "换一个 priority",
    "another note inside evidence": "evidence 里换一条笔记",
    "evidence line 12 (a number) versus \"12\" (a string)": "evidence 的 line 是 12（数字）还是 \"12\"（字符串）",
    "the same arguments, sent by bob": "同样的参数，由 bob 发出",
    "the same arguments, for delete_learning_gap": "同样的参数，换成 delete_learning_gap",
    # idempotency
    "one call": "一次调用",
    "a retry after a timeout": "超时之后的重试",
    "the same key, the same arguments in another key order": "同一个键，同样的参数，键的顺序不同",
    "the same key with other arguments": "同一个键，不同的参数",
    "two different keys": "两个不同的键",
    "two calls with the same key at the same time": "同一个键的两次调用同时到达",
    "a write that failed, then the same key again": "一次失败的写入，然后同一个键再来一次",
    # next_step (what each case was)
    "a read whose head was the text \"5\"": "一次 head 为文本 \"5\" 的读取",
    "a read of /etc/passwd": "读取 /etc/passwd",
    "a read of /workspace/missing.txt": "读取 /workspace/missing.txt",
    "a read that did not answer in time": "一次没有按时回答的读取",
    "a search while the index restarts": "索引重启期间的一次搜索",
    "a read through a route to a tool the server does not have": "一次读取，路由指向服务器上并不存在的工具",
    "a search whose tool returned the wrong shape": "一次搜索，工具返回的结构不对",
    "a write nobody approved yet": "一次还没有人批准的写入",
    "a write whose note changed meanwhile": "一次写入，其间笔记已被改动",
    "a write without an idempotency key that did not answer in time": "一次没有幂等键、没有按时回答的写入",
    "a write with an idempotency key that did not answer in time": "一次带幂等键、没有按时回答的写入",
    "a write without an idempotency key while the index restarts": "索引重启期间一次没有幂等键的写入",
    "a write with bad arguments": "一次参数有误的写入",
    # scheduler
    "three reads from the model": "模型发来的三次读取",
    "read, write, read": "读、写、读",
    "two writes, then a read": "两次写入，然后一次读取",
    "a long mixed turn": "很长的一轮，读写混合",
    "no calls at all": "一个调用也没有",
    # parser
    "the model's arguments for head 20": "模型为 head 20 写出的参数",
    "the model's strict arguments, with a null": "模型在严格模式下写出的参数，含一个 null",
    "the same text with spaces and a newline around it": "同样的文本，前后有空格和换行",
    "NaN and Infinity inside a string value": "字符串值里写着 NaN 和 Infinity",
    "a key's name and braces inside string values": "字符串值里写着一个键名和花括号",
    "the word null inside a string, and a real null": "字符串里有 null 这个词，还有一个真正的 null",
    "a duplicate key": "重复的键",
    "a duplicate key inside a nested object": "嵌套对象里的重复键",
    "NaN inside a list": "列表里的 NaN",
    "NaN as a number": "把 NaN 当作数字",
    "Infinity as a number": "把 Infinity 当作数字",
    "-Infinity as a number": "把 -Infinity 当作数字",
    "a second object after the first": "第一个对象之后还有第二个对象",
    "a stray bracket after the object": "对象之后多了一个括号",
    "an array instead of an object": "数组而不是对象",
    "a string instead of an object": "字符串而不是对象",
    "null instead of an object": "null 而不是对象",
    "text cut off in the middle": "从中间截断的文本",
    "single quotes": "单引号",
    "an empty text": "空文本",
    "only whitespace": "只有空白",
    "an object that was already parsed (not text)": "一个已经解析过的对象（不是文本）",
    # responses_loop
    "one read": "一次读取",
    "two reads in one response": "一个响应里的两次读取",
    "a read that fails": "一次失败的读取",
    "no tool needed": "不需要工具",
    "two reads from a reasoning model": "推理模型的两次读取",
}  # fmt: skip
"""Every case label of notebook 10's drills, in Chinese (tests/exercises/test_nb10.py checks that none is missing)."""
