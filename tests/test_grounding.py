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
