"""Checks for notebook 08 (explore: which objects change).

Each exercise names two runs that differ in one condition; the learner answers with the set of
panel names that change from the first run to the second. The check runs both for real with a
fresh `Explorer` (model, parsing, MCP call, feedback) and compares with what really changed.

- `check_tail_parse_only`: tail 3 → tail 10, "parse only" on in both runs.
- `check_other_server`: two servers connected; the same read from `fs`, then from `arch`.
- `check_not_sent_back`: head 20 → 5, "don't send the result back" on in both runs.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Set
from typing import Any

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import raised, shown, type_name
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import offline_course
from course_lib.explorer import GROUP_NAMES_ZH, GROUPS, PANELS, Explorer, Snapshot
from course_lib.lang import say

SCENARIOS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "check_tail_parse_only": (dict(head=None, tail=3, parse_only=True), dict(head=None, tail=10, parse_only=True)),
    "check_other_server": (dict(head=5, two_servers=True, server="fs"), dict(head=5, two_servers=True, server="arch")),
    "check_not_sent_back": (dict(head=20, send_back=False), dict(head=5, send_back=False)),
}
"""For each check: the inputs of the first run and of the second (keyword arguments of `Explorer.run`)."""


WHY_UNCHANGED = {
    ("check_tail_parse_only", "value"): (" Parse only sends nothing: there is no MCP request in either run.",
                                         "仅解析什么也不发送：两次运行都没有 MCP 请求。"),
    ("check_tail_parse_only", "result"): (" Parse only executes nothing: no result exists in either run.",
                                          "仅解析什么也不执行：两次运行都没有结果。"),
    ("check_other_server", "value"): (" The alias (fs__ or arch__) is the app's routing, not an argument: the values stay.",
                                      "别名（fs__ 或 arch__）是应用的路由，不是参数：值保持不变。"),
    ("check_not_sent_back", "result"): (" The model was never asked again, so there is no answer in either run.",
                                        "模型没有被再次请求，所以两次运行都没有回答。"),
    ("check_not_sent_back", "rule"): (" A declaration is a rule: head 20 or 5 is a value, not part of it.",
                                      "声明是规则：head 20 还是 5 是值，不是声明的一部分。"),
}  # fmt: skip
"""(scenario, group of the panel named wrongly) → the mistake behind saying it changed (English, 中文)."""
WHY_CHANGED = {
    "value": (" A value follows the request: new request, new value.", "值随请求而变：新的请求，新的值。"),
    "result": (" The tool really ran again: a new execution gives a new result.", "工具真的又运行了一次：新的执行带来新的结果。"),
}
"""Group of a panel left out → why it changed (English, 中文)."""
RULE_UNCHANGED = (" A declaration is a rule: no value of one call is in it.", "声明是规则：里面没有某一次调用的任何值。")
FEEDBACK_BUILT = (" The app still builds the feedback item for the new result; it only never sends it.",
                  "应用仍然为新的结果构造反馈项，只是从不发送它。")


def real_change(first: dict[str, Any], second: dict[str, Any]) -> Snapshot:
    """Run `first`, then `second`, with a fresh explorer; return the second run's snapshot."""
    course = offline_course()  # a check runs offline whatever the environment: the explorer borrows its client
    try:
        with Explorer(course) as explorer:
            explorer.run(**first)
            return explorer.run(**second)
    finally:
        course.close()


def _quoted(text: str, limit: int = 50) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 1] + "…")


