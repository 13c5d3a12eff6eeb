"""Notebook 08's checks against the answers learners really write: one wrong answer per mistake each
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (other collections, other spellings: each must pass), and the fuzz of
`learner_fuzz` (never a traceback). The truth is measured on two real runs each time, so the
property (exactly the panels that changed) is the check's own."""

from __future__ import annotations

import pytest
from learner_fuzz import VALUES, assert_refused

from course_lib.exercises import nb08
from course_lib.exercises.nb08 import SOLUTIONS, check_not_sent_back, check_other_server, check_tail_parse_only

TAIL = SOLUTIONS["check_tail_parse_only"]()
OTHER = SOLUTIONS["check_other_server"]()
NOT_SENT = SOLUTIONS["check_not_sent_back"]()

WRONG = [  # (check, what the learner did, answer, English words, Chinese words)
    # exercise 1: tail 3 → 10, parse only
    (check_tail_parse_only, "the text changed, not the object", {"arguments"},
     ["'parsed' changed too: '3' → '10'", "A value follows the request"], ["'parsed' 也变了", "值随请求而变"]),
    (check_tail_parse_only, "parse only still sends the MCP request", TAIL | {"mcp_arguments"},
     ["'mcp_arguments' did not change", "Parse only sends nothing"], ["'mcp_arguments' 没有变", "仅解析什么也不发送"]),
    (check_tail_parse_only, "parse only still runs the tool", TAIL | {"mcp_result"},
     ["'mcp_result' did not change", "'not executed' in both runs", "Parse only executes nothing"],
     ["'mcp_result' 没有变", "仅解析什么也不执行"]),
    (check_tail_parse_only, "the declaration follows tail", TAIL | {"parameters"},
     ["'parameters' did not change", "A declaration is a rule"], ["'parameters' 没有变", "声明是规则"]),
    (check_tail_parse_only, "a kind for its panels", {"value"},
     ["'value' is a kind of object, not a panel", "arguments, parsed, mcp_arguments"], ["'value' 是对象的种类，不是面板"]),
    (check_tail_parse_only, "the glossary's kind for its panels", {"值", "arguments"},
     ["'值' is a kind of object, not a panel"], ["'值' 是对象的种类，不是面板", "这一类的面板是 arguments, parsed, mcp_arguments"]),
    (check_tail_parse_only, "one name as text", "arguments", ["not str 'arguments'", "put the names in braces"],
     ["而不是 str 'arguments'", "把名字放进花括号里"]),
    (check_tail_parse_only, "a misspelt panel", {"argument", "parsed"}, ["'argument' is not a panel name",
                                                                      "did you mean 'arguments'?"],
     ["'argument' 不是面板名", "你是不是想写 'arguments'？"]),
    (check_tail_parse_only, "answer = ... left", ..., ["Not answered yet: set answer = the set of the panels that change"],
     ["还没有作答：令 answer ="]),
    # exercise 2: the same read from the other server
    (check_other_server, "the alias changes the arguments", OTHER | {"arguments"},
     ["'arguments' did not change", "The alias (fs__ or arch__) is the app's routing, not an argument"],
     ["'arguments' 没有变", "别名（fs__ 或 arch__）是应用的路由，不是参数"]),
    (check_other_server, "the alias changes the MCP arguments", OTHER | {"mcp_arguments"},
     ["'mcp_arguments' did not change", "the values stay"], ["'mcp_arguments' 没有变", "值保持不变"]),
    (check_other_server, "another server, another declaration", OTHER | {"parameters"},
     ["'parameters' did not change", "A declaration is a rule"], ["'parameters' 没有变", "声明是规则"]),
    (check_other_server, "the answer forgotten", OTHER - {"answer"},
     ["'answer' changed too: 'fs__read_text_file' → 'arch__read_text_file'"], ["'answer' 也变了"]),
    (check_other_server, "the result forgotten", OTHER - {"mcp_result"},
     ["'mcp_result' changed too", "The tool really ran again"], ["'mcp_result' 也变了", "工具真的又运行了一次"]),
    (check_other_server, "a dict of flags", dict.fromkeys(OTHER, True), ["not a dict: the names only"], ["只要名字，不要值"]),
    # exercise 3: head 20 → 5, the result never sent back
    (check_not_sent_back, "an answer from a result never sent", NOT_SENT | {"answer"},
     ["'answer' did not change", "The model was never asked again"], ["'answer' 没有变", "模型没有被再次请求"]),
    (check_not_sent_back, "no feedback built", NOT_SENT - {"function_call_output"},
     ["'function_call_output' changed too", "The app still builds the feedback item"], ["应用仍然为新的结果构造反馈项"]),
    (check_not_sent_back, "no second read", NOT_SENT - {"mcp_result"},
     ["'mcp_result' changed too", "The tool really ran again"], ["工具真的又运行了一次"]),
    (check_not_sent_back, "head in the declaration", NOT_SENT | {"input_schema"},
     ["'input_schema' did not change", "head 20 or 5 is a value, not part of it"], ["head 20 还是 5 是值"]),
    (check_not_sent_back, "the MCP request left out", NOT_SENT - {"mcp_arguments"}, ["'mcp_arguments' changed too: '20' → '5'"],
     ["'mcp_arguments' 也变了"]),
    (check_not_sent_back, "a generator of names", (name for name in NOT_SENT), ["not generator: it can be read only once"],
     ["它只能读一次"]),
]  # fmt: skip


