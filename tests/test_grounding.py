"""Claim-level grounding: each sentence of an answer checked against what the task really read."""

from course_lib.grounding import claims, missing_points, sentences, ungrounded, words

NOTE = ("# Retries\nRetry only failures that can recover on their own, and only within a budget.\n"
        "TIMEOUT is worth another attempt; FORBIDDEN fails the same way every time.\n")  # fmt: skip
READ = {"/notes/retries.md": NOTE}
STUB = {"/notes/stub.md": "# Stub\nTODO: write this.\n"}


def test_a_quoted_sentence_traces_to_the_note_it_names():
    answer = ("From your notes:\n- Retry only failures that can recover on their own, and only within a budget."
              " [/notes/retries.md]\n\nSources: /notes/retries.md")  # fmt: skip
    [claim] = claims(answer, READ)
    assert claim.grounded and claim.source == "/notes/retries.md"


def test_a_quote_of_an_unread_note_or_an_invented_sentence_is_not_grounded():
    assert ungrounded("- Retry only failures that can recover. [/notes/other.md]", READ)[0].why == (
        "names /notes/other.md, which was not read")
    [invented] = ungrounded("Always retry a write three times.", READ)
    assert invented.why == "not found in any note read"
    assert ungrounded("Freeze the backbone first.", {})[0].why == "not found anywhere: no note was read"


def test_a_paraphrase_with_most_of_the_notes_words_is_traced():
    [claim] = claims("Retry failures that recover on their own, within a budget.", READ)
    assert claim.source == "/notes/retries.md"


def test_claims_about_what_the_notes_lack_are_checked_word_by_word():
    assert ungrounded("Your notes do not mention: kubernetes, pods.", READ) == []
    [wrong] = ungrounded("Your notes do not mention: budget.", READ)
    assert wrong.why == "/notes/retries.md does mention 'budget'"


def test_a_negative_claim_counts_words_as_the_search_does():
    # Regression: "workflows" was looked for as a whole word, so a note saying "workflow" let the claim pass.
    [timeouts] = ungrounded("Your notes do not mention: TIMEOUTS.", READ)
    assert timeouts.why == "/notes/retries.md does mention 'TIMEOUTS'"
    [plural] = ungrounded("Your notes do not mention: workflows.", {"/notes/w.md": "# Workflow vs Agent\nTODO: a workflow…"})
    assert plural.why == "/notes/w.md does mention 'workflows'"  # a stub was read too: it counts


def test_a_negative_claim_with_nothing_read_has_no_ground():
    # Regression: with no note read, "do not mention" was grounded without looking at anything.
    [claim] = ungrounded("Your notes do not mention: budget.", {})
    assert claim.why == "no note was read, so nothing shows what the notes lack"
    lacks = "The evidence is missing: the notes I read () do not mention budget. I won't answer from memory."
    assert ungrounded(lacks, READ)[0].why == "no note was read, so nothing shows what the notes lack"
    assert ungrounded("Your notes do not mention: ---.", READ)[0].why == "names no word to look for"


def test_the_check_is_lexical_a_swapped_sentence_passes_it():
    # What notebook 09 shows: the note's own words, the meaning reversed, and the check sees nothing wrong.
    note = {"/notes/p.md": "# Parallel calls\nIndependent reads can run concurrently.\n"
                           "A step that needs the result of another must wait for it.\n"}
    reversed_meaning = "Independent reads must wait; a step that needs the result of another can run concurrently."
    assert ungrounded(reversed_meaning, note) == []
    assert ungrounded("Your notes do not mention: tool.", note) == []  # the note says "step" and "reads", never "tool"


def test_evidence_missing_reasons_are_each_checked_against_the_trace():
    empty = "The evidence is missing: searching your notes for 'x' found no matching note. I won't answer from memory."
    assert ungrounded(empty, {}, found=[]) == []
    assert ungrounded(empty, {}, found=["/notes/retries.md"])[0].why == "the search found /notes/retries.md"
    lacks = "The evidence is missing: the notes I read (/notes/retries.md) do not mention budget. I won't answer from memory."
    assert ungrounded(lacks, READ)[0].why == "/notes/retries.md does mention 'budget'"
    stub = "The evidence is missing: /notes/stub.md is only a stub ('TODO'). I won't answer from memory."
    assert ungrounded(stub, STUB) == [] and ungrounded(stub, READ)[0].why == "/notes/stub.md was not read"


def test_saves_are_checked_against_the_records_and_framing_lines_are_not_claims():
    assert ungrounded("Saved the learning gap as record gap-0001.", {}, saved=["gap-0001"]) == []
    assert ungrounded("Saved the learning gap as record gap-0002.", {}, saved=[])[0].why == "no record gap-0002 was saved"
    assert ungrounded("I did not save the learning gap: rejected.", {}, saved=["gap-0001"])[0].why == "a record was saved"
    assert claims("From your notes:\n\nSources: /notes/retries.md\nI propose to save this learning gap, once you approve it: X.", READ) == []


