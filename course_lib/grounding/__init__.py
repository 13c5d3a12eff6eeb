"""Claim-level grounding: does every claim of an answer rest on what the task really read?

Citation checks (`evaluation.citation_problems`) look at the *paths* an answer names. This looks
at what the answer *says*. The answer is cut into claims (its markdown, a closing pleasantry and
the lines that only frame it set aside), and each claim is checked against what the task's trace
holds: the notes `read_note` returned, the paths `search_notes` found, the records saved.

    a sentence [/notes/x.md:4]        the lines it cites (4, or 4-5) say the same thing
                                      (`meaning.judge`: in other words too; never the opposite);
                                      else the note it cites, else any note read
    Your notes do not mention X       at least one note was read and none of them names X, in any
     (or: "your notes don't cover X", of the words the concept table gives for it (a note on
      你的笔记没有提到：X, …)            "function calls" mentions tools; stubs and titles count)
    /notes/x.md is only a stub        that note was read and is a TODO
    The evidence is missing: …        each reason holds: the search found nothing, the notes
                                      named were read and lack the words, the stub is a stub
    Saved the learning gap as record … that record exists;  "I did not save …": none does

A claim is grounded when its meaning is in what was read: a paraphrase is, a sentence that keeps a
note's words and turns them around ("independent reads must wait") is not (`meaning`, which says
what it cannot see). Lines that only frame the answer ("From your notes:", "Here's what I found:",
"Sources: …", "I hope this helps!", 希望对你有帮助) are not claims; an answer made only of them
makes none, and the evaluation counts that as nothing grounded (`evaluation.claim_grounding`).

    for claim in claims(answer, read, found=found, saved=saved):
        print("✓" if claim.grounded else "✗", claim.text, "→", claim.where or claim.why)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from course_lib.chinese_words import CJK_RUN, PLAIN
from course_lib.grounding.concepts import CHAT_EN, CHAT_ZH, STOP_EN, STOP_ZH
from course_lib.grounding.meaning import Verdict, clauses, judge, mentions
from course_lib.lang import say

__all__ = ["Claim", "claims", "ungrounded", "missing_points", "sentences", "words", "plain", "citations", "is_frame"]

STOPWORDS = STOP_EN
_PATH = r"/[\w.\-/]*?\.md"
_CITE = re.compile(
    rf"\[(?P<p1>{_PATH})(?:(?::|#L|,\s*lines?\s*|\s+lines?\s*|\s+L)(?P<a1>\d+)(?:\s*[-–—]\s*L?(?P<b1>\d+))?)?\]"
    rf"|\((?P<p2>{_PATH})(?:(?::|#L|,\s*lines?\s*|\s+lines?\s*|\s+L)(?P<a2>\d+)(?:\s*[-–—]\s*L?(?P<b2>\d+))?|(?=\)\s*[.。]?\s*$))\)"
    rf"|(?P<p3>{_PATH})(?::|#L)(?P<a3>\d+)(?:\s*[-–—]\s*L?(?P<b3>\d+))?"
)
_ANY_PATH = re.compile(_PATH)
# The offline model's framing lines, in English and Chinese (`offline_model.wording`).
_FRAME = re.compile(r"^(From your notes:|Sources:|I propose to save this learning gap|I found no learning gap to save|"
                    r"I answer questions from your notes|根据你的笔记：|来源：|我建议保存这个学习缺口|我没有找到需要保存的学习缺口|"
                    r"我根据你的笔记回答问题)")  # fmt: skip
_SOURCES = re.compile(r"^(?:sources?|references?|cited notes?|来源|出处|参考)\s*[:：]?\s*", re.I)
_NOT_MENTIONED = re.compile(
    r"^(?:(?:your|the)\s+)?notes?(?:\s+I\s+read)?(?:\s*\([^)]*\))?\s+(?:do|does|did)(?:\s+not|n['’]t)\s+"
    r"(?:mention|cover|say anything about|discuss|talk about|contain|include|address|explain|describe|say)"
    r"(?:\s+anything\s+(?:about|on))?\s*[:：]?\s*(?P<x>.+?)[.。]?$"
    r"|^(?:there\s+is|there's)\s+nothing\s+(?:in\s+your\s+notes\s+)?(?:about|on)\s+(?P<y>.+?)(?:\s+in\s+your\s+notes)?[.。]?$"
    r"|^I\s+(?:could\s+not|couldn't|did\s+not|didn't)\s+find\s+anything\s+(?:about|on)\s+(?P<z>.+?)(?:\s+in\s+your\s+notes)?[.。]?$"
    r"|^(?P<w>.+?)\s+(?:is|are)\s+not\s+(?:mentioned|covered|discussed)\s+in\s+your\s+notes[.。]?$"
    r"|^你的笔记(?:里|中)?(?:并)?(?:没有|没)(?:提到|提及|涉及|讲到|说到|写到|谈到)(?:关于)?\s*[:：]?\s*(?P<v>.+?)(?:的内容)?[。.]?$"
    r"|^(?:你的)?笔记(?:里|中)没有(?:关于)?\s*(?P<u>.+?)的(?:内容|信息)[。.]?$",
    re.I,
)
_STUB = re.compile(r"^(/\S+) (?:is only a stub\b|只是一个草稿)")
_SAVED = re.compile(r"^(?:Saved the learning gap as record |已将学习缺口保存为记录 )([\w-]+)")
_NOT_SAVED = re.compile(r"^(?:I did not save the learning gap\b|我没有保存这个学习缺口)")
_MISSING = re.compile(r"^(?:The evidence is missing: (.*?)\.?(?: I won't answer from memory\.)?|"
                      r"证据不足：(.*?)。?(?:我不会凭记忆回答。)?)$")  # fmt: skip
_REASONS = re.compile(r"; |；")
_SEARCH_EMPTY = re.compile(r"^(?:searching your notes for .* found no matching note|在你的笔记中搜索 .* 没有找到匹配的笔记)$")
_READ_LACKS = re.compile(r"^(?:the notes I read \(([^)]*)\) do not mention (.+)|我读过的笔记（([^）]*)）没有提到 (.+))$")
_LIST = re.compile(r"\s*(?:,|、|，|;|；|\band\b|\bor\b|和|或)\s*")
_ACTIONS = frozenset("search searched read looked check checked find found look open opened 搜索 读 读过 读取 查看 找".split())


def _groups(match: re.Match[str]) -> list[str]:
    """The groups of whichever alternative (English or Chinese) matched, in order."""
    return [g for g in match.groups() if g is not None]


def _trace() -> str:
    """The `source` of a claim about the run itself (a search that found nothing, a record saved)."""
    return say("the trace", "轨迹")


@dataclass(frozen=True)
class Claim:
    """One claim of an answer: its text, the note (or trace fact) it rests on, and why not if not."""

    text: str
    source: str | None  # a note path, or "the trace" (轨迹 in zh-CN) for claims about the run itself
    why: str = ""  # what is wrong, when `source` is None
    lines: tuple[int, ...] = ()  # the lines of `source` it rests on (or contradicts)
    cited: str = ""  # the citation it carries, as written: "/notes/x.md:4-5"
    contradicted: bool = False  # it says the opposite of what was read

    @property
    def grounded(self) -> bool:
        return self.source is not None

    @property
    def where(self) -> str:
        """The note and lines it rests on ("/notes/x.md:4", "/notes/x.md:4-5"), or its source."""
        if not self.source or not self.lines:
            return self.source or ""
        span = str(self.lines[0]) if len(self.lines) == 1 else f"{self.lines[0]}-{self.lines[-1]}"
        return f"{self.source}:{span}"

    @property
    def misplaced(self) -> bool:
        """Grounded, but not in the lines it cites (a citation problem, not a grounding one)."""
        cited = _span(self.cited)
        return bool(self.grounded and cited and cited[1] and self.lines and not set(self.lines) <= set(cited[1]))


def _span(citation: str) -> tuple[str, tuple[int, ...]] | None:
    """(path, lines) of a citation as `citations` writes it ("/notes/x.md:4-5" → lines 4, 5)."""
    if not citation:
        return None
    path, _, span = citation.partition(":")
    if not span:
        return path, ()
    first, _, last = span.partition("-")
    a, b = int(first), int(last or first)
    return path, tuple(range(min(a, b), max(a, b) + 1)) if abs(b - a) < 200 else (a,)


def citations(text: str) -> list[str]:
    """The citations in `text`, each as "path" or "path:a" / "path:a-b": `[/notes/x.md:4]`,
    `[/notes/x.md:4-5]`, `(/notes/x.md, lines 4–5)`, `/notes/x.md#L4-L5`, `[/notes/x.md]`."""
    out = []
    for match in _CITE.finditer(text):
        path = match.group("p1") or match.group("p2") or match.group("p3")
        a = match.group("a1") or match.group("a2") or match.group("a3")
        b = match.group("b1") or match.group("b2") or match.group("b3")
        out.append(path + (f":{a}" + (f"-{b}" if b and b != a else "") if a else ""))
    return out


def plain(line: str) -> str:
    """A line of markdown as its words: list marks, headings, quotes, emphasis, code marks, link
    syntax and emoji removed (the text, the link target and the citations stay)."""
    line = re.sub(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d+[.)]\s+)+", "", line)
    line = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", line)  # [text](url) → text (url)
    line = re.sub(r"(\*\*|__)(.+?)\1", r"\2", line)
    line = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", line)
    line = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])", r"\1", line)
    line = line.replace("`", "")
    line = "".join(ch for ch in line if unicodedata.category(ch) not in ("So", "Sk", "Cs") and ch not in "\ufe0f\u200d")
    return re.sub(r"\s+", " ", line).strip()


def words(text: str) -> set[str]:
    """The content words of `text`: lower case, stop words and words under 3 letters dropped; for
    Chinese, which has no spaces, its words as the segmenter cuts them (two characters or more)."""
    english = {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) >= 3 and w not in STOPWORDS}
    chinese = {w for run in CJK_RUN.findall(text) for w in PLAIN.words(run) if len(w) > 1 and w not in STOP_ZH}
    return english | chinese


def is_frame(sentence: str) -> bool:
    """A sentence that frames the answer and claims nothing about the notes: "Here's what I found in
    your notes:", "I hope this helps!", "Let me know if you'd like more.", 希望对你有帮助。"""
    text = plain(_CITE.sub(" ", sentence))
    if _FRAME.match(text):
        return True
    english = [w.strip("'") for w in re.findall(r"[a-z][a-z']*", text.lower())]
    chinese = [w for run in CJK_RUN.findall(text) for w in PLAIN.words(run)]
    content = [w for w in english if w not in CHAT_EN and w not in STOP_EN and len(w) > 1]
    content += [w for w in chinese if w not in CHAT_ZH and w not in STOP_ZH and len(w) > 1]
    identifiers = re.findall(r"[A-Za-z0-9]+_[\w]+|[A-Z]{4,}|\d+", text)
    return not content and not identifiers and not _ANY_PATH.search(text)


