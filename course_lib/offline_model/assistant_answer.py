"""The notes assistant's last move: answer only from the notes it read, quoting them and citing
their paths, or say the evidence is missing and why; when asked for gaps, propose one learning gap
taken from what was read, then report what became of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from course_lib.offline_model.answers import _write_not_done
from course_lib.offline_model.assistant_calls import _Done, _fill, _hits
from course_lib.offline_model.reading import _path_property
from course_lib.offline_model.terms import _stems, _tokens, mentions, unsaid, weight
from course_lib.offline_model.wording import language, say

_GAP_REQUEST = re.compile(
    r"\bgaps?\b|\bincomplete\b|\bweak (?:spots?|points?|areas?)\b|\b(?:don'?t|do not) (?:yet )?know\b"
    r"|\bhaven'?t (?:yet )?(?:learned|mastered)\b|薄弱|缺口|不完整|没掌握|没有掌握|不懂|不太懂|不清楚|不知道", re.I)  # fmt: skip
_STUB_LINE = re.compile(r"^[ \t]*(?:TODO|TBD)\b.*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(])|(?<=[。！？])\s*")  # Chinese: after 。！？, no space needed
EVIDENCE_MISSING = say("evidence_missing", "en")


@dataclass(frozen=True)
class _ReadNote:
    path: str
    title: str
    text: str

    @property
    def todo(self) -> str | None:
        match = _STUB_LINE.search(self.text)
        if match is None:
            return None
        line = match.group().strip()
        return line if len(line) <= 60 else line[:59] + "…"


def _sentences(text: str) -> list[tuple[int, str]]:
    """The note's sentences, verbatim, each with the number of its line (1 is the file's first line),
    without its title, TODO lines and `Updated:` line."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line and not line.startswith("#") and not _STUB_LINE.match(line) and not line.startswith("Updated:"):
            out += [(number, part) for part in _SENTENCE_END.split(line) if part]
    return out


def _final_moves(text: str, terms: list[str], done: list[_Done], last: _Done, read_ok: dict, reader: dict | None,
                 writer: dict | None) -> list[tuple]:  # fmt: skip
    """Answer from the notes read (or say the evidence is missing); then, if asked, the gap. In the
    language of the request; the quoted sentences stay verbatim, in the notes' own language."""
    lang = language(text)
    notes = [_ReadNote(path, str(data.get("title") or path), str(data.get("text") or "")) for path, data in read_ok.items()]
    usable = [note for note in notes if note.todo is None]
    stubs = [note for note in notes if note.todo is not None]
    found = set().union(*(_stems(note.text) for note in usable))
    covered = [term for term in terms if mentions(found, term)]
    missing = unsaid(found, terms)  # what the usable notes do not say (never a word that only asks)
    if usable and sum(map(weight, covered)) * 2 > sum(map(weight, terms)):  # more than half of the concepts
        # "Your notes do not mention X" speaks of every note read: a stub that names X mentions it.
        said = set().union(*(_stems(f"{note.title}\n{note.text}") for note in notes))
        body = _quoted_answer(terms, usable, unsaid(said, terms), stubs, lang)
    else:
        body = _missing_evidence(last, done, notes, stubs, missing, reader, lang)
    if writer is None or not _GAP_REQUEST.search(text):
        return [("message", body)]
    saves = [step for step in done if step.kind == "save"]
    if saves:
        return [("message", f"{body}\n\n{_save_outcome(saves[-1], lang)}")]
    gap = _learning_gap(notes, stubs, missing, str(last.arguments.get("query", "")), lang)
    if gap is None:
        return [("message", f"{body}\n\n{say('no_gap', lang)}")]
    proposal = f"{body}\n\n{say('propose_gap', lang, topic=gap['topic'])}"
    return [("message", proposal), ("call", writer["name"], _fill(writer, gap))]


