"""Notebook 07's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition, with the case's
label in the edition's language), other correct answers than the reference (each must pass), the
fuzz of `learner_fuzz` (never a traceback), and the property each exercise promises (outputs in
every order; every turn of reads and writes)."""

from __future__ import annotations

import collections
import itertools
import json

import pytest
from learner_fuzz import VALUES, assert_refused, functions

from course_lib.exercises import nb07
from course_lib.exercises.nb07 import check_pair_outputs, check_plan, pair_cases, plan_cases

SOLUTION_PAIR = nb07.SOLUTIONS["check_pair_outputs"]()
SOLUTION_PLAN = nb07.SOLUTIONS["check_plan"]()

# ---- exercise 1: pair_outputs -------------------------------------------------------------------


def by_position(calls, outputs):
    return {call.call_id: item["output"] for call, item in zip(calls, outputs)}


def rotated_arrival(calls, outputs):
    """Right for the order the reads really finished in ("the first call is the slowest, so its output
    comes last"), and for no other."""
    return {call.call_id: item["output"] for call, item in zip(calls, outputs[-1:] + outputs[:-1])}


def arrival_order(calls, outputs):
    paired = SOLUTION_PAIR(calls, outputs)
    return {item["call_id"]: paired[item["call_id"]] for item in outputs if item["call_id"] in paired}


def parsed(calls, outputs):
    return {call_id: json.loads(text) for call_id, text in SOLUTION_PAIR(calls, outputs).items()}


def no_checks(calls, outputs):
    texts = {item["call_id"]: item["output"] for item in outputs}
    return {call.call_id: texts[call.call_id] for call in calls}


def arguments_only(calls, outputs):
    first = {}
    for call in calls:
        if first.setdefault(call.call_id, call).arguments != call.arguments:
            raise ValueError("reused call_id")
    texts = {}
    for item in outputs:
        if item["call_id"] not in first:
            raise ValueError("unknown call_id")
        texts.setdefault(item["call_id"], item["output"])
    if len(texts) < len(first):
        raise ValueError("missing output")
    return {call_id: texts[call_id] for call_id in first}


def every_repeat_refused(calls, outputs):
    if len({call.call_id for call in calls}) != len(calls):
        raise ValueError("call_id used twice")
    return SOLUTION_PAIR(calls, outputs)


def key_error_for_a_missing_output(calls, outputs):
    first = {}
    for call in calls:
        seen = first.setdefault(call.call_id, call)
        if (seen.name, seen.arguments) != (call.name, call.arguments):
            raise ValueError("reused call_id")
    texts = {item["call_id"]: item["output"] for item in outputs}
    if set(texts) - set(first):
        raise ValueError("unknown call_id")
    return {call_id: texts[call_id] for call_id in first}


def orphans_accepted(calls, outputs):
    return SOLUTION_PAIR(calls, [item for item in outputs if item["call_id"] in {c.call_id for c in calls}])


def by_index(calls, outputs):
    return dict(enumerate(SOLUTION_PAIR(calls, outputs).values()))


def a_list_of_outputs(calls, outputs):
    return list(SOLUTION_PAIR(calls, outputs).values())


def starter(calls, outputs):
    ...  # your code here


PAIR_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("pairs by position", by_position, ["case 'the three reads, outputs in the order they finished'", "got the output of",
                                        "Pair by call_id, not by position"],
     ["例子“三次读取，输出按完成的先后排列”", "拿到了", "请按 call_id 配对，不要按位置"]),
    ("right for one arrival order only", rotated_arrival, ["case 'the three reads, outputs arriving as", "not by position"],
     ["例子“三次读取，输出按", "的顺序到达”", "不要按位置"]),
    ("keys in the order the outputs arrived", arrival_order, ["right pairs, wrong order", "Keep the model's order"],
     ["配对对了，顺序错了"]),
    ("parses the outputs", parsed, ["is of type dict, not the output text", "do not json.loads it"],
     ["的值的类型是 dict，不是输出文本", "不要对它 json.loads"]),
    ("no checks at all", no_checks, ["case 'a call_id reused with different arguments'", "is used twice", "Raise ValueError"],
     ["例子“一个 call_id 被重用，参数不同”", "用了两次", "请抛出 ValueError"]),
    ("compares the arguments, not the tool", arguments_only, ["case 'a call_id reused for another tool'",
                                                             "the second time for another tool (search_notes)"],
     ["例子“一个 call_id 被重用于另一个工具”", "用于另一个工具（search_notes）"]),
    ("refuses an exact repeat", every_repeat_refused, ["an exact repeat is the same call", "it runs once"],
     ["完全相同的重复就是同一个调用"]),
    ("a KeyError for the missing output", key_error_for_a_missing_output,
     ["left without an output'", "raised KeyError", "where a ValueError is wanted"], ["没有输出”", "这里应该是 ValueError"]),
    ("drops an output nobody asked for", orphans_accepted, ["call_never_made", "No tool call found for function call output"],
     ["call_never_made", "请抛出 ValueError"]),
    ("keys by position", by_index, ["key 0 is not the call_id of any call"], ["键 0 不是任何调用的 call_id"]),
    ("a list, not a dict", a_list_of_outputs, ["pair_outputs must return a dict {call_id: output text}", "list"],
     ["pair_outputs 必须返回一个 dict"]),
    ("the starter's body", starter, ["must return a dict", "Your function returned None"], ["你的函数返回了 None"]),
    ("answer = ... left", ..., ["Not answered yet", "set answer = pair_outputs"], ["还没有作答", "answer = pair_outputs"]),
    ("called instead of passed", {"call_1": "text"}, ["Pass the function itself (pair_outputs, without parentheses)"],
     ["请传入函数本身（pair_outputs，不带括号）"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PAIR_WRONG], ids=[row[0] for row in PAIR_WRONG])