def _about_the_run(sentence: str, read: dict[str, str], found: list[str]) -> Claim | None:
    """"I searched your notes and read /notes/a.md": a claim about the run, grounded when every note it
    names was read (or found). None when the sentence says something about the notes themselves."""
    text = plain(sentence)
    paths = _ANY_PATH.findall(text)
    if not paths:
        return None
    rest = _ANY_PATH.sub(" ", text)
    english = [w for w in re.findall(r"[a-z][a-z']*", rest.lower()) if w not in CHAT_EN and w not in STOP_EN and len(w) > 1]
    chinese = [w for run in CJK_RUN.findall(rest) for w in PLAIN.words(run) if w not in CHAT_ZH and w not in STOP_ZH and len(w) > 1]
    if any(w not in _ACTIONS for w in english + chinese):
        return None
    unknown = [p for p in paths if p not in read and p not in found]
    if unknown:
        return Claim(sentence, None, say("names {paths}, which was not read", "标注的 {paths} 没有读过", paths=", ".join(unknown)))
    return Claim(sentence, _trace())


def _note_lines(text: str) -> dict[int, str]:
    """A note's lines by number (1 is the first line of the file), blank ones left out."""
    return {n: line for n, line in enumerate(text.splitlines(), start=1) if line.strip()}


def _traced(sentence: str, read: dict[str, str], cited: list[str]) -> Claim:
    """A statement about the notes: in the lines it cites, else in the note it cites, else in any note read."""
    text = plain(_CITE.sub(" ", sentence)).strip(" -–—:;,")
    citation = cited[0] if cited else ""
    spans = [_span(c) for c in cited]
    named = [path for path, _ in (s for s in spans if s)]
    unread = [path for path in named if path not in read]
    if unread:
        return Claim(text, None, say("names {paths}, which was not read", "标注的 {paths} 没有读过", paths=", ".join(unread)),
                     cited=citation)  # fmt: skip
    for path, lines in (s for s in spans if s):
        numbered = _note_lines(read[path])
        beyond = [n for n in lines if n not in numbered]
        if lines and len(beyond) == len(lines):
            return Claim(text, None, say("cites line {n} of {path}, which has no such line", "引用了 {path} 的第 {n} 行，可那里没有这一行",
                                         n=beyond[0], path=path), cited=citation)  # fmt: skip
        if lines:
            verdict = judge(text, {n: numbered[n] for n in lines if n in numbered}, numbered)
            if verdict.supported or verdict.contradicted:
                return _claim(text, path, verdict, citation)
    notes = named or list(read)
    verdicts = {path: judge(text, _note_lines(read[path])) for path in notes}
    against = [(path, v) for path, v in verdicts.items() if v.contradicted]
    if against:
        return _claim(text, against[0][0], against[0][1], citation)
    supported = [(path, v) for path, v in verdicts.items() if v.supported]
    if supported:
        return _claim(text, supported[0][0], supported[0][1], citation)
    if named:
        why = next((v.why for v in verdicts.values() if v.why), "")
        return Claim(text, None, say("not found in {path}", "在 {path} 里找不到", path=", ".join(named)) + (f" ({why})" if why else ""),
                     cited=citation)  # fmt: skip
    if read:
        return Claim(text, None, say("not found in any note read", "在读过的任何笔记里都找不到"), cited=citation)
    return Claim(text, None, say("not found anywhere: no note was read", "哪里都找不到：没有读过任何笔记"), cited=citation)


