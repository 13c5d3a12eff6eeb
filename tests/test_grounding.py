"""Claim-level grounding: each claim of an answer checked, by meaning, against what the task really read."""

import pytest

from course_lib.grounding import citations, claims, is_frame, missing_points, plain, sentences, ungrounded, words
from course_lib.grounding.meaning import judge, mentions
from course_lib.paths import fixtures_dir
from grounding_corpus import EN, HELD_OUT_EN, HELD_OUT_ZH, KNOWN_MISSES, ZH

NOTE = ("# Retries\nRetry only failures that can recover on their own, and only within a budget.\n"
        "TIMEOUT is worth another attempt; FORBIDDEN fails the same way every time.\n")  # fmt: skip
READ = {"/notes/retries.md": NOTE}
STUB = {"/notes/stub.md": "# Stub\nTODO: write this.\n"}
PARALLEL = {"/notes/p.md": "# Parallel calls\nIndependent reads can run concurrently.\n"
                           "A step that needs the result of another must wait for it.\n"}


def test_a_quoted_sentence_rests_on_the_line_it_cites():
    answer = ("From your notes:\n- Retry only failures that can recover on their own, and only within a budget."
              " [/notes/retries.md:2]\n\nSources: /notes/retries.md")  # fmt: skip
    [claim] = claims(answer, READ)
    assert claim.grounded and claim.source == "/notes/retries.md" and claim.lines == (2,) and claim.where == "/notes/retries.md:2"
    assert claim.cited == "/notes/retries.md:2" and not claim.misplaced


def test_a_claim_that_cites_the_wrong_line_is_grounded_but_misplaced():
    [claim] = claims("- TIMEOUT is worth another attempt. [/notes/retries.md:2]", READ)
    assert claim.grounded and claim.where == "/notes/retries.md:3" and claim.misplaced
    [beyond] = ungrounded("- Retry within a budget. [/notes/retries.md:40]", READ)
    assert beyond.why == "cites line 40 of /notes/retries.md, which has no such line"


def test_a_quote_of_an_unread_note_or_an_invented_sentence_is_not_grounded():
    assert ungrounded("- Retry only failures that can recover. [/notes/other.md:2]", READ)[0].why == (
        "names /notes/other.md, which was not read")
    [invented] = ungrounded("Freeze the backbone before you fine-tune the head.", READ)
    assert invented.why == "not found in any note read"
    assert ungrounded("Freeze the backbone first.", {})[0].why == "not found anywhere: no note was read"
    [always] = ungrounded("Always retry a write three times.", READ)  # it says the opposite of "retry only …"
    assert always.contradicted and always.why == "/notes/retries.md: line 2 says the opposite: 'only', not 'always'"


def test_a_paraphrase_in_other_words_is_grounded_and_a_reversal_with_the_notes_words_is_not():
    # Regression (issue 28): lexical grounding called a faithful paraphrase "not found in any note read",
    # and passed the note's own words with the meaning turned around.
    assert ungrounded("Reads that don't depend on each other may run at the same time. [/notes/p.md:2]", PARALLEL) == []
    [reversed_meaning] = ungrounded("Independent reads must wait; a step that needs the result of another can run "
                                    "concurrently.", PARALLEL)  # fmt: skip
    assert reversed_meaning.contradicted and reversed_meaning.why.startswith("/notes/p.md: line 2 says the opposite")
    [swapped] = ungrounded("FORBIDDEN is worth another attempt.", READ)
    assert swapped.why == "/notes/retries.md: line 3 says this of timeout, not of forbidden"


@pytest.mark.parametrize("edition", ["en", "zh-CN"])
def test_the_paraphrase_and_reversal_corpora(edition):
    """Every paraphrase rests on its line (and on its note); no reversal rests on its note."""
    corpus = EN + HELD_OUT_EN if edition == "en" else ZH + HELD_OUT_ZH
    root = fixtures_dir() / "notes" if edition == "en" else fixtures_dir() / "zh-CN" / "notes"
    missed_paraphrases, passed_reversals, total_p, total_r = [], [], 0, 0
    for name, line, paraphrases, reversals in corpus:
        text = (root / name).read_text(encoding="utf-8")
        read = {f"/notes/{name}": text}
        for paraphrase in paraphrases:
            total_p += 1
            found = claims(f"- {paraphrase} [/notes/{name}:{line}]", read)
            if not found or any(not claim.grounded or claim.misplaced for claim in found):
                missed_paraphrases.append((name, line, paraphrase, [claim.why for claim in found]))
        for reversal in reversals:
            total_r += 1
            if any(c.grounded for c in claims(reversal, read)):
                passed_reversals.append((name, line, reversal))
    # The figures (README, "what each metric can and cannot see"): the known misses, and no others.
    assert missed_paraphrases == [], missed_paraphrases
    assert {r for _, _, r in passed_reversals} <= KNOWN_MISSES, passed_reversals
    assert total_p >= 35 and total_r >= 35


