"""Chinese words, cut by a real segmenter: jieba's dictionary and algorithm, through `rjieba`.

Chinese is written without spaces, so "用户先批准" is one run of characters. Cutting it by a table
of known terms and keeping whatever is left over gives non-words ("户先" once the stop word "用"
had taken the first character of 用户); slicing it into character pairs gives them too. A
segmenter cuts by a dictionary of some 350,000 words: 用户 / 先 / 批准.

`rjieba` is the Python binding of jieba-rs, the maintained Rust port of jieba (the same dictionary
and the same cuts): a binary wheel with the dictionary inside, nothing to download, no cache file
and no log lines, so it runs offline as the course does. Each `Segmenter` has its own dictionary
with its own words added (the offline model's concepts, the grounding check's concept names), so
what one part of the course adds never changes how another part cuts.

    Segmenter().words("为什么写入要用户先批准？") == ["为什么", "写入", "要", "用户", "先", "批准", "？"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


class Segmenter:
    """jieba's dictionary plus `terms` (each cut as one word). Loaded on first use (about 0.3 s)."""

    def __init__(self, terms: Iterable[str] = ()) -> None:
        self.terms = tuple(dict.fromkeys(t for t in terms if t and CJK_RUN.fullmatch(t)))
        self._jieba: Any = None
        self._cut = lru_cache(maxsize=8192)(self._cut_uncached)

    def _cut_uncached(self, text: str) -> tuple[str, ...]:
        if self._jieba is None:
            import rjieba  # here, so that a notebook that never reads Chinese never loads it

            jieba = rjieba.Jieba()
            for term in self.terms:
                jieba.add_word(term, max(jieba.suggest_freq(term), 1000), None)
            self._jieba = jieba
        return tuple(self._jieba.cut(text, False))  # no HMM: unknown words are not guessed, cuts stay stable

    def words(self, text: str) -> list[str]:
        """`text` cut into words (punctuation and spaces are words of their own, as jieba gives them)."""
        return list(self._cut(text))

    def chinese_words(self, text: str) -> list[tuple[int, str]]:
        """(offset, word) for every word of every run of Chinese characters in `text`."""
        out = []
        for run in CJK_RUN.finditer(text):
            at = run.start()
            for word in self._cut(run.group()):
                out.append((at, word))
                at += len(word)
        return out


PLAIN = Segmenter()
"""jieba's own dictionary, nothing added."""


def words(text: str) -> list[str]:
    """`text` cut by jieba's own dictionary."""
    return PLAIN.words(text)
