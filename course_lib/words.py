"""Words of a text, matched by stem — shared by the notes server's search index and the offline
model's reading of a question, so that both sides agree on what "the same word" is."""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z0-9_]+")


def stem(word: str) -> str:
    """A deliberately small stemmer: retries → retry, calls → call, reading → read, approved → approv."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    elif len(word) > 6 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 5 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def tokens(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens (`call_id` stays one token)."""
    return [stem(word) for word in WORD.findall(text.lower())]