def _quoted_answer(terms: list[str], usable: list[_ReadNote], missing: list[str], stubs: list[_ReadNote],
                   lang: str = "en") -> str:  # fmt: skip
    """Up to two sentences per note that hold the most key terms, each tagged with its note and the
    line it stands on: "- … [/notes/retries.md:2]"."""
    wanted = {token for term in terms for token in _tokens(term)}
    lines, cited = [say("from_notes", lang)], []
    for note in usable:
        sentences = _sentences(note.text)
        # The first sentence summarises the note, so it speaks about the title's terms too.
        about = 1 if _stems(note.title) & wanted else 0
        scored = [(len(_stems(s) & wanted) + (about if i == 0 else 0), i) for i, (_, s) in enumerate(sentences)]
        best = sorted(i for _, i in sorted((-n, i) for n, i in scored if n > 0)[:2])
        lines += [f"- {sentences[i][1]} [{note.path}:{sentences[i][0]}]" for i in best]
        cited += [note.path] if best else []
    if missing:
        lines.append(say("notes_silent", lang, terms=say("list_sep", lang).join(missing)))
    lines += [say("stub_unused", lang, path=note.path) for note in stubs]
    return "\n".join(lines) + say("sources", lang, paths=say("list_sep", lang).join(cited))


def _missing_evidence(last: _Done, done: list[_Done], notes: list[_ReadNote], stubs: list[_ReadNote],
                      missing: list[str], reader: dict | None, lang: str = "en") -> str:  # fmt: skip
    """Why the notes cannot support an answer, from what was actually searched and read."""
    sep = say("list_sep", lang)
    reasons = []
    hits = _hits(last)
    if not hits:
        reasons.append(say("no_hits", lang, query=last.arguments.get("query")))
    elif reader is None:
        reasons.append(say("no_note_reader", lang, paths=sep.join(hit["path"] for hit in hits)))
    failed = [step for step in done if step.kind == "read" and not step.ok]
    reasons += [say("read_failed", lang, path=step.arguments.get(_path_property(reader) or "path"), code=step.code)
                for step in failed]  # fmt: skip
    reasons += [say("stub_reason", lang, path=note.path, todo=note.todo) for note in stubs]
    usable = [note.path for note in notes if note not in stubs]
    if usable and missing:
        reasons.append(say("not_mentioned", lang, paths=sep.join(usable), terms=sep.join(missing)))
    why = say("reason_sep", lang).join(reasons) or say("nothing_answers", lang)
    return say("evidence", lang, missing=say("evidence_missing", lang), reasons=why)


def _learning_gap(notes: list[_ReadNote], stubs: list[_ReadNote], missing: list[str], query: str,
                  lang: str = "en") -> dict | None:  # fmt: skip
    """A learning gap derived from what was read: a stub note, else key terms no note mentions."""
    if stubs:
        stub = stubs[0]
        return {"topic": stub.title, "evidence": say("gap_stub_evidence", lang, path=stub.path, todo=stub.todo),
                "suggestion": say("gap_stub_suggestion", lang, title=stub.title)}  # fmt: skip
    if missing:
        sep = say("list_sep", lang)
        topic = sep.join(missing)
        read = [note.path for note in notes]
        where = (say("gap_unread_evidence", lang, paths=sep.join(read), topic=topic) if read
                 else say("gap_unfound_evidence", lang, query=query, topic=topic))  # fmt: skip
        return {"topic": topic, "evidence": where, "suggestion": say("gap_suggestion", lang, topic=topic)}
    return None


def _save_outcome(step: _Done, lang: str = "en") -> str:
    """What became of the proposed gap, from the save tool's real result: saved only when the
    result says so; a timeout leaves it unknown, so it is never reported as saved."""
    if step.ok and isinstance(step.data, dict) and "record_id" in step.data:
        again = say("replayed", lang) if step.data.get("replayed") else ""
        return say("saved", lang, record_id=step.data["record_id"]) + again
    if step.code == "FORBIDDEN":
        return say("save_forbidden", lang, message=step.message)
    if step.ok:  # a success without a record id: quote nothing as saved that the result does not show
        return say("save_no_record", lang)
    return say("save_failed", lang, code=step.code or "error", message=step.message,
               outcome=_write_not_done(step.code, lang))  # fmt: skip