@pytest.mark.parametrize(("check", "answer", "en", "zh"), [(row[0], *row[2:]) for row in WRONG],
                         ids=[f"{row[0].__name__}: {row[1]}" for row in WRONG])  # fmt: skip
def test_wrong_answer_names_its_mistake(corpus, check, answer, en, zh):
    if hasattr(answer, "__next__"):  # a generator is read once: give each edition its own
        answer_list = list(answer)
        for lang, words in (("en", en), ("zh-CN", zh)):
            returned, printed = corpus.run(check, (name for name in answer_list), lang)
            assert returned is False and printed.startswith("✗ ")
            assert all(word in printed for word in words), printed
        return
    corpus.wrong(check, answer, en, zh)


def test_each_exercise_has_at_least_four_mistakes_named():
    for check in (check_tail_parse_only, check_other_server, check_not_sent_back):
        assert sum(1 for row in WRONG if row[0] is check) >= 4, check.__name__


RIGHT = [
    (check_tail_parse_only, "a list", ["parsed", "arguments"]),
    (check_tail_parse_only, "capitals and spaces", {" Arguments", "PARSED "}),
    (check_other_server, "a tuple", tuple(sorted(OTHER))),
    (check_other_server, "a frozenset", frozenset(OTHER)),
    (check_not_sent_back, "a dict's keys", dict.fromkeys(NOT_SENT).keys()),
    (check_not_sent_back, "a list with a repeat", [*NOT_SENT, "parsed"]),
]


@pytest.mark.parametrize(("check", "answer"), [(row[0], row[2]) for row in RIGHT],
                         ids=[f"{row[0].__name__}: {row[1]}" for row in RIGHT])  # fmt: skip
def test_other_right_answers_pass(corpus, check, answer):
    corpus.right(check, answer)


@pytest.mark.parametrize("answer", list(VALUES), ids=list(VALUES))
def test_fuzz_never_shows_a_traceback(answer):
    for check in (check_tail_parse_only, check_other_server, check_not_sent_back):
        assert_refused(check, VALUES[answer]())


def test_the_fuzz_never_reaches_the_explorer(monkeypatch):
    """A shape that is no answer is refused before the two real runs (each costs a model round trip)."""
    monkeypatch.setattr(nb08, "real_change", lambda *runs: pytest.fail("the explorer ran for a refused shape"))
    for answer in (factory() for name, factory in VALUES.items() if name != "an empty list"):
        assert_refused(check_tail_parse_only, answer)
