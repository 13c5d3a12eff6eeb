"""A question's key terms: its words minus stop words, chit-chat and numbers, matched by stem.

The notes assistant searches with these terms and checks whether the notes it read mention them.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9_]+")
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


def _stem(word: str) -> str:
    """retries → retry, calls → call, reading → read, approved → approv: enough to match forms."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    elif len(word) > 6 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 5 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


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
