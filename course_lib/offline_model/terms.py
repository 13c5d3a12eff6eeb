"""A question's key terms: its words minus stop words, chit-chat and numbers, matched by stem.

The notes assistant searches with these terms and checks whether the notes it read mention them.
"""

from __future__ import annotations

from course_lib.words import WORD as _WORD
from course_lib.words import stem as _stem

_STOP_WORDS = frozenset("""
    a an the and or but if then than so as of to in on at by for with from into about over under between
    don doesn didn isn aren wasn weren won couldn shouldn wouldn haven hasn ll ve re
    is are was were be been being am do does did done have has had having get gets got
    i me my mine myself we us our you your yours it its they them their he she his her
    this that these those there here what which who whom whose when where why how whether
    can could should would will shall may might must need needs not no nor yes
    very just also only too more most much many some any all each every other another such own same
    please tell show explain describe give find search look list summarize summarise recall remind
    know knew known understand understanding learn learned mean means meaning think say says said
    note notes vs versus difference differences compare comparison
    gap gaps learning save saving incomplete weak missing yet still again top up least first
""".split())
_CHAT_WORDS = frozenset("""
    hi hello hey thanks thank cheers bye goodbye morning afternoon evening great helpful nice awesome
    cool ok okay welcome today lot doing going fine good
""".split())


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in _WORD.findall(text.lower())}


def key_terms(text: str) -> list[str]:
    """The question's key terms: its words minus stop words, chit-chat and numbers, one per stem.

    "What is the difference between call_id and the MCP id?" → ["call_id", "mcp", "id"].
    """
    terms: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP_WORDS and word not in _CHAT_WORDS and not word.isdigit() and len(word) > 1:
            terms.setdefault(_stem(word), word)
    return list(terms.values())
