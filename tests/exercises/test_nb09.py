"""Wrong answers to notebook 09's exercises get a message that says what is wrong."""

import itertools
import re
import statistics
from fractions import Fraction

import pytest

from course_lib.evaluation import cited_sources
from course_lib.exercises import nb09
from course_lib.exercises.nb09 import check_citation_correct, check_tool_selection_accuracy


# ---- citation_correct -------------------------------------------------------------------------------


def test_any_path_mentioned_counts_as_a_citation(capsys):
    def mentions(answer, read_paths):
        return all(path in read_paths for path in re.findall(r"/notes/\S+?\.md", answer))

    assert check_citation_correct(mentions) is False
    assert capsys.readouterr().out.startswith(
        "✗ on the real answer to q15 you said the citations are correct, but they are not: an answer that cites "
        "nothing cannot have correct citations")  # fmt: skip


def test_a_path_mentioned_in_the_text_is_not_a_citation(capsys):
    def any_mention(answer, read_paths):
        found = re.findall(r"/notes/\S+?\.md", answer)
        return bool(found) and all(path in read_paths for path in found)

    assert check_citation_correct(any_mention) is False
    assert capsys.readouterr().out.startswith(
        "✗ on the real answer to q18 you said the citations are correct, but they are not: a path mentioned in the "
        "text")  # fmt: skip


def test_only_the_last_line_is_read_as_the_sources_line(capsys):
    def last_line(answer, read_paths):
        cited = {p.strip() for p in answer.splitlines()[-1].removeprefix("Sources:").split(",")}
        return cited <= read_paths

    assert check_citation_correct(last_line) is False
    assert capsys.readouterr().out == (
        "✗ on the real answer to q24 you said the citations are wrong, but they are correct: the Sources: line is "
        "not always the last line: a paragraph about the saved gap follows it.\n")


def test_substring_matching_accepts_a_prefix(capsys):
    def substring(answer, read_paths):
        line = next((l for l in answer.splitlines() if l.startswith("Sources:")), "")
        cited = [p.strip() for p in line.removeprefix("Sources:").split(",") if p.strip()]
        return bool(cited) and all(any(c in r for r in read_paths) for c in cited)

    assert check_citation_correct(substring) is False
    assert capsys.readouterr().out.startswith(
        "✗ on the case 'a source named by its prefix only (/notes/retries is not /notes/retries.md)' you said the "
        "citations are correct, but they are not: compare whole paths")  # fmt: skip


def test_ignoring_the_tags_after_quoted_sentences(capsys):
    def sources_line_only(answer, read_paths):
        line = next((l for l in answer.splitlines() if l.startswith("Sources:")), "")
        cited = {p.strip() for p in line.removeprefix("Sources:").split(",") if p.strip()}
        return bool(cited) and cited <= read_paths

    assert check_citation_correct(sources_line_only) is False
    assert capsys.readouterr().out.startswith(
        "✗ on the case 'a quoted sentence tagged with a note that was never read' you said the citations are correct")


def test_a_non_boolean_and_a_crash_are_named(capsys):
    assert check_citation_correct(lambda answer, read_paths: "yes") is False
    assert capsys.readouterr().out.startswith("✗ citation_correct must return True or False; it returned 'yes'")
    assert check_citation_correct(lambda answer, read_paths: read_paths[0]) is False
    assert capsys.readouterr().out.startswith("✗ citation_correct raised TypeError")
    assert check_citation_correct(lambda answer, read_paths: ...) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet")


# ---- tool_selection_accuracy ------------------------------------------------------------------------


def test_comparing_aliases_with_server_names(capsys):
    assert check_tool_selection_accuracy(
        lambda traces: sum({c.tool for c in t.calls} == set(t.question.expected_tools) for t in traces) / len(traces)
    ) is False  # fmt: skip
    assert capsys.readouterr().out.startswith(
        "✗ on q01 (one search, then two reads in one turn) you computed 0, the traces give 1: call.tool is the "
        "model-side alias (notes__read_note); expected_tools holds server names: compare call.name.")  # fmt: skip


def test_inclusion_instead_of_equality(capsys):
    def subset(traces):
        return sum({c.name for c in t.calls} <= set(t.question.expected_tools) for t in traces) / len(traces)

    assert check_tool_selection_accuracy(subset) is False
    assert capsys.readouterr().out.startswith(
        "✗ on q01 answered after the search alone (read_note never called) you computed 1, the traces give 0: "
        "every expected tool must have been called")  # fmt: skip


