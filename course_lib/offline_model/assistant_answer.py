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
from course_lib.offline_model.terms import _stem, _stems

_GAP_REQUEST = re.compile(
    r"\bgaps?\b|\bincomplete\b|\bweak (?:spots?|points?|areas?)\b|\b(?:don'?t|do not) (?:yet )?know\b"
    r"|\bhaven'?t (?:yet )?(?:learned|mastered)\b|薄弱|缺口|不完整|没掌握", re.I)  # fmt: skip
_STUB_LINE = re.compile(r"^[ \t]*(?:TODO|TBD)\b.*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(])")
EVIDENCE_MISSING = "The evidence is missing"


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


def _sentences(text: str) -> list[str]:
    """The note's sentences, verbatim, without its title, TODO lines and `Updated:` line."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not _STUB_LINE.match(line) and not line.startswith("Updated:"):
            out += [part for part in _SENTENCE_END.split(line) if part]
    return out


def _final_moves(text: str, terms: list[str], done: list[_Done], last: _Done, read_ok: dict, reader: dict | None,
                 writer: dict | None) -> list[tuple]:  # fmt: skip
    """Answer from the notes read (or say the evidence is missing); then, if asked, the gap."""
    notes = [_ReadNote(path, str(data.get("title") or path), str(data.get("text") or "")) for path, data in read_ok.items()]
    usable = [note for note in notes if note.todo is None]
    stubs = [note for note in notes if note.todo is not None]
    found = set().union(*(_stems(note.text) for note in usable))
    covered = [term for term in terms if _stem(term) in found]
    missing = [term for term in terms if _stem(term) not in found]
    if usable and len(covered) * 2 > len(terms):
        body = _quoted_answer(terms, usable, missing, stubs)
    else:
        body = _missing_evidence(last, done, notes, stubs, missing, reader)
    if writer is None or not _GAP_REQUEST.search(text):
        return [("message", body)]
    saves = [step for step in done if step.kind == "save"]
    if saves:
        return [("message", f"{body}\n\n{_save_outcome(saves[-1])}")]
    gap = _learning_gap(notes, stubs, missing, str(last.arguments.get("query", "")))
    if gap is None:
        return [("message", f"{body}\n\nI found no learning gap to save: the notes I read cover the key terms "
                 "of your question.")]  # fmt: skip
    proposal = f"{body}\n\nI propose to save this learning gap, once you approve it: {gap['topic']}."
    return [("message", proposal), ("call", writer["name"], _fill(writer, gap))]


def _quoted_answer(terms: list[str], usable: list[_ReadNote], missing: list[str], stubs: list[_ReadNote]) -> str:
    """Up to two sentences per note that hold the most key terms, each tagged with its note."""
    wanted = {_stem(term) for term in terms}
    lines, cited = ["From your notes:"], []
    for note in usable:
        sentences = _sentences(note.text)
        # The first sentence summarises the note, so it speaks about the title's terms too.
        about = 1 if _stems(note.title) & wanted else 0
        scored = [(len(_stems(s) & wanted) + (about if i == 0 else 0), i) for i, s in enumerate(sentences)]
        best = sorted(i for _, i in sorted((-n, i) for n, i in scored if n > 0)[:2])
        lines += [f"- {sentences[i]} [{note.path}]" for i in best]
        cited += [note.path] if best else []
    if missing:
        lines.append(f"Your notes do not mention: {', '.join(missing)}.")
    lines += [f"{note.path} is only a stub, so I did not use it." for note in stubs]
    return "\n".join(lines) + "\n\nSources: " + ", ".join(cited)


def _missing_evidence(last: _Done, done: list[_Done], notes: list[_ReadNote], stubs: list[_ReadNote],
                      missing: list[str], reader: dict | None) -> str:  # fmt: skip
    """Why the notes cannot support an answer, from what was actually searched and read."""
    reasons = []
    hits = _hits(last)
    if not hits:
        reasons.append(f"searching your notes for {last.arguments.get('query')!r} found no matching note")
    elif reader is None:
        reasons.append(f"the search found {', '.join(hit['path'] for hit in hits)}, but I have no tool to read them")
    failed = [step for step in done if step.kind == "read" and not step.ok]
    reasons += [f"I could not read {step.arguments.get(_path_property(reader) or 'path')} ({step.code})"
                for step in failed]  # fmt: skip
    reasons += [f"{note.path} is only a stub ({note.todo!r})" for note in stubs]
    usable = [note.path for note in notes if note not in stubs]
    if usable and missing:
        reasons.append(f"the notes I read ({', '.join(usable)}) do not mention {', '.join(missing)}")
    return f"{EVIDENCE_MISSING}: {'; '.join(reasons) or 'nothing I read answers this'}. I won't answer from memory."


def _learning_gap(notes: list[_ReadNote], stubs: list[_ReadNote], missing: list[str], query: str) -> dict | None:
    """A learning gap derived from what was read: a stub note, else key terms no note mentions."""
    if stubs:
        stub = stubs[0]
        return {"topic": stub.title, "evidence": f"{stub.path} is only a stub: {stub.todo!r}",
                "suggestion": f"Write the note {stub.title!r} in your own words, then ask me again to check it."}  # fmt: skip
    if missing:
        topic = ", ".join(missing)
        read = [note.path for note in notes]
        where = f"the notes I read ({', '.join(read)}) never mention" if read else f"a search for {query!r} found nothing on"
        return {"topic": topic, "evidence": f"{where} {topic}",
                "suggestion": f"Add a short note on {topic}: what it is, when it matters, and one example."}  # fmt: skip
    return None


def _save_outcome(step: _Done) -> str:
    """What became of the proposed gap, from the save tool's real result: saved only when the
    result says so; a timeout leaves it unknown, so it is never reported as saved."""
    if step.ok and isinstance(step.data, dict) and "record_id" in step.data:
        again = " It was already saved: the server returned the first record." if step.data.get("replayed") else ""
        return f"Saved the learning gap as record {step.data['record_id']}.{again}"
    if step.code == "FORBIDDEN":
        return f"I did not save the learning gap: {step.message}."
    if step.ok:  # a success without a record id: quote nothing as saved that the result does not show
        return "The save tool answered without a record id, so I can't confirm the learning gap was saved."
    return f"Saving the learning gap failed ({step.code or 'error'}): {step.message}\n{_write_not_done(step.code)}"