def _names(answer: Any) -> tuple[list[str] | None, str | None]:
    """The panel names a learner's answer gives (trimmed, lower case), or why it gives none: not a
    set (a str, a dict, a generator...), a name that is no panel, a group's name for a panel's."""
    if isinstance(answer, str | bytes):
        return None, say("Give a set of panel names, not {kind} {answer}: put the names in braces, "
                         "answer = {{'…', '…'}}.",
                         "请给出面板名的集合，而不是 {kind} {answer}：把名字放进花括号里，answer = {{'…', '…'}}。",
                         kind=type_name(answer), answer=shown(answer))
    if isinstance(answer, Mapping):
        return None, say("Give a set of panel names ({{'…', '…'}}), not a {kind}: the names only, without values.",
                         "请给出面板名的集合（{{'…', '…'}}），而不是 {kind}：只要名字，不要值。", kind=type_name(answer))
    if isinstance(answer, Iterator):
        return None, say("Give a set of panel names ({{'…', '…'}}), not {kind}: it can be read only once; write a "
                         "set, e.g. {{name for name in PANELS if ...}}.",
                         "请给出面板名的集合（{{'…', '…'}}），而不是 {kind}：它只能读一次；请写成集合，"
                         "例如 {{name for name in PANELS if ...}}。", kind=type_name(answer))
    if not isinstance(answer, Set | list | tuple):
        return None, say("Give a set of panel names ({{'…', '…'}}), not {kind} {answer}.",
                         "请给出面板名的集合（{{'…', '…'}}），而不是 {kind} {answer}。",
                         kind=type_name(answer), answer=shown(answer))
    try:
        given = list(answer)
    except Exception as error:  # a set-like object whose iteration raises
        return None, say("Reading your answer raised {error}; give a plain set of panel names.",
                         "读取你的答案时抛出了 {error}；请给出一个普通的面板名集合。", error=raised(error))
    names = []
    for item in given:
        name = item.strip().lower() if isinstance(item, str) else item
        if isinstance(name, str) and name in PANELS:
            names.append(name)
            continue
        group = GROUP_OF_NAME.get(name) if isinstance(name, str) else None
        if group is not None:
            return None, say("{name} is a kind of object, not a panel: its panels are {panels}. Name the panels that "
                             "change, one by one.",
                             "{name} 是对象的种类，不是面板：这一类的面板是 {panels}。请逐个写出会变化的面板。",
                             name=shown(item), panels=", ".join(GROUPS[group]))
        close = difflib.get_close_matches(name, PANELS, n=1) if isinstance(name, str) else []
        near = say(" (did you mean {name!r}?)", "（你是不是想写 {name!r}？）", name=close[0]) if close else ""
        return None, say("{name} is not a panel name{near}; the panels are: {panels}.",
                         "{name} 不是面板名{near}；面板有：{panels}。", name=shown(item), near=near, panels=", ".join(PANELS))
    return names, None


GROUP_OF_NAME = {**{group: group for group in GROUPS}, **{zh: group for group, zh in GROUP_NAMES_ZH.items()}}
"""A kind of object as a learner may write it, in English or as the glossary says it (规则, 值, 结果)."""


def _judge(answer: Any, scenario: str) -> bool:
    """Compare the learner's set of panel names with the panels that really changed."""
    if not_answered(answer):
        return failed(say('Not answered yet: set answer = the set of the panels that change, by name (names from '
                          'PANELS, written like {"…", "…"}), and run the cell again.',
                          '还没有作答：令 answer = 会变化的面板的名字组成的集合（名字取自 PANELS，写法如 {"…", "…"}），'
                          '再运行这个单元格。'))
    names, problem = _names(answer)
    if problem:
        return failed(problem)
    chosen = set(names or [])
    snap = real_change(*SCENARIOS[scenario])
    for name in PANELS:  # pipeline order: the first mistake along the chain is reported
        panel = snap.panels[name]
        group = next(g for g, names in GROUPS.items() if name in names)
        if name in snap.changed and name not in chosen:
            why = say(*WHY_CHANGED[group]) if group in WHY_CHANGED else ""
            if scenario == "check_not_sent_back" and name == "function_call_output":
                why = say(*FEEDBACK_BUILT)
            return failed(say("{name!r} changed too: {change} (now {now}).{why}", "{name!r} 也变了：{change}（现在是 {now}）。{why}",
                              name=name, change=panel.change(), now=_quoted(panel.text), why=why))
        if name in chosen and name not in snap.changed:
            rule = say(*RULE_UNCHANGED) if group == "rule" else ""
            why = say(*WHY_UNCHANGED[scenario, group]) if (scenario, group) in WHY_UNCHANGED else rule
            return failed(say("{name!r} did not change: it is {now} in both runs.{why}",
                              "{name!r} 没有变：两次运行中它都是 {now}。{why}", name=name, now=_quoted(panel.text), why=why))
    listed = ", ".join(name for name in PANELS if name in snap.changed)
    return passed(say("exactly these changed in the real runs: {listed}; the other {rest} stayed the same.",
                      "真实运行中恰好是这些变了：{listed}；其余 {rest} 个保持不变。",
                      listed=listed, rest=len(PANELS) - len(snap.changed)))


def check_tail_parse_only(answer: Any) -> bool:
    """Which panels change when only `tail` changes (3 → 10) and nothing is executed?"""
    return _judge(answer, "check_tail_parse_only")


def check_other_server(answer: Any) -> bool:
    """Which panels change when the same read goes to the `arch` server instead of `fs`?"""
    return _judge(answer, "check_other_server")


def check_not_sent_back(answer: Any) -> bool:
    """Which panels change when head goes 20 → 5 but the result is never sent back?"""
    return _judge(answer, "check_not_sent_back")


SOLUTIONS: Solutions = {
    "check_tail_parse_only": lambda: {"arguments", "parsed"},
    "check_other_server": lambda: {"mcp_result", "function_call_output", "answer"},
    "check_not_sent_back": lambda: {"arguments", "parsed", "mcp_arguments", "mcp_result", "function_call_output"},
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
