"""The language the course speaks to the learner: English, or 简体中文 in the zh-CN edition.

The edition is known from where the kernel runs. Jupyter, nbconvert and nbval start a notebook's
kernel in the notebook's own folder, so a kernel whose working folder is `notebooks/zh-CN` (any
folder named `zh-CN`) serves the Chinese edition and every other one the English. `COURSE_LANG`
(`en` or `zh-CN`) overrides that, for a kernel started elsewhere or a test.

Code that prints for the learner (exercise checks, widget labels) says both and lets `say`
choose, so the code cells of the two editions stay identical:

    failed(say("Not answered yet: replace each ...", "还没有作答：把每个 ... 换成……"))
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "zh-CN")


def language() -> str:
    """`"zh-CN"` in the Chinese edition, `"en"` otherwise.

    Raises:
        ValueError: `COURSE_LANG` is set to something other than "en" or "zh-CN".
    """
    chosen = os.environ.get("COURSE_LANG", "").strip()
    if chosen:
        if chosen not in LANGUAGES:
            raise ValueError(f"COURSE_LANG={chosen!r}: use one of {', '.join(LANGUAGES)}")
        return chosen
    return "zh-CN" if Path.cwd().name == "zh-CN" else "en"


def say(en: str, zh: str, /, **fields: Any) -> str:
    """The text for the current edition: `en` or `zh`, formatted with `fields` (`str.format`).

    Both texts name the same fields; wire values inside them (`function_call`, `INVALID_INPUT`,
    field names) are written the same way in both.
    """
    text = zh if language() == "zh-CN" else en
    return text.format(**fields) if fields else text


def display_width(text: str) -> int:
    """Columns a monospaced terminal gives `text`: a Chinese character takes two (so tables line up)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    """`text.ljust(width)` by display width (the same as ljust for English)."""
    return text + " " * max(0, width - display_width(text))
