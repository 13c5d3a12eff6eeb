"""Notebook 03b's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and the property the exercise promises (a route right
whatever order the host's record lists the servers in)."""

from __future__ import annotations

import pytest

from course_lib.exercises.nb03b import SOLUTIONS, check_reference_predictions, check_route

# ---- exercise 1: predict the reference server (runs it: needs Node) -----------------------------

RIGHT = SOLUTIONS["check_reference_predictions"]()


def predicted(**changes: object) -> dict[str, object]:
    return {**RIGHT, **changes}


PREDICT_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("head 0 taken for no lines", predicted(A=0), ["A {'path': 'todo.md', 'head': 0}", "you predicted 0 lines",
                                                   "head 0 is falsy"], ["head 0 是假值"]),
    ("head 0 taken for a refusal, as ours does", predicted(A="error"), ["you predicted an error", "reads the whole file"],
     ["读取整个文件"]),
    ("tail 1 taken for the last real line", predicted(B=1), ["B {'path': 'notes.txt', 'tail': 1}",
                                                             "its last 'line' is the empty text"], ["空文本"]),
    ("tail 0 taken for 'both head and tail'", predicted(C="error"), ["tail 0 is falsy", "applies head 2 alone"],
     ["tail 0 是假值"]),
    ("/workspace taken for a path the reference knows", predicted(D=2), ["D {'path': '/workspace/notes.txt', 'head': 2}",
                                                                         "logical root"], ["逻辑根目录"]),
    ("a count written as text", predicted(A="8"), ["A: '8' is not a prediction", "a number, not the text of one"],
     ["要数字，而不是写成文字的数字"]),
    ("a case left out", {key: RIGHT[key] for key in "ABC"}, ["Predict every case: D missing"], ["缺少 D"]),
    ("one left as ...", predicted(C=...), ["Not answered yet"], ["还没有作答"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PREDICT_WRONG], ids=[row[0] for row in PREDICT_WRONG])
def test_reference_prediction_wrong_answer_names_its_mistake(node_tools, corpus, answer, en, zh):
    corpus.wrong(check_reference_predictions, answer, en, zh)


def test_reference_prediction_other_right_answer_passes(node_tools, corpus):
    corpus.right(check_reference_predictions, predicted(D=" Error"))


# ---- exercise 2: route --------------------------------------------------------------------------


def split_everywhere(alias, exposed):
    server, tool = alias.split("__")
    return server, tool


def split_last(alias, exposed):
    server, tool = alias.rsplit("__", 1)
    return server, tool


def split_first_without_the_record(alias, exposed):
    server, sep, tool = alias.partition("__")
    if not sep or server not in exposed:
        raise LookupError(alias)
    return server, tool


def string_prefix(alias, exposed):
    for server in exposed:
        if alias.startswith(server):
            return server, alias[len(server):].lstrip("_")
    raise LookupError(alias)


def last_prefix_that_matches(alias, exposed):
    """Right while fs comes before fs_archive in the record, and only then."""
    found = None
    for server in exposed:
        if alias.startswith(server):
            found = server, alias[len(server):].lstrip("_")
    if found is None:
        raise LookupError(alias)
    return found


def value_error_for_unknown(alias, exposed):
    for server, tools in exposed.items():
        head = f"{server}__"
        if alias.startswith(head) and alias[len(head):] in tools:
            return server, alias[len(head):]
    raise ValueError(alias)


def none_for_unknown(alias, exposed):
    for server, tools in exposed.items():
        head = f"{server}__"
        if alias.startswith(head) and alias[len(head):] in tools:
            return server, alias[len(head):]
    return None


def joined_string(alias, exposed):
    return SOLUTIONS["check_route"]()(alias, exposed)[0] + "/" + alias


def starter_body(alias, exposed):
    ...  # your code here: return (server, tool), or raise LookupError


ROUTE_WRONG = [
    ("split at every '__'", split_everywhere, ["route('gw__docs__read_text_file') raised ValueError",
                                               "A tool name may itself contain '__'"], ["工具名本身可能包含 '__'"]),
    ("split at the last '__'", split_last, ["gave ('gw__docs', 'read_text_file')", "no server is connected under 'gw__docs'"],
     ["没有服务器连接在 'gw__docs' 之下"]),
    ("split, with no look at the tools exposed", split_first_without_the_record,
     ["route('gw__docs__list_directory') returned ('gw', 'docs__list_directory')", "only= left it out",
      "raise LookupError"], ["only= 把它排除在外"]),
    ("a string prefix test", string_prefix, ["'fs_archive' merely starts with the characters 'fs'",
                                             "compare the whole prefix up to the '__'"], ["只是以字符 'fs' 开头"]),
    ("the last prefix that matches, in the record's order", last_prefix_that_matches,
     ["with the servers of exposed in reverse order"], ["exposed 里的服务器顺序反过来时"]),
    ("ValueError for a name never exposed", value_error_for_unknown, ["raised ValueError", "raise LookupError (KeyError is one)"],
     ["请抛出 LookupError"]),
    ("None for a name never exposed", none_for_unknown, ["returned None, yet the host never exposed that name"],
     ["可主机从未暴露过这个名字"]),
    ("one string instead of a pair", joined_string, ["must return a (server, tool) pair"], ["必须返回一个 (server, tool) 对"]),
    ("the starter's body", starter_body, ["it returned None", "Your function returned None"], ["你的函数返回了 None"]),
    ("answer = ... never set", ..., ["set answer = route"], ["answer = route"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in ROUTE_WRONG], ids=[row[0] for row in ROUTE_WRONG])
def test_route_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_route, answer, en, zh)


def by_partition_then_the_record(alias, exposed):
    """Another shape: prefixes never contain '__', so the first '__' ends it; then the record decides."""
    server, sep, tool = alias.partition("__")
    if sep and tool in exposed.get(server, ()):
        return [server, tool]
    raise KeyError(alias)


def longest_prefix_first(alias, exposed):
    for server in sorted(exposed, key=len, reverse=True):
        if alias.startswith(server + "__") and alias[len(server) + 2:] in exposed[server]:
            return server, alias[len(server) + 2:]
    raise LookupError(f"unknown tool {alias!r}")


@pytest.mark.parametrize("answer", [by_partition_then_the_record, longest_prefix_first], ids=["partition", "longest prefix"])
def test_route_other_right_answers_pass(corpus, answer):
    corpus.right(check_route, answer)