def _claim(text: str, path: str, verdict: Verdict, citation: str) -> Claim:
    if verdict.supported:
        return Claim(text, path, lines=verdict.lines, cited=citation)
    return Claim(text, None, f"{path}: {verdict.why}", lines=verdict.lines, cited=citation, contradicted=verdict.contradicted)


def _mentioned(text: str, term: str) -> bool:
    """`text` names `term`: its concepts in any words the concept table gives (`meaning.mentions`), or
    its words as the search counts them (stems; a Chinese term as the segmenter cuts it)."""
    from course_lib.words import tokens

    wanted = set(tokens(term))
    return mentions(text, term) or (bool(wanted) and wanted <= set(tokens(text)))


def _lacks(text: str, terms: Iterable[str], read: dict[str, str], paths: Iterable[str] | None = None) -> Claim:
    """A claim that the notes read (or `paths` among them) do not mention any of `terms`: grounded
    only when at least one note was read and none of them names any of the terms, in any words.
    Nothing read means nothing was looked at, so the claim has no ground."""
    paths = list(read) if paths is None else list(paths)
    terms = [t.strip(" '\"“”‘’`*") for t in terms if t.strip(" '\"“”‘’`*")]
    unread = [p for p in paths if p not in read]
    if unread:
        return Claim(text, None, say("names {paths}, which was not read", "标注的 {paths} 没有读过", paths=", ".join(unread)))
    if not paths:
        return Claim(text, None, say("no note was read, so nothing shows what the notes lack",
                                     "没有读过任何笔记，所以没有什么能说明笔记缺了什么"))
    if not terms or any(not clauses(t) and not words(t) for t in terms):
        return Claim(text, None, say("names no word to look for", "没有给出要找的词"))
    said = [(t, p) for t in terms for p in paths if _mentioned(read[p], t)]
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
            paths = [p.strip() for p in re.split(r"[,、]", listed) if p.strip()]
            out.append(_lacks(reason, _LIST.split(lacked), read, paths))
        else:
            out.append(Claim(reason, _trace()))  # e.g. "search_notes failed (…)": a fact of the run, shown in it
    return out or [Claim(line, _trace())]


