"""The notes assistant (capstone): search, read the hits, answer only from what was read.

Used when a search tool (a `query` string property) is declared and the request names no file.
The moves: search with the question's key terms (in the question's language first); read the best
hits (parallel calls); recover from a refused, failed or stale search where that is honest; then
the answer (`assistant_answer`).
"""

from __future__ import annotations

import re

from course_lib.offline_model.assistant_answer import _final_moves
from course_lib.offline_model.assistant_calls import (
    _Done,
    _done,
    _fill,
    _gap_writer,
    _hits,
    _note_reader,
    _search_tool,
)
from course_lib.offline_model.reading import _NUM, _number, _path_property
from course_lib.offline_model.terms import bridged_terms, key_terms
from course_lib.offline_model.wording import language, say

_ASKED_LIMIT = re.compile(r"\b(?:top|up to|at most)\s+(\d+)\s+(?:notes?|results?|hits?|matches)\b", re.I)
_BOUND = re.compile(r"\b([A-Za-z_]+): must be ([≤≥]) (-?\d+)")  # the app's INVALID_INPUT wording
_ASKED_LIMIT_ZH = re.compile(rf"(?:前|最多|至多|不超过)\s*{_NUM}\s*(?:条|篇|个)")  # "前 3 条笔记", "最多五个结果"
CHAT_REPLY = say("chat_reply", "en")


def _search_again(last: _Done, searches: list[_Done]) -> dict | None:
    """New arguments after a failed search: a bound the error names (limit: must be ≤ 20), or the
    same arguments once more for a retryable failure. None: no honest way to recover."""
    if last.code == "INVALID_INPUT":
        fixed = dict(last.arguments)
        for name, _, bound in _BOUND.findall(last.message):
            if name in fixed:
                fixed[name] = int(bound)
        if all(step.arguments != fixed for step in searches):
            return fixed
    if last.retryable and sum(step.arguments == last.arguments for step in searches) < 2:
        return last.arguments
    return None


def _assistant_plan(text: str, turn: list[dict], tools: list[dict], mode: str, parallel: bool) -> list[tuple] | None:
    """The assistant's next move, or None when this behaviour does not apply (no search tool).

    1. search with the question's key terms (a Chinese question in Chinese, then, if that finds
    nothing, with the concepts' English words); 2. read the best hits (score > 0 and at least half the
    best, at most two, in one response); a hit that is gone (NOT_FOUND) → search once more;
    3. answer only from the notes read, citing them, or say the evidence is missing; 4. when asked
    for gaps, propose one from what was read.
    """
    search = _search_tool(tools)
    if search is None:
        return None
    terms, lang = key_terms(text), language(text)
    bridged = bridged_terms(text)
    if not terms and not any(item["kind"] == "call" for item in turn):
        return None if mode == "required" else [("message", say("chat_reply", lang))]  # chit-chat: nothing to look up
    reader, writer = _note_reader(tools), _gap_writer(tools)
    done = _done(turn, search, reader, writer)
    searches = [step for step in done if step.kind == "search"]
    if not searches:
        limit = _ASKED_LIMIT.search(text) or _ASKED_LIMIT_ZH.search(text)
        values = {"query": " ".join(terms), **({"limit": _number(limit.group(1))} if limit else {})}
        return [("call", search["name"], _fill(search, values))]
    last = searches[-1]
    if last.ok and not _hits(last) and bridged != terms and len(searches) == 1:
        # Searched in Chinese, found nothing: the notes may be in English; the same concepts in their words.
        return [("call", search["name"], {**last.arguments, "query": " ".join(bridged)})]
    if any(step.arguments.get("query") == " ".join(bridged) for step in searches) and bridged != terms:
        terms = bridged  # the notes answered the English words: look for those in what is read
    if not last.ok:
        again = _search_again(last, searches)
        if again is not None:
            return [("call", search["name"], again)]
        why = say("search_failed", lang, tool=search["name"], code=last.code, message=last.message)
        return [("message", say("evidence", lang, missing=say("evidence_missing", lang), reasons=why))]
    path_key = _path_property(reader) if reader else None
    reads = [step for step in done if step.kind == "read"]
    read_ok = {step.data.get("path") or step.arguments.get(path_key): step.data
               for step in reads if step.ok and isinstance(step.data, dict)}
    tried = {step.arguments.get(path_key) for step in reads} | set(read_ok)
    since = [step for step in done[done.index(last) + 1 :] if step.kind == "read"]
    room = min(2 - len(read_ok), 2 - len(since))
    planned = [hit["path"] for hit in _hits(last) if hit["path"] not in tried][: max(room, 0)]
    if planned and reader:
        calls = [("call", reader["name"], _fill(reader, {path_key: path})) for path in planned]
        return calls if parallel else calls[:1]
    if any(step.code == "NOT_FOUND" for step in since) and len(searches) < 2:
        return [("call", search["name"], last.arguments)]  # a hit has gone: the index may have moved on
    return _final_moves(text, terms, done, last, read_ok, reader, writer)