def test_pair_outputs_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_pair_outputs, answer, en, zh)


def with_sets(calls, outputs):
    known = {}
    for call in calls:
        if known.get(call.call_id, (call.name, call.arguments)) != (call.name, call.arguments):
            raise ValueError(f"{call.call_id} reused")
        known[call.call_id] = (call.name, call.arguments)
    by_id = {}
    for item in outputs:
        if item["call_id"] not in known:
            raise ValueError(f"unknown {item['call_id']}")
        by_id.setdefault(item["call_id"], item["output"])
    if missing := set(known) - set(by_id):
        raise ValueError(f"missing {missing}")
    return collections.OrderedDict((call_id, by_id[call_id]) for call_id in known)


def with_a_counter_of_calls(calls, outputs):
    distinct = list(dict.fromkeys(calls))  # a verbatim repeat is the same Call: kept once, in order
    ids = collections.Counter(call.call_id for call in distinct)
    if any(n > 1 for n in ids.values()):
        raise ValueError("a call_id names two different calls")
    texts = {}
    for item in outputs:
        if item["call_id"] not in ids:
            raise ValueError("an output for no call")
        texts.setdefault(item["call_id"], item["output"])
    return {call.call_id: texts[call.call_id] if call.call_id in texts else _missing(call) for call in distinct}


def _missing(call):
    raise ValueError(f"no output for {call.call_id}")


@pytest.mark.parametrize("answer", [with_sets, with_a_counter_of_calls], ids=["an OrderedDict", "a Counter of calls"])
def test_pair_outputs_other_right_answers_pass(corpus, answer):
    corpus.right(check_pair_outputs, answer)


def test_pair_outputs_is_tried_on_every_order_the_outputs_can_arrive_in():
    """The promise is "whatever order they arrived in": all six orders of the three real outputs,
    and each of the three calls left without its output."""
    cases = pair_cases()
    orders = [tuple(item["call_id"] for item in case.outputs) for case in cases
              if not case.refuse and len(case.calls) == 3]  # fmt: skip
    ids = [call.call_id for call in cases[0].calls]
    assert sorted(orders) == sorted(itertools.permutations(ids))
    unanswered = [case for case in cases if case.refuse == "unanswered"]
    assert {next(c.call_id for c in case.calls if c.call_id not in {o["call_id"] for o in case.outputs})
            for case in unanswered} == set(ids)  # fmt: skip


@pytest.mark.parametrize("answer", [*VALUES, *functions(2)], ids=[*VALUES, *functions(2)])
def test_pair_outputs_fuzz_never_shows_a_traceback(answer):
    assert_refused(check_pair_outputs, VALUES[answer]() if answer in VALUES else functions(2)[answer])


# ---- exercise 2: plan ---------------------------------------------------------------------------


def is_write(call, tools):
    tool = tools.get(call.name)
    return tool is None or tool.side_effect


def one_wave(calls, tools):
    return [[call.call_id for call in calls]] if calls else []


def one_wave_per_call(calls, tools):
    return [[call.call_id] for call in calls]


def reads_first(calls, tools):
    reads = [c.call_id for c in calls if not is_write(c, tools)]
    return ([reads] if reads else []) + [[c.call_id] for c in calls if is_write(c, tools)]


def unknown_is_a_read(calls, tools):
    waves, reads = [], []
    for call in calls:
        if call.name in tools and tools[call.name].side_effect:
            waves += [reads, [call.call_id]] if reads else [[call.call_id]]
            reads = []
        else:
            reads.append(call.call_id)
    return waves + ([reads] if reads else [])


def indexes_the_registry(calls, tools):
    waves, reads = [], []
    for call in calls:
        if tools[call.name].side_effect:
            waves += [reads, [call.call_id]] if reads else [[call.call_id]]
            reads = []
        else:
            reads.append(call.call_id)
    return waves + ([reads] if reads else [])