def test_filtering_on_successful_calls(capsys):
    def only_ok(traces):
        return sum({c.name for c in t.calls if c.ok} == set(t.question.expected_tools) for t in traces) / len(traces)

    assert check_tool_selection_accuracy(only_ok) is False
    assert capsys.readouterr().out.startswith(
        "✗ on q20 (the save was proposed, then rejected by the user) you computed 0, the traces give 1: a call the "
        "model made counts as chosen even if it failed")  # fmt: skip


def test_lists_instead_of_sets_after_the_first_case_passes(capsys):
    def unique_list(traces):  # dedupes, but keeps order and requires the exact list
        return sum(list(dict.fromkeys(c.name for c in t.calls)) == list(t.question.expected_tools)
                   for t in traces) / len(traces)  # fmt: skip

    assert check_tool_selection_accuracy(unique_list) is True  # first-use order matches the questions' order
    capsys.readouterr()

    def with_repeats(traces):
        return sum([c.name for c in t.calls if c.turn] == sorted(set(t.question.expected_tools), key=str)
                   for t in traces) / len(traces)  # fmt: skip

    assert check_tool_selection_accuracy(with_repeats) is False
    assert capsys.readouterr().out.startswith("✗ on q01 (one search, then two reads in one turn) you computed 0")

    def calls_as_list(traces):
        return sum([c.name for c in t.calls] == list(t.question.expected_tools) for t in traces) / len(traces)

    assert check_tool_selection_accuracy(calls_as_list) is False
    assert capsys.readouterr().out.endswith(": a tool called twice (or a retry) is still one tool: compare sets, not lists of calls.\n")


def test_a_count_instead_of_a_rate_and_a_wrong_type(capsys):
    assert check_tool_selection_accuracy(
        lambda traces: sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in traces)
    ) is False  # fmt: skip
    assert capsys.readouterr().out == ("✗ on q13 and q14, with a search added to q13 (chit-chat that searched anyway) you "
                                       "computed 1, the traces give 0.5: that is a count of tasks, not a rate: divide by "
                                       "the number of tasks.\n")
    assert check_tool_selection_accuracy(lambda traces: "100%") is False
    assert capsys.readouterr().out.startswith("✗ tool_selection_accuracy must return a number from 0 to 1; it returned '100%'")


def test_a_percentage_is_named_as_a_percentage(capsys):
    # Regression: the hint for 100 instead of 1.0 was "call.tool is the alias".
    def percent(traces):
        return 100 * sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in traces) / len(traces)

    assert check_tool_selection_accuracy(percent) is False
    assert capsys.readouterr().out == (
        "✗ on q01 (one search, then two reads in one turn) you computed 100, the traces give 1: that is a percentage: "
        "return a fraction from 0 to 1 (a table may show it as %, the metric is a rate).\n")


def test_the_other_wrong_answers_each_get_their_own_hint(capsys):
    def superset(traces):
        return sum(set(t.question.expected_tools) <= {c.name for c in t.calls} for t in traces) / len(traces)

    def per_call(traces):
        right = sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in traces)
        return right / sum(len(t.calls) for t in traces)

    def inverted(traces):
        return sum({c.name for c in t.calls} != set(t.question.expected_tools) for t in traces) / len(traces)

    for fn, says in [(superset, "a tool the task did not need makes the choice wrong"),
                     (per_call, "divide by the number of tasks, not the number of calls"),
                     (inverted, "that is the share of tasks that chose wrongly")]:  # fmt: skip
        assert check_tool_selection_accuracy(fn) is False
        assert says in capsys.readouterr().out, fn.__name__


def test_requiring_every_read_note_to_be_cited(capsys):
    def all_read_cited(answer, read_paths):
        line = next((l for l in answer.splitlines() if l.startswith("Sources:")), "")
        cited = {p.strip() for p in line.removeprefix("Sources:").split(",") if p.strip()}
        return bool(cited) and cited == read_paths  # every note read must be cited: too strict

    assert check_citation_correct(all_read_cited) is False
    assert capsys.readouterr().out.endswith("a note read but not cited is fine: check cited ⊆ read, not read ⊆ cited.\n")


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_citation_correct(...) is False
    assert check_tool_selection_accuracy(...) is False
    assert check_citation_correct(len) is False  # a function of one argument: named in Chinese too
    assert check_citation_correct(lambda answer, read_paths: read_paths[0]) is False
    assert capsys.readouterr().out.startswith(
        "✗ 还没有作答：定义 citation_correct(answer, read_paths)，然后写 answer = citation_correct（函数本身，不带括号），"
        "再运行这个单元格。\n"
        "✗ 还没有作答：定义 tool_selection_accuracy(traces)，然后写 answer = tool_selection_accuracy（函数本身，不带括号），"
        "再运行这个单元格。\n"
        "✗ citation_correct 必须接受两个参数 (answer, read_paths)；你的函数不能用两个参数调用。\n"
        "✗ citation_correct 在例子“两个来源，都读过”上抛出了 TypeError：")  # fmt: skip


