"""Shared by the exercise tests.

Nothing here drops `OPENAI_API_KEY` or any other setting: the checks are offline by construction
(`course_lib.exercises.offline`), and `test_offline_checks.py` proves it with keys set and an
unreachable endpoint.

The `corpus` fixture runs a check as a learner's cell does, in both editions, for the
learner-answer corpora (`test_nbXX_corpus.py`): tables of (answer, the words that name its mistake).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest


class Corpus:
    """Runs one check on one answer in English and in the zh-CN edition (`COURSE_LANG`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        self.monkeypatch, self.capsys = monkeypatch, capsys

    def run(self, check: Callable[[Any], Any], answer: Any, lang: str = "en") -> tuple[Any, str]:
        """(what the check returned, what it printed), in the edition `lang`."""
        self.monkeypatch.setenv("COURSE_LANG", lang)
        self.capsys.readouterr()
        returned = check(answer)
        return returned, self.capsys.readouterr().out

    def wrong(self, check: Callable[[Any], Any], answer: Any, en: Sequence[str], zh: Sequence[str]) -> None:
        """A wrong answer fails in both editions with one ✗ line, no traceback, naming its mistake:
        every word of `en` in the English line, every word of `zh` in the Chinese one."""
        for lang, words in (("en", en), ("zh-CN", zh)):
            returned, printed = self.run(check, answer, lang)
            assert returned is False, printed
            assert printed.startswith("✗ ") and printed.count("\n") == 1, printed
            assert "Traceback" not in printed, printed
            missing = [word for word in words if word not in printed]
            assert not missing, f"{lang}: {missing} not in {printed!r}"

    def right(self, check: Callable[[Any], Any], answer: Any) -> None:
        """A right answer passes in both editions with one ✓ line."""
        for lang in ("en", "zh-CN"):
            returned, printed = self.run(check, answer, lang)
            assert returned is True, printed
            assert printed.startswith("✓ ") and printed.count("\n") == 1, printed


@pytest.fixture(autouse=True)
def checks_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault of a check itself raises here instead of becoming a polite ✗ line (`guard`): the
    build fails where a learner would only read "the check itself failed"."""
    monkeypatch.setenv("COURSE_CHECKS_STRICT", "1")


@pytest.fixture
def corpus(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Corpus:
    """A `Corpus` on this test's monkeypatch and captured stdout."""
    return Corpus(monkeypatch, capsys)
