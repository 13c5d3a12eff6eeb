"""Claim-level grounding: is every sentence of an answer traceable to a note the task really read?

Citation checks (`evaluation.citation_problems`) look at the *paths* an answer names. This looks
at what the answer *says*. The answer is cut into claims, and each claim is checked against what
the task's trace holds (the notes `read_note` returned, the paths `search_notes` found, the
records saved):

    - a sentence [/notes/x.md]        the sentence is in that note (or nearly all its words are)
    - Your notes do not mention: a, b  at least one note was read, and none of them contains a or b
                                       (as the search counts words: retries = retry, workflows =
                                       workflow; stubs and titles count, they were read too)
    /notes/x.md is only a stub         that note was read and is a TODO
    The evidence is missing: …         each reason holds: the search found nothing, the notes
                                       named were read and lack the words, the stub is a stub
    Saved the learning gap as record … that record exists;  "I did not save …": none does
    any other sentence                 most of its content words occur in one note read

The check is lexical: it sees words, not meaning. A sentence that keeps a note's words and swaps
who does what ("independent reads must wait") passes it, and so does a note that says the same
thing in other words ("function calls" for tool calls). Notebook 09 shows one answer that fools it.

Lines that only frame the answer ("From your notes:", "Sources: …", the proposal of a gap, the
greeting of a no-tool reply) are not claims. The zh-CN edition's answers say the same things in
Chinese (根据你的笔记：…, 你的笔记没有提到：a、b。, 证据不足：…；…, 来源：…) and are cut the same way;
Chinese words are counted as the search counts them, by character pairs.

    for claim in claims(answer, read, found=found, saved=saved):
        print("✓" if claim.grounded else "✗", claim.text, "→", claim.source or claim.why)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from course_lib.lang import say
from course_lib.words import tokens

OVERLAP = 0.8  # a free sentence is traceable when this share of its content words is in one note
STOPWORDS = frozenset(
    "the a an and or of to in on for with is are was were be been it its this that these those as by at from "
    "not no but if then so than can may must do does did your you my i we they there what which when how why "
    "only one two also into each every any all their them our out up more most very just".split()
)  # fmt: skip
# The offline model's lines, in English and in the zh-CN edition's Chinese (`offline_model.wording`).
_FRAME = re.compile(r"^(From your notes:|Sources:|I propose to save this learning gap|I found no learning gap to save|"
                    r"I answer questions from your notes|根据你的笔记：|来源：|我建议保存这个学习缺口|我没有找到需要保存的学习缺口|"
                    r"我根据你的笔记回答问题)")  # fmt: skip
_BULLET = re.compile(r"^- (.+?)(?: \[(/[^\]\s]+)\])?$")
_NOT_MENTIONED = re.compile(r"^(?:Your notes do not mention: (.+?)\.?|你的笔记没有提到：(.+?)。?)$")
_STUB = re.compile(r"^(/\S+) (?:is only a stub\b|只是一个草稿)")
_SAVED = re.compile(r"^(?:Saved the learning gap as record |已将学习缺口保存为记录 )([\w-]+)")
_NOT_SAVED = re.compile(r"^(?:I did not save the learning gap\b|我没有保存这个学习缺口)")
_MISSING = re.compile(r"^(?:The evidence is missing: (.*?)\.?(?: I won't answer from memory\.)?|"
                      r"证据不足：(.*?)。?(?:我不会凭记忆回答。)?)$")  # fmt: skip
_REASONS = re.compile(r"; |；")
_SEARCH_EMPTY = re.compile(r"^(?:searching your notes for .* found no matching note|在你的笔记中搜索 .* 没有找到匹配的笔记)$")
_READ_LACKS = re.compile(r"^(?:the notes I read \(([^)]*)\) do not mention (.+)|我读过的笔记（([^）]*)）没有提到 (.+))$")
_LIST = re.compile(r"[,、]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _groups(match: re.Match[str]) -> list[str]:
    """The groups of whichever alternative (English or Chinese) matched, in order."""
    return [g for g in match.groups() if g is not None]


def _trace() -> str:
    """The `source` of a claim about the run itself (a search that found nothing, a record saved)."""
    return say("the trace", "轨迹")


@dataclass(frozen=True)
class Claim:
    """One claim of an answer: its text, the note (or trace fact) it traces to, and why not if not."""

    text: str
    source: str | None  # a note path, or "the trace" (轨迹 in zh-CN) for claims about the run itself
    why: str = ""  # what is wrong, when `source` is None

    @property
    def grounded(self) -> bool:
        return self.source is not None


def words(text: str) -> set[str]:
    """The content words of `text`: lower case, stop words and words under 3 letters dropped; for
    Chinese, which has no spaces, the character bigrams of each run (as the notes search counts them)."""
    english = {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) >= 3 and w not in STOPWORDS}
    return english | {run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}


def _mentions(text: str, term: str) -> bool:
    """`text` holds `term` as the notes search counts words: every token of it (stems, so TIMEOUTS is
    TIMEOUT and workflows is workflow; the character bigrams of a Chinese term)."""
    wanted = set(tokens(term))
    return bool(wanted) and wanted <= set(tokens(text))


def _traced(sentence: str, read: dict[str, str], path: str | None = None) -> Claim:
    """A sentence of the notes: in the note it names (or, without a path, in the note that shares most words)."""
    candidates = {path: read[path]} if path in read else {} if path else read
    if path and path not in read:
        return Claim(sentence, None, say("names {paths}, which was not read", "标注的 {paths} 没有读过", paths=path))
    own = words(sentence)
    best, share = None, 0.0
    for note, text in candidates.items():
        if sentence in text:
            return Claim(sentence, note)
        overlap = len(own & words(text)) / len(own) if own else 0.0
        if overlap > share:
            best, share = note, overlap
    if best is not None and share >= OVERLAP:
        return Claim(sentence, best)
    if path:
        return Claim(sentence, None, say("not found in {path}", "在 {path} 里找不到", path=path))
    if read:
        return Claim(sentence, None, say("not found in any note read", "在读过的任何笔记里都找不到"))
    return Claim(sentence, None, say("not found anywhere: no note was read", "哪里都找不到：没有读过任何笔记"))


def _lacks(text: str, terms: Iterable[str], read: dict[str, str], paths: Iterable[str] | None = None) -> Claim:
    """A claim that the notes read (or `paths` among them) do not mention any of `terms`: grounded
    only when at least one note was read and none of them holds any of the terms. Nothing read
    means nothing was looked at, so the claim has no ground."""
    paths = list(read) if paths is None else list(paths)
    terms = [t for t in terms if t]
    unread = [p for p in paths if p not in read]
    if unread:
        return Claim(text, None, say("names {paths}, which was not read", "标注的 {paths} 没有读过", paths=", ".join(unread)))
    if not paths:
        return Claim(text, None, say("no note was read, so nothing shows what the notes lack",
                                     "没有读过任何笔记，所以没有什么能说明笔记缺了什么"))
    wordless = [t for t in terms if not tokens(t)]
    if wordless or not terms:
        return Claim(text, None, say("names no word to look for", "没有给出要找的词"))
    said = [(t, p) for t in terms for p in paths if _mentions(read[p], t)]
    if said:
        term, path = said[0]
        return Claim(text, None, say("{path} does mention {term!r}", "{path} 其实提到了 {term!r}", path=path, term=term))
    return Claim(text, ", ".join(paths))


def _missing_reasons(line: str, reasons: str, read: dict[str, str], found: list[str]) -> list[Claim]:
    out = []
    for reason in (r.strip() for r in _REASONS.split(reasons) if r.strip()):
        if _SEARCH_EMPTY.match(reason):
            out.append(Claim(reason, _trace()) if not found else Claim(reason, None, say("the search found {path}", "搜索找到了 {path}", path=found[0])))
        elif match := _STUB.match(reason):
            out.append(_stub(reason, match.group(1), read))
        elif match := _READ_LACKS.match(reason):
            listed, lacked = _groups(match)
            paths = [p.strip() for p in _LIST.split(listed) if p.strip()]
            out.append(_lacks(reason, [t.strip() for t in _LIST.split(lacked)], read, paths))
        else:
            out.append(Claim(reason, _trace()))  # e.g. "search_notes failed (…)": a fact of the run, shown in it
    return out or [Claim(line, _trace())]


def _stub(text: str, path: str, read: dict[str, str]) -> Claim:
    if path not in read:
        return Claim(text, None, say("{path} was not read", "{path} 没有读过", path=path))
    return Claim(text, path) if "TODO" in read[path] else Claim(text, None, say("{path} is not a stub", "{path} 不是草稿", path=path))


def sentences(text: str) -> list[str]:
    """`text` cut after each `.`, `!` or `?` that ends a sentence, and after each Chinese 。！？."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|(?<=[。！？])", text) if s.strip()]


