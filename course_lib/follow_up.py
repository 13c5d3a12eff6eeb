"""The step between the answer and the learning gap: ask the learner a follow-up question, grade the reply.

The source's run of the notes assistant has the model "generate a follow-up question and evaluate
the user's answer" before it proposes a gap. Both halves must rest on the notes, like the answer:

- `follow_up(read, answer)` picks a sentence of a note the task read that the answer did *not*
  use (the next thing worth checking), and asks the learner to fill in its key terms (the words
  of that sentence rarest in the notes; in a Chinese note, the course concepts it names) and
  explain it;
- `grade(reply, question)` checks the reply against that sentence: which key terms it has,
  which it misses, and — when it misses any — the `save_learning_gap` arguments that name the
  note as evidence (the assistant proposes them; a person approves, as for any write).

The offline model cannot write questions, so this is app code; a real model may word a better
question, but the grade must still be computed against the note, not against what the model
believes. What the learner reads (the question, the feedback, the drafted gap) follows the
edition's language (`course_lib.lang.say`); the note's sentence is quoted as written.

    question = follow_up(trace.read, trace.answer)
    print(question.text)
    result = grade("It needs stop conditions, like a step budget.", question)
    result.verdict, result.missing, result.gap
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from course_lib.grounding import claims, sentences, words
from course_lib.grounding.meaning import mentions
from course_lib.lang import say
from course_lib.offline_model.terms import concepts

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

KEY_TERMS = 2  # blanks per question
PLAIN = frozenset("before after another cannot itself should would could whether such other same next first then "
                  "still never always make makes made keeps need needs being able call calls".split())  # fmt: skip
"""Words never blanked: they carry no idea of their own."""


@dataclass(frozen=True)
class FollowUp:
    """A question about one sentence of one note the task read."""

    path: str
    title: str
    sentence: str  # the note's own words: what the reply is graded against
    key_terms: tuple[str, ...]

    @property
    def text(self) -> str:
        """The question as the learner sees it: the sentence with its key terms blanked."""
        blanked = self.sentence
        for term in self.key_terms:  # a whole word; a Chinese term has no word boundaries to respect
            edge = "" if _CJK.search(term) else r"\b"
            blanked = re.sub(rf"(?i){edge}{re.escape(term)}{edge}", "____", blanked, count=1)
        return say("Follow-up on your note {title!r} ({path}): fill in the blanks and say in one sentence why it "
                   "matters.\n  {blanked}", "追问你的笔记 {title!r}（{path}）：填上空格，并用一句话说明它为什么重要。\n  {blanked}",
                   title=self.title, path=self.path, blanked=blanked)  # fmt: skip


@dataclass(frozen=True)
class Grade:
    """What the reply got right and wrong, against the note."""

    verdict: str  # "correct", "partly" or "not yet"
    covered: tuple[str, ...]
    missing: tuple[str, ...]
    feedback: str
    gap: dict[str, str] | None  # `save_learning_gap` arguments when something is missing

    def __str__(self) -> str:
        return self.feedback


def _note_sentences(text: str) -> tuple[str, list[tuple[int, str]]]:
    """The note's title and its sentences, each with the number of its line."""
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    title = lines[0][1].removeprefix("# ").strip() if lines and lines[0][1].startswith("# ") else ""
    body = [(n, line) for n, line in lines[1 if title else 0 :] if not line.startswith(("Updated:", "TODO"))]
    return title, [(n, s) for n, line in body for s in sentences(line)]


def follow_up(read: dict[str, str], answer: str | None, *, corpus: Iterable[str] = ()) -> FollowUp | None:
    """A question on the first sentence of a read note (cited notes first) that `answer` does not
    contain; None when every read note is a stub or fully quoted. Key terms are the sentence's
    content words found in the fewest texts of `corpus` (default: the notes read)."""
    texts = list(corpus) or list(read.values())
    cited = [p for p in read if p in (answer or "")]
    used = {(claim.source, n) for claim in claims(answer, read) if claim.grounded for n in claim.lines}  # in any words
    for path in cited + [p for p in read if p not in cited]:
        if "TODO" in read[path]:
            continue
        title, candidates = _note_sentences(read[path])
        for number, sentence in candidates:
            if sentence in (answer or "") or (path, number) in used or len(words(sentence)) < 4:
                continue
            terms = [w for w in re.findall(r"[A-Za-z][A-Za-z_-]+", sentence)
                     if w.lower() in words(sentence) and len(w) >= 5 and w.lower() not in PLAIN]  # fmt: skip
            terms += concepts(sentence)  # Chinese has no spaces: the course concepts it names are its words
            if len(terms) < KEY_TERMS:
                continue
            rarity = {t: sum(t.lower() in text.lower() for text in texts) for t in dict.fromkeys(terms)}
            key = sorted(rarity, key=lambda t: (rarity[t], -len(t)))[:KEY_TERMS]
            return FollowUp(path, title or path, sentence, tuple(sorted(key, key=sentence.index)))
    return None


def _says(reply: str, term: str) -> bool:
    """The reply names the term: as written (a stem: "conditions" is "condition"), or in other words the
    concept table knows ("in parallel" for "concurrently", 同时 for 并发)."""
    if _CJK.search(term):
        return term in reply or mentions(reply, term)  # Chinese words do not inflect
    stem = term.lower()[: max(4, len(term) - 2)]  # "conditions" matches "condition", "stops" matches "stop"
    return any(word.startswith(stem) for word in re.findall(r"[a-z0-9_-]+", reply.lower())) or mentions(reply, term)


def grade(reply: Any, question: FollowUp) -> Grade:
    """Grade the learner's `reply` against the note sentence behind `question`."""
    text = reply if isinstance(reply, str) else ""
    covered = tuple(t for t in question.key_terms if _says(text, t))
    missing = tuple(t for t in question.key_terms if t not in covered)
    verdict = "correct" if not missing else "partly" if covered else "not yet"
    fields = {"sentence": question.sentence, "path": question.path}
    if not missing:
        return Grade(verdict, covered, missing, say("✓ correct: {terms} — as your note says: {sentence!r} [{path}]",
                                                    "✓ 正确：{terms_zh}，和你的笔记说的一样：{sentence!r} [{path}]",
                                                    terms=", ".join(covered), terms_zh="、".join(covered), **fields), None)  # fmt: skip
    mark = say("~ partly", "~ 部分正确") if covered else say("✗ not yet", "✗ 还不对")
    feedback = say("{mark}: missing {terms}; your note says: {sentence!r} [{path}]",
                   "{mark}：缺少 {terms_zh}；你的笔记是这样说的：{sentence!r} [{path}]",
                   mark=mark, terms=", ".join(map(repr, missing)), terms_zh="、".join(map(repr, missing)), **fields)
    gap = {"topic": question.title[:120],
           "evidence": say("{path}: the reply to a follow-up missed {terms} ({sentence})",
                           "{path}：对追问的回答缺少 {terms_zh}（{sentence}）", terms=", ".join(missing),
                           terms_zh="、".join(missing), **fields)[:1000],
           "suggestion": say("Re-read {path} and explain in your own words: {sentence}",
                             "重读 {path}，用你自己的话解释：{sentence}", **fields)[:1000]}  # fmt: skip
    return Grade(verdict, covered, missing, feedback, gap)
