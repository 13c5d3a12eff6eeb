"""Wrong answers to notebook 09's exercises get a message that says what is wrong."""

import re

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
        "✗ on q01 (one search, then two reads in one turn) you computed 0, the traces give 1: compare the set of "
        "server tool names (call.name; call.tool is the alias")  # fmt: skip


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


def test_a_count_instead_of_a_rate_and_a_wrong_type(capsys):
    assert check_tool_selection_accuracy(
        lambda traces: sum({c.name for c in t.calls} == set(t.question.expected_tools) for t in traces)
    ) is False  # fmt: skip
    assert capsys.readouterr().out.startswith("✗ on q13 and q14, with a search added to q13")
    assert check_tool_selection_accuracy(lambda traces: "100%") is False
    assert capsys.readouterr().out.startswith("✗ tool_selection_accuracy must return a number from 0 to 1; it returned '100%'")