def test_a_wrong_citation_check_is_explained_in_chinese(monkeypatch, capsys):
    # The zh-CN edition checks against its own evaluation: Chinese answers over the Chinese notes,
    # citing in a 来源：a、b line.
    monkeypatch.setenv("COURSE_LANG", "zh-CN")

    def last_line(answer, read_paths):
        cited = {p.strip() for p in answer.splitlines()[-1].removeprefix("来源：").split("、")}
        return cited <= read_paths

    assert check_citation_correct(last_line) is False
    assert capsys.readouterr().out == (
        "✗ 在 q24 的真实回答上，你判断引用有错，但实际上引用正确：“来源：”行不一定是最后一行：它后面还有一段关于已保存缺口的话。\n")

    def substring(answer, read_paths):
        line = next((l for l in answer.splitlines() if l.startswith("来源：")), "")
        cited = [p.strip() for p in line.removeprefix("来源：").split("、") if p.strip()]
        return bool(cited) and all(any(c in r for r in read_paths) for c in cited)

    assert check_citation_correct(substring) is False
    assert capsys.readouterr().out == (
        "✗ 在例子“一个只写了前缀的来源（/notes/retries 不是 /notes/retries.md）”上，你判断引用正确，但实际上引用不正确："
        "比较完整的路径（集合成员关系），而不是子串。\n")  # fmt: skip

    def english_only(answer, read_paths):  # the English edition's parsing, on the Chinese answers
        line = next((l for l in answer.splitlines() if l.startswith("Sources:")), "")
        cited = {p.strip() for p in line.removeprefix("Sources:").split(",") if p.strip()}
        return bool(cited) and cited <= read_paths

    assert check_citation_correct(english_only) is False
    assert capsys.readouterr().out.endswith("你判断引用有错，但实际上引用正确：在“、”处切开“来源：”行，并去掉空格。\n")
    assert check_citation_correct(nb09.SOLUTIONS["check_citation_correct"]()) is True
    assert capsys.readouterr().out.startswith("✓ ")
    assert all(re.search(r"[\u4e00-\u9fff]", case.answer) for case in nb09.citation_cases())  # every answer is Chinese


def test_a_wrong_selection_metric_is_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_tool_selection_accuracy(
        lambda traces: sum({c.tool for c in t.calls} == set(t.question.expected_tools) for t in traces) / len(traces)
    ) is False  # fmt: skip
    assert capsys.readouterr().out == (
        "✗ 在 q01（一次搜索，然后同一轮里两次读取） 上你算出 0，轨迹给出的是 1：call.tool 是模型一侧的别名（notes__read_note）；"
        "expected_tools 里是服务器的工具名：请比较 call.name。\n")  # fmt: skip
    assert check_tool_selection_accuracy(lambda traces: "100%") is False
    assert capsys.readouterr().out.startswith("✗ tool_selection_accuracy 必须返回 0 到 1 之间的数；它在 q01（一次搜索")
    assert check_tool_selection_accuracy(lambda traces: sum(1 for t in traces if t.calls) / len(traces)) is False
    assert capsys.readouterr().out == ("✗ 在 只搜索就回答的 q01（从没调用 read_note） 上你算出 1，轨迹给出的是 0："
                                       "每个预期的工具都必须调用过：比较集合是否相等，而不是 ⊆。\n")