def test_helpers():
    assert sentences("One claim. Another one! A third?") == ["One claim.", "Another one!", "A third?"]
    assert words("The call_id is a string") == {"call_id", "string"}
    assert missing_points("Use TIMEOUT retries within a budget", [("timeout",), ("budget", "jitter")]) == ["budget + jitter"]


# ---- the zh-CN edition's answers: the same claims, in Chinese ------------------------------------

ZH_NOTE = "# 重试\n只重试那些能自己恢复的失败，而且只在预算之内重试。\nTIMEOUT 值得再试一次；FORBIDDEN 每次都会以同样的方式失败。\n"
ZH_READ = {"/notes/retries.md": ZH_NOTE}


def test_a_chinese_answer_is_cut_into_the_same_claims():
    answer = ("根据你的笔记：\n- 只重试那些能自己恢复的失败，而且只在预算之内重试。 [/notes/retries.md]\n"
              "你的笔记没有提到：抖动。\n\n来源：/notes/retries.md\n\n我建议保存这个学习缺口，等你批准后再保存：重试。")  # fmt: skip
    assert [(c.text, c.source) for c in claims(answer, ZH_READ)] == [
        ("只重试那些能自己恢复的失败，而且只在预算之内重试。", "/notes/retries.md"),
        ("你的笔记没有提到：抖动。", "/notes/retries.md")]  # the frame lines (根据…, 来源…, 我建议…) are not claims


def test_a_chinese_negative_claim_is_checked_against_what_was_read():
    # Regression: "你的笔记没有提到：模式" about a note on strict mode was counted as a sentence nobody could check.
    [wrong] = ungrounded("你的笔记没有提到：预算、抖动。", ZH_READ)
    assert wrong.why == "/notes/retries.md does mention '预算'"
    strict = {"/notes/strict-mode.md": "# 严格模式\n严格模式有它自己的规则。\n"}
    assert ungrounded("你的笔记没有提到：模式。", strict)[0].why == "/notes/strict-mode.md does mention '模式'"
    assert ungrounded("你的笔记没有提到：抖动。", {})[0].why == "no note was read, so nothing shows what the notes lack"


def test_chinese_evidence_missing_reasons_saves_and_stubs_are_checked(monkeypatch):
    empty = "证据不足：在你的笔记中搜索 '量子计算' 没有找到匹配的笔记。我不会凭记忆回答。"
    assert ungrounded(empty, {}, found=[]) == []
    assert ungrounded(empty, {}, found=["/notes/retries.md"])[0].why == "the search found /notes/retries.md"
    lacks = "证据不足：我读过的笔记（/notes/retries.md）没有提到 预算、kubernetes。我不会凭记忆回答。"
    assert ungrounded(lacks, ZH_READ)[0].why == "/notes/retries.md does mention '预算'"
    stub = "证据不足：/notes/stub.md 只是一个草稿（'TODO：写完它。'）；我读过的笔记（/notes/retries.md）没有提到 抖动。我不会凭记忆回答。"
    both = {**ZH_READ, "/notes/stub.md": "# 草稿\nTODO：写完它。\n"}
    assert ungrounded(stub, both) == [] and len(claims(stub, both)) == 2
    assert ungrounded("已将学习缺口保存为记录 gap-0001。", {}, saved=["gap-0001"]) == []
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert ungrounded("已将学习缺口保存为记录 gap-0002。", {}, saved=[])[0].why == "没有保存过记录 gap-0002"
    assert claims("已将学习缺口保存为记录 gap-0001。", {}, saved=["gap-0001"])[0].source == "轨迹"
    assert ungrounded("/notes/retries.md 只是一个草稿，所以我没有使用它。", ZH_READ)[0].why == "/notes/retries.md 不是草稿"


def test_a_free_chinese_sentence_is_traced_by_its_character_pairs():
    [claim] = claims("只重试能自己恢复的失败，而且在预算之内。", ZH_READ)  # a paraphrase: most of its bigrams are in the note
    assert claim.source == "/notes/retries.md"
    assert ungrounded("先冻结主干网络，再训练分类头。", ZH_READ)[0].why == "not found in any note read"
    assert sentences("第一句。第二句！第三句？") == ["第一句。", "第二句！", "第三句？"]
    # and the same limit as in English: the note's characters, the meaning reversed, passes
    assert ungrounded("FORBIDDEN 值得再试一次；TIMEOUT 每次都会以同样的方式失败。", ZH_READ) == []
