"""Baseline against a change: the same questions, one thing different, and the metrics must move."""

from functools import partial

import pytest

import httpx
import openai

from course_lib.backend import OFFLINE_BASE_URL
from course_lib.comparison import Guesses, WithoutTool, compare, comparison_table
from course_lib.evaluation import load_questions
from course_lib.offline_model import offline_transport


@pytest.fixture(scope="module")
def results():
    questions = [q for q in load_questions() if q.id in {"q01", "q13", "q15", "q17", "q23"}]
    with openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, max_retries=0,
                       http_client=httpx.Client(transport=offline_transport())) as client:  # offline, whatever the env says
        yield compare({"baseline": None, "no search step": partial(WithoutTool, tool="search_notes"),
                       "guesses": Guesses}, questions, client=client)  # fmt: skip


def rates(results, name):
    return {m.name: m.rate for m in results[name][1]}


def test_without_the_search_tool_the_model_never_sees_it_and_selection_drops(results):
    traces, _ = results["no search step"]
    assert all("search_notes" not in t.tools for t in traces)
    assert rates(results, "no search step")["tool selection accuracy"] < rates(results, "baseline")["tool selection accuracy"]


def test_a_guessing_model_loses_grounding_and_completion_but_not_tool_selection(results):
    base, guess = rates(results, "baseline"), rates(results, "guesses")
    assert guess["tool selection accuracy"] == base["tool selection accuracy"]  # it still searched
    assert guess["claim grounding"] < base["claim grounding"] == 1.0
    assert guess["task completion"] < base["task completion"]
    q15 = next(t for t in results["guesses"][0] if t.question.id == "q15")
    assert "Sources: /notes/strict-mode.md" in q15.answer and q15.read == {}


def test_the_table_shows_each_version_and_how_far_it_moved(results):
    table = comparison_table(results).splitlines()
    assert table[0].split() == ["metric", "baseline", "no", "search", "step", "guesses"]
    grounding = next(line for line in table if line.startswith("claim grounding"))
    assert "100%" in grounding and "(-" in grounding


def test_the_chinese_table_labels_each_version_and_keeps_the_figures(results, monkeypatch):
    english = comparison_table(results).splitlines()
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    table = comparison_table(results).splitlines()
    assert table[0].split() == ["指标", "基线", "去掉搜索步骤", "靠猜"]
    assert not any(name in table[0] for name in ("baseline", "no search step", "guesses"))
    assert [line.split()[-3:] for line in table[1:]] == [
        [cell.replace("n/a", "不适用") for cell in line.split()[-3:]] for line in english[1:]]
    assert list(results) == ["baseline", "no search step", "guesses"]  # the keys code reads stay English


def test_the_guessing_model_guesses_in_the_language_of_the_answer_it_replaces():
    from course_lib.evaluation import edition_notes, questions_file, run_task

    [q15] = [q for q in load_questions(questions_file("zh-CN")) if q.id == "q15"]
    with openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, max_retries=0,
                       http_client=httpx.Client(transport=offline_transport())) as client:  # fmt: skip
        guessed = run_task(q15, client=Guesses(client), root=edition_notes("zh-CN"))
    assert guessed.answer == "通常的做法在这里也适用：按标准步骤依次执行，每一步都检查结果。\n\n来源：/notes/strict-mode.md"
    assert [c.why for c in guessed.ungrounded()] == ["not found anywhere: no note was read"]


def test_on_a_paid_endpoint_compare_says_how_many_requests_first_and_stays_offline(monkeypatch, capsys):
    # Regression (issue 27): compare sent about 250 requests to a paid endpoint without a word.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing answers there: a request would fail
    monkeypatch.delenv("COURSE_PAID_RUNS", raising=False)
    monkeypatch.setenv("COURSE_LANG", "en")
    questions = [q for q in load_questions() if q.id in {"q01", "q15"}]
    results = compare({"baseline": None, "guesses": Guesses}, questions)
    line = capsys.readouterr().out.strip()
    assert line.startswith("The comparison would send about 16 requests to 127.0.0.1") and "COURSE_PAID_RUNS=16" in line
    assert [t.status for t in results["baseline"][0]] == ["completed", "completed"]  # it ran: on the offline model
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    compare({"baseline": None}, questions[:1] * 3)
    assert capsys.readouterr().out.startswith("这次对比会向 127.0.0.1")


def test_offline_compare_says_nothing_about_cost(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    compare({"baseline": None}, [q for q in load_questions() if q.id == "q13"])
    assert capsys.readouterr().out == ""