def test_a_closing_pleasantry_markdown_and_a_reworded_lead_in_are_not_claims():
    answer = ("Here's what I found in your notes:\n\n* **Retry only failures that can recover on their own**, and only "
              "within a budget. [/notes/retries.md:2]\n\n**Sources:** /notes/retries.md\n\n"
              "Let me know if you'd like anything else! 😊")  # fmt: skip
    assert [(c.text, c.where) for c in claims(answer, READ)] == [
        ("Retry only failures that can recover on their own, and only within a budget.", "/notes/retries.md:2")]
    for line in ("I hope this helps. Just ask if you want more!", "Happy to help with anything else you need. 😊",
                 "希望这对你有帮助，还有问题尽管问。😊", "需要更多内容的话，再叫我就好！", "我在你的笔记里找到了这些："):
        assert is_frame(line), line
    assert not is_frame("Retry only what can recover.") and not is_frame("TIMEOUT is retryable.")
    assert plain("1. **Note** `call_id` [link](/notes/a.md) _x_") == "Note call_id link (/notes/a.md) x"


def test_reordered_lines_and_sources_first_give_the_same_claims():
    a = "- TIMEOUT is worth another attempt. [/notes/retries.md:3]\n- Retry only within a budget. [/notes/retries.md:2]"
    b = "Sources: /notes/retries.md\n\n- Retry only within a budget. [/notes/retries.md:2]\n- TIMEOUT is worth another attempt. [/notes/retries.md:3]"
    assert sorted(c.where for c in claims(a, READ)) == sorted(c.where for c in claims(b, READ)) == [
        "/notes/retries.md:2", "/notes/retries.md:3"]


def test_an_answer_that_claims_nothing_has_no_claims():
    assert claims("", READ) == [] and claims("I hope this helps!", READ) == [] and claims(None, READ) == []


def test_negative_claims_are_checked_against_what_was_read_in_any_wording():
    assert ungrounded("Your notes do not mention: kubernetes, pods.", READ) == []
    [wrong] = ungrounded("Your notes do not mention: budget.", READ)
    assert wrong.why == "/notes/retries.md does mention 'budget'"
    for sentence in ("Your notes don't cover budgets.", "There's nothing in your notes about budgets.",
                     "I couldn't find anything about budgets in your notes.", "Budgets are not mentioned in your notes."):
        assert [c.why.lower() for c in ungrounded(sentence, READ)] == ["/notes/retries.md does mention 'budgets'"], sentence
    # Regression (issue 28): "do not mention X" passed when the note says X in other words.
    [parallel] = ungrounded("Your notes do not mention parallel reads.", PARALLEL)
    assert parallel.why == "/notes/p.md does mention 'parallel reads'"  # "Independent reads can run concurrently"
    [tools] = ungrounded("Your notes do not mention: tools.", {"/notes/f.md": "# f\nA function call carries arguments.\n"})
    assert tools.why == "/notes/f.md does mention 'tools'"  # a function call is a tool call


def test_a_negative_claim_counts_words_as_the_search_does():
    [timeouts] = ungrounded("Your notes do not mention: TIMEOUTS.", READ)
    assert timeouts.why == "/notes/retries.md does mention 'TIMEOUTS'"
    [plural] = ungrounded("Your notes do not mention: workflows.", {"/notes/w.md": "# Workflow vs Agent\nTODO: a workflow…"})
    assert plural.why == "/notes/w.md does mention 'workflows'"  # a stub was read too: it counts


