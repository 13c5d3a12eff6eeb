"""Words of a text, matched by stem — shared by the notes server's search index and the offline
model's reading of a question, so that both sides agree on what "the same word" is.

Chinese is written without spaces, so a run of Chinese characters becomes its overlapping
character bigrams ("幂等键" → 幂等, 等键), the usual way a keyword index handles Chinese without a
dictionary: a Chinese query finds the notes that contain its characters in that order, and a
word split differently still shares most of its bigrams. English text has no such runs, so its
tokens (and every BM25 score over English notes) are exactly what they were."""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z0-9_]+")
CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


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


def bigrams(run: str) -> list[str]:
    """The overlapping character pairs of a run of Chinese characters; a single character is its own token."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens (`call_id` stays one token), then the character bigrams of
    each run of Chinese characters: tokens("重试 retries") == ["retry", "重试"]."""
    lowered = text.lower()
    return [stem(word) for word in WORD.findall(lowered)] + [pair for run in CJK_RUN.findall(lowered) for pair in bigrams(run)]
