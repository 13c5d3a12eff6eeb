"""Does a claim say what some lines of a note say? A small, explainable judge of meaning.

Each text is cut into clauses, and each clause into concepts (`concepts`: "in parallel" and
"concurrently" are one concept, CONCURRENT; 并行 and 同时 too), each with its polarity: a negation
("never", "cannot", 不, 无法) turns what follows it in its clause into its negation, and a negated
concept that has an opposite becomes that opposite ("not at the same time" is WAIT). Then a claim
is **supported** by the lines when

- most of its concepts are in them (`ENOUGH`, and every identifier it names: `call_id`, TIMEOUT), and
- no clause of the claim contradicts the clause of the note it matches: the same concept with the
  opposite polarity ("should never overlap" / "may overlap"), an opposite ("can run concurrently" /
  "must wait"), or an identifier moved to what the note says of another one ("TIMEOUT is worth
  another attempt; FORBIDDEN fails every time" / "FORBIDDEN is worth another attempt").

So a paraphrase in other words passes ("reads that don't depend on each other may run at the same
time"), and a sentence that keeps the note's words and reverses them does not. What it cannot see:
a word the concept table does not know is compared as written; inside one clause concepts are a
set, so "A waits for B" and "B waits for A" look alike, and "search first, then read" and "read
first, then search" too; a detail added to a supported statement passes when it is small beside
it. `README.md` lists these limits beside the metric.

    verdict = judge("Reads that don't depend on each other may run at the same time.", {4: line})
    verdict.supported, verdict.lines, verdict.why
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from course_lib.chinese_words import CJK_RUN, Segmenter
from course_lib.grounding.concepts import (AFTER_NEGATORS_EN, CLAUSE_WORDS_EN, CLAUSE_WORDS_ZH, DETERMINERS, FLIP,
                                           NEGATOR_PHRASES_EN, NEGATORS_EN, NOUN_NEGATORS_ZH, THINGS, NEGATORS_ZH, NO_FLIP,
                                           OPPOSITE, PHRASES_EN, STOP_EN, STOP_ZH, WORDS_EN, WORDS_ZH)  # fmt: skip
from course_lib.lang import say
from course_lib.words import stem

ENOUGH = 0.6  # the share of a claim's concepts the lines must hold
_SEGMENTER = Segmenter(sorted(list(WORDS_ZH) + list(NEGATORS_ZH), key=len, reverse=True))
_CONTRACTIONS = ((r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"), (r"\bshan't\b", "shall not"),
                 (r"n't\b", " not"), (r"\bain't\b", "is not"))  # fmt: skip
_TOKEN = re.compile(
    r"(?P<id>`[^`]+`|[A-Za-z0-9_]+(?:[./-][A-Za-z0-9_]+)+|[A-Za-z]*_[A-Za-z0-9_]*|-?\d+(?:\.\d+)?)"
    r"|(?P<word>[A-Za-z]+(?:'[a-z]+)?)|(?P<zh>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
    r"|(?P<stop>[;:,.!?()\[\]—–，；：。！？（）【】「」])"
)
_CLAUSE_WORDS = frozenset(w for w in CLAUSE_WORDS_EN if " " not in w)
_FILLER = ("each other", "one another", "as well", "such as", "for example", "for instance", "at all", "in other words",
           "whether or not", "or not",
           "turned into", "turn into", "turns into",
           "in fact", "of course", "that is", "in short", "kind of", "sort of")  # phrases that carry no concept
_PHRASES = sorted([(tuple(stem(w) for w in phrase.split()), name) for phrase, name in PHRASES_EN.items()]
                  + [(tuple(stem(w) for w in phrase.split()), "") for phrase in _FILLER]
                  + [(tuple(stem(w) for w in phrase.split()), "¬") for phrase in NEGATOR_PHRASES_EN],
                  key=lambda pair: -len(pair[0]))  # fmt: skip


@dataclass(frozen=True)
class Concept:
    name: str  # a concept of the table (CONCURRENT), or a word it does not know (its stem / the Chinese word)
    positive: bool
    identifier: bool = False  # `call_id`, TIMEOUT, tools/call, -32602: exact names, never paraphrased
    word: str = ""  # as written (lower case): "before", "then", 之后 mark an order
    segment: int = 0  # which comma-separated part of its clause it is in
    flipped: bool = False  # a negated concept turned into its opposite ("not the same" → DIFFERENT)
    phrase: bool = False  # negated as a noun phrase ("not an agent", 不是对象), not as what happens
    starts: bool = False  # a negation starts here (how many a clause has is its parity)
    subordinate: bool = False  # the first concept of a clause that "when", "if", 如果 opened


Clause = tuple[Concept, ...]


def _normalised(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    for pattern, replacement in _CONTRACTIONS:
        text = re.sub(pattern, replacement, text, flags=re.I)
    return text


def _raw_tokens(text: str) -> list[tuple[str, str]]:
    """(kind, token): "id" (an identifier, as written), "word" (lower case), "zh" (a Chinese word), "stop"."""
    out: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(_normalised(text)):
        kind = match.lastgroup or "stop"
        token = match.group()
        if kind == "id":
            token = token.strip("`")
            if " " in token or not token:  # a code span of several words: its words
                out += _raw_tokens(token)
                continue
            out.append(("id", token.lower()))
        elif kind == "word":
            token = re.sub(r"'s?$", "", token)
            caps = len(token) >= 4 and token.isupper()  # TIMEOUT, FORBIDDEN, TODO: codes, as written
            out.append(("id" if caps else "word", token.lower()))
        elif kind == "zh":
            out += [("zh", word) for word in _SEGMENTER.words(token)]
        else:
            out.append(("stop", token))
    return out


@lru_cache(maxsize=16384)
def clauses(text: str) -> tuple[Clause, ...]:
    """`text` as clauses of concepts, each with its polarity (see the module's docstring).

    A negation reaches the next concept ("never reached a tool": reach is negated, the tool is not),
    or the one before it when it stands after its verb ("executes nothing"); a negated "need" passes
    it on ("does not need a person's approval"). A parenthesis is a clause of its own inside the
    clause around it."""
    result: list[Clause] = []
    outer: list[tuple[list[Concept], int]] = []  # the clauses a parenthesis interrupted
    current: list[Concept] = []
    negated, segment, phrase, carried = False, 0, False, False
    subordinate, no_phrase = False, False

    def close(opened_by: str = "") -> None:
        nonlocal current, negated, segment, phrase, carried, subordinate
        if current:
            if subordinate:
                current[0] = replace(current[0], subordinate=True)
            result.append(tuple(current))
        current, negated, segment, phrase, carried = [], False, 0, False, False
        subordinate = opened_by in _SUBORDINATORS

    def add(name: str, word: str, identifier: bool = False) -> None:
        nonlocal negated, phrase, carried
        starts = negated and not carried
        if identifier:
            concept = Concept(name, not negated, True, word, segment, False, negated and phrase, starts)
        else:
            concept = _concept(name, not negated, word, segment, phrase, starts)
        current.append(concept)
        # "does not need a person's approval": the approval is denied; "no answer arrived": the arriving is
        carried = negated and ((name == "NEED" and not phrase) or (phrase and no_phrase and name in THINGS))
        negated = carried
        phrase = False

    def negate(noun: bool = False, no: bool = False) -> None:
        nonlocal negated, phrase, carried, no_phrase
        negated, phrase, carried, no_phrase = not negated, noun, False, no

    tokens = _raw_tokens(text)
    i = 0
    while i < len(tokens):
        kind, token = tokens[i]
        if kind == "stop" and token in "(（[【":
            outer.append((current, segment))
            current, negated, segment = [], False, 0
        elif kind == "stop" and token in ")）]】" and outer:
            if current:
                result.append(tuple(current))
            current, segment = outer.pop()
            negated = False
        elif (kind == "stop" and token not in _COMMAS) or (kind == "word" and token in _CLAUSE_WORDS) or (
                kind == "zh" and token in CLAUSE_WORDS_ZH):
            close(token)
        elif kind == "stop" and token == "," and i + 1 < len(tokens) and tokens[i + 1] in (("word", "and"), ("word", "or")):
            close(token)  # ", and two writes …": a second statement
            i += 2
            continue
        elif kind == "stop":
            negated, segment, phrase, carried = False, segment + 1, False, False
        elif kind == "word" and (found := _phrase_at(tokens, i)):
            name, length = found
            if name == _NOT:
                negate()
            elif name:
                add(name, " ".join(t for _, t in tokens[i : i + length]))
            i += length
            continue
        elif kind == "word":
            if token in AFTER_NEGATORS_EN and current and not negated and current[-1].segment == segment:
                last = current.pop()  # "executes nothing": the verb before it is what is negated
                current.append(_concept(last.name, not last.positive, last.word, segment))
            elif token in NEGATORS_EN:
                negate(token in ("no", "zero"), token in ("no", "zero"))
            elif negated and token in DETERMINERS:
                phrase = True  # "not an agent", "not the schema's required list"
            elif token not in STOP_EN and len(token) > 1:
                add(WORDS_EN.get(stem(token), stem(token)), token)
        elif kind == "zh":
            if token not in WORDS_ZH and token not in NEGATORS_ZH and (prefix := _negation_prefix(token)):
                negate(prefix in NOUN_NEGATORS_ZH)  # 不能自己, 不需要: jieba cut the negation together with what follows
                token = token[len(prefix) :]
            elif len(token) == 3 and token[1] in "不得" and token not in WORDS_ZH and token not in NEGATORS_ZH:  # 看不到 / 看得到: a verb and its result
                if token[1] == "不":
                    negate()
                token = token[0] + token[2]
            if token in NEGATORS_ZH:
                negate(token in NOUN_NEGATORS_ZH)
            elif negated and token in DETERMINERS:
                phrase = True
            elif token in WORDS_ZH:
                add(WORDS_ZH[token], token)
            elif token not in STOP_ZH and len(token) > 1:
                add(token, token)
        else:  # an identifier: a code, a field, a method, a number
            named = WORDS_EN.get(stem(token), token).upper() == token.upper()  # TIMEOUT is the concept TIMEOUT
            add(token.upper() if named else token, token, identifier=True)  # FORBIDDEN stays FORBIDDEN, not "refuse"
        i += 1
    while outer:
        if current:
            result.append(tuple(current))
        current, segment = outer.pop()
    close()
    return tuple(result)


def _negation_prefix(word: str) -> str:
    """The negation a Chinese word starts with, when the rest is a word of its own (不能自己 → 不能)."""
    for size in (3, 2, 1):
        head, rest = word[:size], word[size:]
        if head in NEGATORS_ZH and rest and (rest in WORDS_ZH or rest in STOP_ZH or len(rest) > 1):
            return head
    return ""


_COMMAS = frozenset(",，、")
_SUBORDINATORS = frozenset("when whenever if until 如果 只要 直到 一旦 当".split())
_NOT = "¬"


def _phrase_at(tokens: list[tuple[str, str]], i: int) -> tuple[str, int] | None:
    """The longest table phrase that starts at token i (words compared by stem), and its length."""
    words = []
    for kind, token in tokens[i : i + 6]:
        if kind != "word":
            break
        words.append(stem(token))
    for phrase, name in _PHRASES:
        if tuple(words[: len(phrase)]) == phrase:
            return name, len(phrase)
    return None


def _concept(name: str, positive: bool, word: str = "", segment: int = 0, phrase: bool = False,
             starts: bool | None = None) -> Concept:  # fmt: skip
    starts = not positive if starts is None else starts
    if not positive and name in FLIP and name not in NO_FLIP:  # "not concurrently" is WAIT, "not the same" is DIFFERENT
        return Concept(FLIP[name], True, False, word, segment, True, False, starts)
    return Concept(name, positive, False, word, segment, False, phrase and not positive, starts)


def names(text: str) -> set[str]:
    """The concepts `text` names (whatever their polarity)."""
    return {c.name for clause in clauses(text) for c in clause}


def mentions(text: str, term: str) -> bool:
    """Whether `text` names what `term` names: every concept of the term, in any words the table
    gives for it ("parallel" is mentioned by "concurrently"; 并行 by 同时), or a word it does not know
    as written (by stem; a Chinese word as the segmenter cuts it)."""
    wanted = names(term)
    return bool(wanted) and wanted <= names(text)


@dataclass(frozen=True)
class Verdict:
    """Whether a claim is supported by some lines, which lines it rests on, and why not."""

    supported: bool
    lines: tuple[int, ...] = ()  # the lines it rests on (or contradicts), 1-based
    why: str = ""
    contradicted: bool = False


def judge(claim: str, lines: dict[int, str], context: dict[int, str] | None = None) -> Verdict:
    """Whether `claim` is supported by `lines` (line number → text); `context` (default `lines`): the
    whole note they are part of, whose other lines can show the claim says the opposite (a claim that
    cites line 5 for "the JSON-RPC id comes from the model API" is contradicted by line 4).

    Each clause of the claim is matched to the lines that share most concepts with it (an opposite
    counts as shared: "must wait" is about what "can run concurrently" is about), and within each
    such line to its clause that shares most. If one of those lines contradicts it, that is the
    verdict. Otherwise the claim is supported when the lines its clauses rest on hold `ENOUGH` of
    its concepts and every identifier it names."""
    claim_clauses = _joined(clauses(claim))
    wanted = {c.name for clause in claim_clauses for c in clause}
    if not wanted:
        return Verdict(False, why=say("says nothing that can be checked", "没有说出可以核对的内容"))
    context = {**(context or {}), **lines}
    analysed = {n: _joined(clauses(text), only_subordinate=True) for n, text in sorted(context.items())}
    rests_on: list[int] = []
    for clause in claim_clauses:
        overlaps = {n: max((_overlap(clause, note) for note in notes), default=0) for n, notes in analysed.items()}
        for scope in (analysed, lines):  # the lines the clause is most about, in the whole note, then among those cited
            most = max((overlaps[n] for n in scope), default=0)
            if most < min(1.5, len({c.name for c in clause})):
                continue
            best = [n for n in scope if overlaps[n] == most]
            for n in best:  # one that says the opposite decides
                if conflict := _conflict(clause, analysed[n], n, analysed):
                    return Verdict(False, (n,), conflict, contradicted=True)
            if scope is lines:
                rests_on.append(next((n for n in best if n in rests_on), best[0]))
    window = tuple(sorted(set(rests_on)))
    if not window:
        return Verdict(False, why=say("shares too little with the lines", "和这些行的共同之处太少"))
    held = {c.name for n in window for note in analysed[n] for c in note}
    missing = sorted({c.name for clause in claim_clauses for c in clause if c.identifier} - held)
    if missing:
        return Verdict(False, window, say("names {names}, which the lines do not", "提到了这些行里没有的 {names}",
                                          names=", ".join(missing)))  # fmt: skip
    share = len(wanted & held) / len(wanted)
    if share < ENOUGH:
        return Verdict(False, window, say("only {share:.0%} of what it says is in the lines", "它说的内容只有 {share:.0%} 在这些行里",
                                          share=share))  # fmt: skip
    return Verdict(True, window)


def _joined(found: tuple[Clause, ...], only_subordinate: bool = False) -> list[Clause]:
    """The clauses, a clause of one concept joined to the one before it ("…, since they are independent");
    with `only_subordinate`, only one that "when", "if" … opened ("run them together only when they are
    independent"), so that "necessary, but not sufficient" stays two statements."""
    out: list[Clause] = []
    for clause in found:
        if out and len({c.name for c in clause}) < 2 and (clause[0].subordinate or not only_subordinate):
            out[-1] = out[-1] + clause
        else:
            out.append(clause)
    if len(out) > 1 and len({c.name for c in out[0]}) < 2 and not only_subordinate:
        out[:2] = [out[0] + out[1]]
    return out


def _related(clause: Clause) -> set[str]:
    """The concepts of a clause and their opposites: what the clause is about."""
    return {c.name for c in clause} | {o for c in clause for o in OPPOSITE.get(c.name, ())}


def _overlap(clause: Clause, note: Clause) -> float:
    """Concepts shared, and half for each concept whose opposite the note names (what it is about)."""
    own, theirs = {c.name for c in clause}, {c.name for c in note}
    return len(own & theirs) + 0.5 * len((own - theirs) & _related(note))


def _negations(clause: Clause) -> int:
    return sum(c.starts for c in clause)


def _conflict(clause: Clause, note_clauses: list[Clause], line: int, analysed: dict[int, list[Clause]]) -> str:
    """What `clause` says against the clauses of line `line` it matches best ("" when nothing)."""
    most = max(_overlap(clause, note) for note in note_clauses)
    for aligned in (note for note in note_clauses if _overlap(clause, note) == most):
        if found := _against(clause, aligned, line, analysed):
            return found
    return ""


def _against(clause: Clause, aligned: Clause, line: int, analysed: dict[int, list[Clause]]) -> str:
    where = say("line {n}", "第 {n} 行", n=line)
    held = {(c.name, c.positive) for c in aligned}
    mine = {(c.name, c.positive) for c in clause}
    held_names, mine_names = {c.name for c in aligned}, {c.name for c in clause}
    parity = _negations(clause) % 2 != _negations(aligned) % 2  # "is not X" vs "is not Y": where "not" lands is no news
    theirs = {c.name: c for c in aligned}
    moved = [c for c in clause if c.name in theirs and c.positive != theirs[c.name].positive and c.name in THINGS]
    swapped = any(c.positive for c in moved) and any(not c.positive for c in moved)  # "a replay, not a conflict"
    for concept in clause:
        if (concept.name in held_names and (concept.name, concept.positive) not in held
                and (concept.name, not concept.positive) not in mine):
            thing = concept.name in THINGS or concept.phrase or theirs[concept.name].phrase or concept.identifier
            if not thing or parity or swapped:
                return say("{where} says the opposite: {word!r} is {polarity} there", "{where}说的正相反：那里{polarity_zh}“{word}”",
                           where=where, word=concept.word or _shown(concept.name), polarity="negated" if concept.positive else "affirmed",
                           polarity_zh="否定了" if concept.positive else "肯定了")  # fmt: skip
        if concept.positive and (concept.name, True) not in held:
            for opposite in sorted(OPPOSITE.get(concept.name, ())):
                if (opposite, True) in held and opposite not in mine_names:
                    other = next(c.word for c in aligned if c.name == opposite and c.positive) or _shown(opposite)
                    return say("{where} says the opposite: {other!r}, not {word!r}", "{where}说的正相反：是“{other}”，不是“{word}”",
                               where=where, other=other, word=concept.word or _shown(concept.name))  # fmt: skip
    head, their_head = _head(clause), _head(aligned)
    subject = {c.name for c in _subject(aligned)}
    rivals = [note for notes in analysed.values() for note in notes
              if note is not aligned and head in {c.name for c in _subject(note)}]  # fmt: skip
    said = {c.name for c in clause} - {c.name for c in _subject(clause)}  # what the claim says of its subject

    def predicate(note: Clause) -> int:
        return len(said & {c.name for c in note})

    if (head and their_head and head not in subject and their_head not in mine_names and rivals
            and all(predicate(rival) < predicate(aligned) for rival in rivals)):
        return say("{where} says this of {other}, not of {name}", "{where}说的是 {other}，不是 {name}", where=where,
                   other=_word(aligned, their_head), name=_word(clause, head))  # "FORBIDDEN is worth another attempt"  # fmt: skip
    named, their_names = {c.name for c in clause if c.identifier}, {c.name for c in aligned if c.identifier}
    elsewhere = {c.name for notes in analysed.values() for note in notes if note is not aligned for c in note}
    for name in sorted((named - their_names) & elsewhere):
        if their_names - named - elsewhere:  # "discovers tools with tools/call" where the line says tools/list
            return say("{where} names {other} here, not {name}", "{where}这里说的是 {other}，不是 {name}", where=where,
                       other=", ".join(sorted(their_names - named - elsewhere)), name=name)  # fmt: skip
    ours, its = _order(clause), _order(aligned)
    for first, then in sorted(ours):
        if (then, first) in its and (first, then) not in its:
            return say("{where} says the other order: {then} before {first}", "{where}说的顺序正相反：先“{then}”，后“{first}”",
                       where=where, then=_word(aligned, then), first=_word(aligned, first))  # fmt: skip
    return ""


_MARKERS = frozenset({"ONLY", "ALWAYS", "BEFORE", "AFTER"})


def _subject(clause: Clause) -> list[Concept]:
    """What a clause is about: its leading things and names ("INVALID_INPUT, FORBIDDEN and NOT_FOUND",
    "the JSON-RPC id"), "only" and "always" aside; empty when it starts with what happens ("can recover")."""
    found = []
    for concept in (c for c in clause if c.name not in _MARKERS):
        if not (concept.identifier or concept.name in THINGS):
            break
        found.append(concept)
    return found[:4]


def _head(clause: Clause) -> str:
    found = _subject(clause)
    return found[0].name if found else ""


_BEFORE = frozenset({"before", "prior to", "ahead of", "first", "之前", "以前", "前", "先", "首先"})
_AFTER = frozenset({"after", "afterwards", "later", "之后", "以后", "后"})
_THEN = frozenset({"then", "然后", "再", "接着", "随后"})


def _order(clause: Clause) -> set[tuple[str, str]]:
    """(a, b) pairs: the clause says a happens before b ("a write runs only after a person approved"
    → (APPROVE, WRITE); "before a write runs, a person approves" → the same; 先搜索，再读取 → (SEARCH, READ))."""
    marks = [i for i, c in enumerate(clause) if c.word in _BEFORE | _AFTER | _THEN]
    if not marks:
        return set()
    m = marks[0]
    word, chinese = clause[m].word, bool(CJK_RUN.search(clause[m].word))
    plain = [c for i, c in enumerate(clause) if i not in marks]
    left = [c.name for c in clause[:m] if c.word not in _BEFORE | _AFTER | _THEN]
    right = [c.name for c in clause[m + 1 :] if c.word not in _BEFORE | _AFTER | _THEN]
    if chinese and word not in _THEN and word not in ("先", "首先"):  # 在 X 之后，Y: a postposition ends X
        here = [c.name for c in clause[:m] if c.segment == clause[m].segment]
        rest = [c.name for c in plain if c.segment > clause[m].segment] or [c.name for c in clause[:m] if c.segment < clause[m].segment]
        first, then = (here, rest) if word in _AFTER else (rest, here)
    elif word in ("先", "首先"):  # 先 X，再 Y
        first = [c.name for c in clause[m + 1 :] if c.segment == clause[m].segment]
        then = [c.name for c in clause[m + 1 :] if c.segment > clause[m].segment]
    elif not left and word in _BEFORE | _AFTER:  # "Before X, Y" / "After X, Y": the comma ends X
        x = [c.name for c in clause[m + 1 :] if c.segment == clause[m].segment]
        y = [c.name for c in clause[m + 1 :] if c.segment > clause[m].segment]
        first, then = (x, y) if word in _AFTER else (y, x)
    elif word in _BEFORE:
        first, then = left, right
    elif word in _AFTER:
        first, then = right, left
    else:  # "X, then Y"
        first, then = left, right
    return {(a, b) for a in first for b in then if a != b and a not in then and b not in first}


def _word(clause: Clause, name: str) -> str:
    """The word `clause` writes for concept `name` (as written, lower case)."""
    return next((c.word for c in clause if c.name == name and c.word), _shown(name))


def _shown(name: str) -> str:
    return name.lower() if name.isupper() else name