def _stub(text: str, path: str, read: dict[str, str]) -> Claim:
    if path not in read:
        return Claim(text, None, say("{path} was not read", "{path} 没有读过", path=path))
    return Claim(text, path) if "TODO" in read[path] else Claim(text, None, say("{path} is not a stub", "{path} 不是草稿", path=path))


def sentences(text: str) -> list[str]:
    """`text` cut after each `.`, `!` or `?` that ends a sentence, and after each Chinese 。！？."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"'(*_\[])|(?<=[。！？])", text) if s.strip()]


def claims(answer: str | None, read: dict[str, str], *, found: Iterable[str] = (),
           saved: Iterable[str] = ()) -> list[Claim]:  # fmt: skip
    """Every claim of `answer`, each checked against the notes read (path → text), the paths the
    searches found and the ids of the records saved in the same task."""
    found, saved = list(found), set(saved)
    out: list[Claim] = []
    for raw in (line.strip() for line in (answer or "").splitlines()):
        line = plain(raw)
        if not line or _FRAME.match(line) or _SOURCES.match(line) and not _SOURCES.sub("", line).strip(" ,、") or (
                _SOURCES.match(line) and not _ANY_PATH.sub("", _SOURCES.sub("", line)).strip(" ,、;；")):
            continue
        if not _ANY_PATH.sub("", _CITE.sub("", line)).strip(" ,、;；.-–—()[]"):
            continue  # a line that only lists notes: a source list, not a claim
        if match := _MISSING.match(line):
            out += _missing_reasons(line, (_groups(match) or [""])[0], read, found)
        elif match := _STUB.match(line):
            out.append(_stub(line, match.group(1), read))
        elif match := _SAVED.match(line):
            ok = match.group(1) in saved
            out.append(Claim(line, _trace()) if ok else Claim(line, None, say("no record {id} was saved", "没有保存过记录 {id}",
                                                                               id=match.group(1))))  # fmt: skip
        elif _NOT_SAVED.match(line):
            out.append(Claim(line, _trace()) if not saved else Claim(line, None, say("a record was saved", "保存了一条记录")))
        else:
            out += _statements(line, read, found)
    return out


def _statements(line: str, read: dict[str, str], found: list[str]) -> list[Claim]:
    """The claims of one line of prose: each sentence with the citations it carries (a citation at
    the end of a line covers the sentences before it that carry none)."""
    parts = sentences(line)
    carried = [citations(part) for part in parts]
    trailing: list[str] = []
    for i in range(len(parts) - 1, -1, -1):
        if carried[i]:
            trailing = carried[i]
        elif trailing:
            carried[i] = trailing
    out = []
    for part, cited in zip(parts, carried):
        bare = plain(_CITE.sub(" ", part)).strip(" -–—:;,")
        if not bare or is_frame(part):
            continue
        if match := _NOT_MENTIONED.match(bare):
            out.append(_lacks(bare, _LIST.split(_groups(match)[0]), read))
        elif (about := _about_the_run(part, read, found)) is not None:
            out.append(about)
        else:
            out.append(_traced(part, read, cited))
    return out


def ungrounded(answer: str | None, read: dict[str, str], **trace: Iterable[str]) -> list[Claim]:
    """The claims of `answer` that nothing in the task's trace supports."""
    return [claim for claim in claims(answer, read, **trace) if not claim.grounded]


def missing_points(answer: str | None, points: Iterable[Iterable[str]]) -> list[str]:
    """The points a complete answer must make that `answer` does not: each point is a few terms that
    must all be said, each in one clause of the answer, in any words the concept table gives and with
    the same polarity ("must wait" is said by "has to wait for it", not by "never waits")."""
    said = [clause for raw in (answer or "").splitlines() for clause in clauses(plain(_CITE.sub(" ", raw)))]
    return [" + ".join(point) for point in (tuple(p) for p in points) if not all(_says(said, term) for term in point)]


def _says(said: list, term: str) -> bool:
    """Some clause of `said` holds every concept of each clause of `term`, with its polarity."""
    wanted = [clause for clause in clauses(term) if clause]
    if not wanted:
        return False
    held = [{(c.name, c.positive) for c in clause} for clause in said]
    return all(any({(c.name, c.positive) for c in part} <= have for have in held) for part in wanted)
