"""The follow-up question: built from a note the task read, graded against that note."""

import pytest

from course_lib.follow_up import follow_up, grade

NOTE = ("# Agent loop vs tool calling\nTool calling is how a model asks for one call.\n\n"
        "An agent keeps state about a goal, reads each observation and chooses the next step itself.\n"
        "Updated: 2026-09-30\n")  # fmt: skip
READ = {"/notes/agent.md": NOTE, "/notes/stub.md": "# Stub\nTODO: write it.\n"}
ANSWER = "- Tool calling is how a model asks for one call. [/notes/agent.md]\n\nSources: /notes/agent.md"
CORPUS = [NOTE, "# Other\nThe goal of an agent retry is a result the caller chooses to keep.\n"]


@pytest.fixture
def question():
    return follow_up(READ, ANSWER, corpus=CORPUS)


def test_the_question_is_about_a_sentence_the_answer_did_not_use(question):
    assert question.path == "/notes/agent.md" and question.title == "Agent loop vs tool calling"
    assert question.sentence.startswith("An agent keeps state")
    assert question.key_terms == ("state", "observation")  # the rarest in the corpus: "agent", "goal" and "chooses" are in the other note too
    assert "An agent keeps ____ about a goal, reads each ____ and chooses" in question.text


def test_grading_names_what_is_missing_and_proposes_a_gap(question):
    good = grade("It keeps state on its goal and reads every observation.", question)
    assert (good.verdict, good.missing, good.gap) == ("correct", (), None)
    part = grade("It keeps state.", question)
    assert part.verdict == "partly" and part.missing == ("observation",)
    assert part.gap["topic"] == "Agent loop vs tool calling" and "/notes/agent.md" in part.gap["evidence"]
    assert grade("", question).verdict == grade(None, question).verdict == "not yet"
    assert "your note says: 'An agent keeps state" in str(part)


def test_no_question_from_stubs_or_fully_quoted_notes():
    assert follow_up({"/notes/stub.md": READ["/notes/stub.md"]}, "") is None
    assert follow_up(READ, ANSWER + "\n" + NOTE) is None


def test_the_chinese_edition_asks_and_grades_in_chinese_against_the_english_note(question, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert question.text == ("追问你的笔记 'Agent loop vs tool calling'（/notes/agent.md）：填上空格，并用一句话说明它为什么重要。\n"
                             "  An agent keeps ____ about a goal, reads each ____ and chooses the next step itself.")
    good = grade("它保存关于目标的 state，并在选择下一步之前读取每一个 observation。", question)
    assert good.verdict == "correct" and str(good).startswith("✓ 正确：state、observation，和你的笔记说的一样：'An agent")
    part = grade("它保存 state。", question)  # the same verdict as in English: the grade reads the note's words
    assert part.verdict == "partly" and str(part).startswith("~ 部分正确：缺少 'observation'；你的笔记是这样说的：")
    assert part.gap["evidence"] == ("/notes/agent.md：对追问的回答缺少 observation（An agent keeps state about a goal, "
                                    "reads each observation and chooses the next step itself.）")
    assert str(grade("它只是不停地调用工具。", question)).startswith("✗ 还不对：缺少 'state'、'observation'")


def test_a_chinese_note_gets_its_course_concepts_blanked_and_graded(monkeypatch):
    # The zh-CN edition's notes are Chinese: no spaces, so the words to blank are the concepts it names.
    note = ("# 智能体循环与工具调用\n工具调用是模型请求一次调用的方式。\n\n"
            "智能体围绕一个目标保存状态，读取每一次观察，自己选择下一步。\nUpdated: 2026-09-30\n")  # fmt: skip
    other = "# 重试\n智能体的重试要有预算，先读取错误码。\n"  # 读取 is common here: 状态 and 观察 are the rarest
    answer = "根据你的笔记：\n- 工具调用是模型请求一次调用的方式。 [/notes/agent.md]\n\n来源：/notes/agent.md"
    question = follow_up({"/notes/agent.md": note}, answer, corpus=[note, other])
    assert question.sentence.startswith("智能体围绕") and question.key_terms == ("状态", "观察")
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert question.text.endswith("\n  智能体围绕一个目标保存____，读取每一次____，自己选择下一步。")
    assert grade("它围绕目标保存状态，每一步之前读取观察。", question).verdict == "correct"
    part = grade("它保存状态。", question)
    assert part.missing == ("观察",) and part.gap["topic"] == "智能体循环与工具调用"
    assert part.gap["evidence"].startswith("/notes/agent.md：对追问的回答缺少 观察（智能体围绕")


def test_a_sentence_the_answer_used_in_other_words_is_not_asked_about():
    # The answer says the note's second sentence in its own words, citing its line: the follow-up
    # must not ask about what the answer already said (issue 28: meaning, not wording).
    answer = ("- An agent holds state about its goal, reads every observation and picks its next step on its own. "
              "[/notes/agent.md:5]\n\nSources: /notes/agent.md")  # fmt: skip
    question = follow_up(READ, answer, corpus=CORPUS)
    assert question is not None and question.sentence == "Tool calling is how a model asks for one call."


def test_a_reply_in_other_words_covers_the_key_term():
    note = {"/notes/p.md": "# Parallel calls\nIndependent reads of notes returned by one search can run concurrently.\n"}
    question = follow_up(note, "", corpus=list(note.values()))
    assert "concurrently" in question.key_terms
    assert "concurrently" in grade("Independent reads can run in parallel.", question).covered
