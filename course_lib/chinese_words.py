"""Chinese words, cut by a real segmenter: jieba's dictionary and algorithm, through `rjieba`.

Chinese is written without spaces, so "用户先批准" is one run of characters. Cutting it by a table
of known terms and keeping whatever is left over gives non-words ("户先" once the stop word "用"
had taken the first character of 用户); slicing it into character pairs gives them too. A
segmenter cuts by a dictionary of some 350,000 words and a model of unknown ones: 用户 / 先 / 批准.

`rjieba` is the Python binding of jieba-rs, the maintained Rust port of jieba (the same dictionary
and the same cuts): a binary wheel with the dictionary inside, nothing to download, no cache file
and no log lines, and it starts in well under a millisecond, so it runs offline as the course does.
The course's own terms (`add_terms`: 幂等键, 智能体循环, …, as `notebooks/zh-CN/GLOSSARY.md` writes
them) are added to its dictionary, so each stays one word.

    words("为什么写入要用户先批准？") == ["为什么", "写入", "要", "用户", "先", "批准", "？"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ADDED: set[str] = set()


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    import rjieba  # here, so that a notebook that never reads Chinese never loads it

    return rjieba.Jieba()


def add_terms(terms: Iterable[str]) -> None:
    """Add words to the segmenter's dictionary, each frequent enough to be cut as one word."""
    jieba = _segmenter()
    for term in terms:
        if term and term not in _ADDED and CJK_RUN.fullmatch(term):
            jieba.add_word(term, max(jieba.suggest_freq(term), 1000), None)
            _ADDED.add(term)
    _cut.cache_clear()


@lru_cache(maxsize=4096)
def _cut(text: str) -> tuple[str, ...]:
    return tuple(_segmenter().cut(text, False))  # no HMM: unknown words are not guessed, so cuts are stable


def words(text: str) -> list[str]:
    """`text` cut into words (punctuation and spaces are words of their own, as jieba gives them)."""
    return list(_cut(text))


def chinese_words(text: str) -> list[tuple[int, str]]:
    """(offset, word) for every word of every run of Chinese characters in `text`."""
    out = []
    for run in CJK_RUN.finditer(text):
        at = run.start()
        for word in _cut(run.group()):
            out.append((at, word))
            at += len(word)
    return out