def test_a_negative_claim_with_nothing_read_has_no_ground():
    [claim] = ungrounded("Your notes do not mention: budget.", {})
    assert claim.why == "no note was read, so nothing shows what the notes lack"
    lacks = "The evidence is missing: the notes I read () do not mention budget. I won't answer from memory."
    assert ungrounded(lacks, READ)[0].why == "no note was read, so nothing shows what the notes lack"
    assert ungrounded("Your notes do not mention: ---.", READ)[0].why == "names no word to look for"


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
    assert ungrounded("I searched your notes and read /notes/retries.md.", READ) == []
    assert ungrounded("I read /notes/other.md.", READ)[0].why == "names /notes/other.md, which was not read"


def test_points_are_judged_by_meaning():
    answer = "- A step that needs another step's result has to wait for it. [/notes/p.md:3]"
    assert missing_points(answer, [("must wait",)]) == []
    assert missing_points("- Independent reads never wait. [/notes/p.md:2]", [("must wait",)]) == ["must wait"]
    assert missing_points("Use TIMEOUT retries within a budget", [("timeout",), ("budget", "jitter")]) == ["budget + jitter"]
    assert missing_points("这一步必须等它完成。", [("必须等待",)]) == []


def test_helpers():
    assert sentences("One claim. Another one! A third?") == ["One claim.", "Another one!", "A third?"]
    assert words("The call_id is a string") == {"call_id", "string"}
    assert citations("x [/notes/a.md:4-5] y (/notes/b.md, line 3) z /notes/c.md#L2") == [
        "/notes/a.md:4-5", "/notes/b.md:3", "/notes/c.md:2"]
    assert judge("", {1: "x"}).why == "says nothing that can be checked"
    assert mentions("Independent reads can run concurrently.", "parallel") and not mentions("Retry later.", "parallel")


# ---- the zh-CN edition's answers: the same claims, in Chinese ------------------------------------

ZH_NOTE = "# 重试\n只重试那些能自己恢复的失败，而且只在预算之内重试。\nTIMEOUT 值得再试一次；FORBIDDEN 每次都会以同样的方式失败。\n"
ZH_READ = {"/notes/retries.md": ZH_NOTE}


def test_a_chinese_answer_is_cut_into_the_same_claims():
    answer = ("根据你的笔记：\n- 只重试那些能自己恢复的失败，而且只在预算之内重试。 [/notes/retries.md:2]\n"
              "你的笔记没有提到：抖动。\n\n来源：/notes/retries.md\n\n我建议保存这个学习缺口，等你批准后再保存：重试。")  # fmt: skip
    assert [(c.text, c.where) for c in claims(answer, ZH_READ)] == [
        ("只重试那些能自己恢复的失败，而且只在预算之内重试。", "/notes/retries.md:2"),
        ("你的笔记没有提到：抖动。", "/notes/retries.md")]  # the frame lines (根据…, 来源…, 我建议…) are not claims


def test_a_chinese_negative_claim_is_checked_against_what_was_read():
    [wrong] = ungrounded("你的笔记没有提到：预算、抖动。", ZH_READ)
    assert wrong.why == "/notes/retries.md does mention '预算'"
    strict = {"/notes/strict-mode.md": "# 严格模式\n严格模式有它自己的规则。\n"}
    assert ungrounded("你的笔记没有提到：模式。", strict)[0].why == "/notes/strict-mode.md does mention '模式'"
    assert ungrounded("你的笔记没有提到：抖动。", {})[0].why == "no note was read, so nothing shows what the notes lack"
    [again] = ungrounded("你的笔记里没有提到再试。", ZH_READ)  # 再试 is 重试 in other words
    assert again.why == "/notes/retries.md does mention '再试'"


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


def test_a_chinese_paraphrase_is_grounded_and_a_chinese_reversal_is_not():
    [claim] = claims("只重试能自己恢复的失败，而且在预算之内。", ZH_READ)
    assert claim.where == "/notes/retries.md:2"
    assert ungrounded("先冻结主干网络，再训练分类头。", ZH_READ)[0].why == "not found in any note read"
    assert sentences("第一句。第二句！第三句？") == ["第一句。", "第二句！", "第三句？"]
    # Regression (issue 28): the note's characters, the meaning reversed, passed the character-pair check.
    [swapped] = ungrounded("FORBIDDEN 值得再试一次；TIMEOUT 每次都会以同样的方式失败。", ZH_READ)
    assert swapped.contradicted