def no_flush(calls, tools):
    waves, reads = [], []
    for call in calls:
        if is_write(call, tools):
            waves += [reads, [call.call_id]] if reads else [[call.call_id]]
            reads = []
        else:
            reads.append(call.call_id)
    return waves


def empty_waves(calls, tools):
    waves, reads = [], []
    for call in calls:
        if is_write(call, tools):
            waves += [reads, [call.call_id]]
            reads = []
        else:
            reads.append(call.call_id)
    return waves + ([reads] if reads else [])


def call_objects(calls, tools):
    return [[call] for call in calls]


def writes_together(calls, tools):
    waves, kind = [], None
    for call in calls:
        this = is_write(call, tools)
        if this != kind:
            waves.append([])
            kind = this
        waves[-1].append(call.call_id)
    return waves


def last_call_joins(calls, tools):
    """Right on the six turns a learner is shown first: none of them ends with a read then a write."""
    waves, reads = [], []
    for i, call in enumerate(calls):
        if is_write(call, tools) and i < len(calls) - 1:
            if reads:
                waves.append(reads)
                reads = []
            waves.append([call.call_id])
        else:
            reads.append(call.call_id)
    return waves + ([reads] if reads else [])


PLAN_WRONG = [
    ("one wave for everything", one_wave, ["case 'read, save, read'", "runs call_w1 together with call_r1, call_r2",
                                           "has a side effect: it runs alone"],
     ["例子“读取、保存、读取”", "有副作用：它要单独运行"]),
    ("one wave per call", one_wave_per_call, ["hold only reads with no write between them: merge them"], ["把它们合并"]),
    ("reads first, then writes", reads_first, ["before call_w1, although the model sent it after"],
     ["尽管模型是在它之后发出的"]),
    ("an unknown tool taken for a read", unknown_is_a_read, ["delete_file, which is not in the registry",
                                                            "treat it like a write"], ["不在注册表里", "把它当作写入"]),
    ("indexes the registry", indexes_the_registry, ["plan raised KeyError: 'delete_file'", "tools.get(call.name)"],
     ["plan 抛出了 KeyError", "tools.get(call.name)"]),
    ("forgets the last wave", no_flush, ["(the reads after the last write) are missing",
                                         "add the wave you were still collecting"], ["最后一个写入之后的读取"]),
    ("empty waves", empty_waves, ["is empty. Leave empty waves out"], ["请去掉空波"]),
    ("Call objects in the waves", call_objects, ["holds a Call object; put its call_id"], ["放的是 Call 对象"]),
    ("consecutive writes in one wave", writes_together, ["case 'two saves to the same note'", "call_w1 together with call_w2"],
     ["例子“对同一条笔记的两次保存”", "把 call_w1 和 call_w2 一起运行"]),
    ("a last write joins the reads (right on the first six turns)", last_call_joins,
     ["case '[read call_r1, save call_w1]'", "runs call_w1 together with call_r1"],
     ["例子“[读取 call_r1，保存 call_w1]”", "它要单独运行"]),
    ("answer = ... left", ..., ["Not answered yet", "set answer = plan"], ["还没有作答", "answer = plan"]),
    ("called instead of passed", [["call_r1"]], ["Pass the function itself (plan, without parentheses)"],
     ["请传入函数本身（plan，不带括号）"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PLAN_WRONG], ids=[row[0] for row in PLAN_WRONG])
def test_plan_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_plan, answer, en, zh)


def with_groupby(calls, tools):
    waves = []
    for alone, group in itertools.groupby(calls, key=lambda call: is_write(call, tools)):
        ids = [call.call_id for call in group]
        waves += [[call_id] for call_id in ids] if alone else [ids]
    return waves


def waves_as_tuples(calls, tools):
    return [tuple(wave) for wave in SOLUTION_PLAN(calls, tools)]


@pytest.mark.parametrize("answer", [with_groupby, waves_as_tuples], ids=["itertools.groupby", "waves as tuples"])
def test_plan_other_right_answers_pass(corpus, answer):
    corpus.right(check_plan, answer)


def test_plan_is_tried_on_every_turn_of_up_to_five_calls():
    """The promise holds for every turn: all 4 + 16 + 64 + 256 + 1024 turns of a read, a search, a
    write and an unknown tool, after the six a learner meets first; the mistake above passes the six."""
    cases = plan_cases()
    assert len(cases) == 6 + sum(4**n for n in range(1, 6))
    kinds = {tuple(call.name for call in calls) for _, calls in cases[6:]}
    assert len(kinds) == len(cases) - 6
    tools = nb07.plan_tools()
    assert all(last_call_joins(calls, tools) == SOLUTION_PLAN(calls, tools) for _, calls in cases[:6])


@pytest.mark.parametrize("answer", [*VALUES, *functions(2)], ids=[*VALUES, *functions(2)])
def test_plan_fuzz_never_shows_a_traceback(answer):
    assert_refused(check_plan, VALUES[answer]() if answer in VALUES else functions(2)[answer])