def claims(answer: str | None, read: dict[str, str], *, found: Iterable[str] = (),
           saved: Iterable[str] = ()) -> list[Claim]:  # fmt: skip
    """Every claim of `answer`, each checked against the notes read (path → text), the paths the
    searches found and the ids of the records saved in the same task."""
    found, saved = list(found), set(saved)
    out: list[Claim] = []
    for line in (line.strip() for line in (answer or "").splitlines()):
        if not line or _FRAME.match(line):
            continue
        if match := _BULLET.match(line):
            out.append(_traced(match.group(1), read, match.group(2)))
        elif match := _NOT_MENTIONED.match(line):
            out.append(_lacks(line, [t.strip() for t in _LIST.split(_groups(match)[0])], read))
        elif match := _STUB.match(line):
            out.append(_stub(line, match.group(1), read))
        elif match := _SAVED.match(line):
            ok = match.group(1) in saved
            out.append(Claim(line, _trace()) if ok else Claim(line, None, say("no record {id} was saved", "没有保存过记录 {id}",
                                                                                id=match.group(1))))  # fmt: skip
        elif _NOT_SAVED.match(line):
            out.append(Claim(line, _trace()) if not saved else Claim(line, None, say("a record was saved", "保存了一条记录")))
        elif match := _MISSING.match(line):
            out += _missing_reasons(line, (_groups(match) or [""])[0], read, found)
        else:
            out += [_traced(sentence, read) for sentence in sentences(line)]
    return out


def ungrounded(answer: str | None, read: dict[str, str], **trace: Iterable[str]) -> list[Claim]:
    """The claims of `answer` that nothing in the task's trace supports."""
    return [claim for claim in claims(answer, read, **trace) if not claim.grounded]


def missing_points(answer: str | None, points: Iterable[Iterable[str]]) -> list[str]:
    """The points a complete answer must make that `answer` does not: each point is a few words
    that must all appear (case does not matter), e.g. ("must wait",) or ("timeout", "retry")."""
    text = (answer or "").lower()
    return [" + ".join(point) for point in points if not all(term.lower() in text for term in point)]