def test_every_hint_and_mistake_has_its_chinese(monkeypatch, capsys):
    from course_lib.exercises import nb09

    pairs = list(nb09.HINTS.values()) + [message for _, message in nb09.SELECTION_MISTAKES]
    pairs += [case.hint for case in nb09.selection_cases()]
    pairs += [(case.label_en, case.label_zh) for case in nb09.selection_cases()]
    pairs += [(case.where_en, case.where_zh) for case in nb09.citation_cases()]
    chinese = re.compile(r"[\u4e00-\u9fff]")
    assert all(len(pair) == 2 and not chinese.search(pair[0]) and chinese.search(pair[1]) for pair in pairs)
    assert set(nb09.CRAFTED) <= set(nb09.LABELS_ZH) and set(nb09.CRAFTED) <= set(nb09.HINTS)
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_tool_selection_accuracy(nb09.SOLUTIONS["check_tool_selection_accuracy"]()) is True
    assert capsys.readouterr().out.startswith("✓ 每个例子都对了")


# ---- the corpus: wrong answers a learner writes, other right answers, and anything at all -------



def _cited(answer):
    cited = []
    for line in answer.splitlines():
        if line.startswith("Sources:"):
            cited += [p.strip() for p in line.removeprefix("Sources:").split(",") if p.strip()]
        if tag := re.fullmatch(r"- .+ \[(/[^\]\s:]+)(?::[^\]\s]*)?\]", line.strip()):  # [path] or [path:line]
            cited.append(tag.group(1))
    return list(dict.fromkeys(cited))


CITATION_WRONG = {  # a mistake learners make → words the check's message must contain
    "first_two_only": (lambda answer, read: bool(_cited(answer)) and all(c in read for c in _cited(answer)[:2]),
                       "every cited note must have been read, not only the first ones"),
    "any_instead_of_all": (lambda answer, read: any(c in read for c in _cited(answer)),
                           "all of them, not any of them"),
    "empty_is_fine": (lambda answer, read: set(_cited(answer)) <= read,
                      "an answer that cites nothing cannot have correct citations"),
    "read_must_equal_cited": (lambda answer, read: bool(_cited(answer)) and set(_cited(answer)) == read,
                              "a note read but not cited is fine"),
    "no_strip_after_split": (
        lambda answer, read: bool(_cited(answer)) and {p for line in answer.splitlines() if line.startswith("Sources:")
                                                       for p in line.removeprefix("Sources: ").split(",")} <= read,
        "split the Sources line at commas and strip the spaces"),
}  # fmt: skip
CITATION_RIGHT = {  # another correct answer: regexes over the whole text
    # (The evaluation's own reader, evaluation.cited_sources, was one too until it kept only note-shaped paths:
    # "Sources: /notes/retries" cites nothing for it, while the exercise counts that path, which was never read.)
    "regexes over the whole answer": lambda answer, read: (lambda cited: bool(cited) and cited <= read)(
        {p.strip() for m in re.finditer(r"^Sources:(.*)$", answer, re.M) for p in m.group(1).split(",") if p.strip()}
        | set(re.findall(r"^- .+ \[(/[^\]\s:]+)(?::[^\]\s]*)?\]\s*$", answer, re.M))),
}  # fmt: skip


@pytest.mark.parametrize("name", CITATION_WRONG)
def test_each_citation_mistake_fails_with_its_name(name, capsys):
    fn, says = CITATION_WRONG[name]
    assert check_citation_correct(fn) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ ") and says in out and out.count("\n") == 1, out


@pytest.mark.parametrize("name", CITATION_RIGHT)
def test_other_right_citation_checks_pass(name, capsys):
    assert check_citation_correct(CITATION_RIGHT[name]) is True
    assert capsys.readouterr().out.startswith("✓ all ")


def test_the_citation_check_covers_every_answer_and_every_cited_note():
    # The promised property, for all the answers the assistant gives: a check that only sampled a few
    # answers let "look at the first two citations" pass (regression).
    cases = nb09.citation_cases()
    answers = {case.answer for case in cases}
    assert {t.answer or "" for t in nb09._traces()} <= answers
    for trace in nb09._traces():
        for path in cited_sources(trace.answer):
            assert any(case.answer == trace.answer and path not in case.read and set(case.read) | {path} >= set(trace.read)
                       for case in cases), (trace.question.id, path)  # fmt: skip
    assert any(len(cited_sources(case.answer)) >= 3 and not set(cited_sources(case.answer)) <= case.read for case in cases)


def _selection(traces):
    return sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in traces) / len(traces)


SELECTION_WRONG = {
    "aliases": (lambda ts: sum({c.tool for c in t.calls} == set(t.question.expected_tools) for t in ts) / len(ts),
                "call.tool is the model-side alias"),
    "subset": (lambda ts: sum({c.name for c in t.calls} <= set(t.question.expected_tools) for t in ts) / len(ts),
               "compare the sets for equality, not ⊆"),
    "only_ok": (lambda ts: sum({c.name for c in t.calls if c.ok} == set(t.question.expected_tools) for t in ts) / len(ts),
                "do not filter on ok"),
    "percentage": (lambda ts: 100 * _selection(ts), "that is a percentage"),
    "count": (lambda ts: float(sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in ts)),
              "that is a count of tasks, not a rate"),
    "search_assumed": (lambda ts: sum(({c.name for c in t.calls} | ({"search_notes"} if t.question.kind != "chat" else set()))
                                      == set(t.question.expected_tools) for t in ts) / len(ts),
                       "count the tasks whose set of tools equals the expected set"),
}  # fmt: skip
SELECTION_RIGHT = {
    "mean of booleans": lambda ts: statistics.mean(
        float(set(t.question.expected_tools) == {c.name for c in t.calls}) for t in ts),
    "a Fraction": lambda ts: Fraction(sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in ts), len(ts)),
    "names from the alias": lambda ts: sum({c.tool.rsplit("__", 1)[-1] for c in t.calls} == set(t.question.expected_tools)
                                           for t in ts) / len(ts),
}  # fmt: skip


@pytest.mark.parametrize("name", SELECTION_WRONG)
def test_each_selection_mistake_fails_with_its_name(name, capsys):
    fn, says = SELECTION_WRONG[name]
    assert check_tool_selection_accuracy(fn) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ ") and says in out and out.count("\n") == 1, out


@pytest.mark.parametrize("name", SELECTION_RIGHT)
def test_other_right_selection_metrics_pass(name, capsys):
    assert check_tool_selection_accuracy(SELECTION_RIGHT[name]) is True
    assert capsys.readouterr().out.startswith("✓ right on every case")


def test_the_selection_check_covers_every_set_of_tools_for_every_expectation():
    cases = nb09.selection_cases()
    singles = [case.traces[0] for case in cases if len(case.traces) == 1]
    expected = {frozenset(t.question.expected_tools) for t in nb09._traces()}
    seen = {(frozenset(t.question.expected_tools), frozenset(c.name for c in t.calls)) for t in singles}
    every = {frozenset(s) for n in range(4) for s in itertools.combinations(nb09.TOOLS, n)}
    assert {(e, s) for e in expected for s in every} <= seen  # 4 expectations × 8 sets of tools
    assert any(len(case.traces) == len(nb09._traces()) and case.traces[0].question.id == "q24" for case in cases)


class _Unprintable:
    def __repr__(self):
        raise RuntimeError("no repr")

    def __bool__(self):
        raise RuntimeError("no bool")


class _BadError(Exception):
    def __str__(self):
        raise RuntimeError("no str")


def _raise(error):
    raise error


FUZZ = [None, 42, "citation_correct", _Unprintable(), len, set, lambda *a: None, lambda *a: _Unprintable(),
        lambda *a: float("nan"), lambda *a: 1j, lambda *a: "1.0", lambda *a: [True], lambda *a: (x for x in ()),
        lambda *a: _raise(ValueError("bad")), lambda *a: _raise(KeyError("k")), lambda *a: _raise(SystemExit(1)),
        lambda *a: _raise(_BadError()), lambda *a: _raise(RecursionError()), lambda a, b, c: True, lambda: 0.5,
        lambda *a: a[-1].clear() if isinstance(a[-1], set) else [t.calls.clear() for t in a[-1]]]  # fmt: skip


@pytest.mark.parametrize("check", [check_citation_correct, check_tool_selection_accuracy])
@pytest.mark.parametrize("answer", FUZZ, ids=range(len(FUZZ)))
def test_whatever_the_learner_passes_the_check_answers_in_one_line(check, answer, capsys):
    assert check(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ ") and out.count("\n") == 1 and "Traceback" not in out, out


def test_a_function_that_changes_its_input_does_not_change_the_next_check(capsys):
    def vandal(traces):
        for t in traces:
            t.calls.clear()
            t.read.clear()
        return 0.0

    assert check_tool_selection_accuracy(vandal) is False
    assert check_citation_correct(lambda answer, read: read.clear()) is False
    assert check_tool_selection_accuracy(_selection) is True
    assert check_citation_correct(nb09.SOLUTIONS["check_citation_correct"]()) is True
    capsys.readouterr()
