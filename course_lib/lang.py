"""The language the course speaks to the learner: English, or 简体中文 in the zh-CN edition.

The edition is known from where the kernel runs. Jupyter, nbconvert and nbval start a notebook's
kernel in the notebook's own folder, so a kernel whose working folder is `notebooks/zh-CN` (any
folder named `zh-CN`) serves the Chinese edition and every other one the English. `COURSE_LANG`
overrides that, for a kernel started elsewhere or a test. It takes any usual spelling of a
language: `zh-CN`, `zh_CN.UTF-8`, `zh`, `zh-Hans-CN`, `zh_SG.GB18030` (all Chinese → the 简体中文
edition, the course's only Chinese one), `en`, `en_US.UTF-8`, `C`, `POSIX` (→ English); anything
else gets one line in both languages on stderr and the folder's edition, never a traceback.

`make lab` picks the edition to open with the same function (`python3 course_lib/lang.py`, which
needs only the standard library, so it runs before the course is installed): `COURSE_LANG`, else
the machine's message locale (`LC_ALL`, `LC_MESSAGES`, `LANG`, and GNU `LANGUAGE` ahead of them
unless the locale is C, as gettext reads them).

Code that prints for the learner (exercise checks, widget labels) says both and lets `say`
choose, so the code cells of the two editions stay identical:

    failed(say("Not answered yet: replace each ...", "还没有作答：把每个 ... 换成……"))
"""

from __future__ import annotations

import os
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

LANGUAGES = ("en", "zh-CN")
_warned: set[str] = set()


def edition_of(tag: str) -> str | None:
    """The edition a language tag or locale name asks for: "zh-CN", "en", or None (another language).

    POSIX locales (`zh_CN.UTF-8`, `en_GB.ISO-8859-1@euro`, `C`, `POSIX`), BCP 47 tags (`zh-Hans-CN`,
    `en-US`) and bare codes (`zh`, `EN`) all count; case does not matter.
    """
    name = tag.strip().split(".", 1)[0].split("@", 1)[0].replace("_", "-").lower()
    first = name.split("-", 1)[0]
    if first == "zh":
        return "zh-CN"
    if first == "en" or name in ("c", "posix"):
        return "en"
    return None


def _unknown(variable: str, value: str, fallback: str) -> str:
    """Say once, in both languages, that `variable` names no edition; return the edition used instead."""
    if value not in _warned:
        _warned.add(value)
        print(f"{variable}={value!r} names no edition of this course (en, zh-CN); using {fallback}. / "
              f"{variable}={value!r} 不是本课程的版本（en、zh-CN）；改用 {fallback}。", file=sys.stderr)  # fmt: skip
    return fallback


def language() -> str:
    """`"zh-CN"` in the Chinese edition, `"en"` otherwise (`COURSE_LANG` first, then the kernel's folder)."""
    folder = "zh-CN" if Path.cwd().name == "zh-CN" else "en"
    chosen = os.environ.get("COURSE_LANG", "").strip()
    if not chosen:
        return folder
    return edition_of(chosen) or _unknown("COURSE_LANG", chosen, folder)


def machine_edition(environ: Mapping[str, str] = os.environ) -> str:
    """The edition `make lab` opens: `COURSE_LANG`, else the machine's message locale, else English."""
    chosen = environ.get("COURSE_LANG", "").strip()
    if chosen:
        return edition_of(chosen) or _unknown("COURSE_LANG", chosen, "en")
    locale = next((environ[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(name, "").strip()), "C")
    if locale.strip().split(".")[0].upper() not in ("C", "POSIX"):  # gettext reads LANGUAGE unless the locale is C
        for entry in environ.get("LANGUAGE", "").split(":"):
            if edition_of(entry):
                return edition_of(entry) or "en"
    return edition_of(locale) or "en"


def say(en: str, zh: str, /, **fields: Any) -> str:
    """The text for the current edition: `en` or `zh`, formatted with `fields` (`str.format`).

    Both texts name the same fields; wire values inside them (`function_call`, `INVALID_INPUT`,
    field names) are written the same way in both.
    """
    edition = language()
    text = zh if edition == "zh-CN" else en
    _hear(en, zh, fields, edition)
    return text.format(**fields) if fields else text


class Heard(NamedTuple):
    """One text `say` gave, in both languages: `template` is the English as written (before its
    fields were filled), `en` and `zh` the texts filled."""

    template: str
    en: str
    zh: str


HEARD_LIMIT = 64
_heard = threading.local()


def _hear(en: str, zh: str, fields: Mapping[str, Any], edition: str) -> None:
    """Keep the last HEARD_LIMIT texts said on this thread in both languages: a check's message is
    made of them, and course_lib.progress records that message in both editions (the instructor's
    room view groups one mistake across a room of both, in either language). A field that is what
    `say` just gave (`say("a token {name}", "{name}", name=say(…))`) is filled in each language's words."""
    pairs = getattr(_heard, "pairs", None)
    if pairs is None:
        pairs = _heard.pairs = deque(maxlen=HEARD_LIMIT)
    mine = 2 if edition == "zh-CN" else 1
    just_said = {said[mine]: said for said in list(pairs)[-4:]}
    try:
        if fields:
            inner = {name: just_said.get(value) if isinstance(value, str) else None for name, value in fields.items()}
            pair = (en.format(**{k: inner[k].en if inner[k] else v for k, v in fields.items()}),
                    zh.format(**{k: inner[k].zh if inner[k] else v for k, v in fields.items()}))  # fmt: skip
        else:
            pair = (en, zh)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):  # a text that names other fields
        return
    pairs.append(Heard(en, *pair))


def heard(*, forget: bool = False) -> list[Heard]:
    """The texts `say` gave on this thread lately, oldest first (`forget`: and start afresh)."""
    pairs = getattr(_heard, "pairs", None)
    found = list(pairs or ())
    if forget and pairs is not None:
        pairs.clear()
    return found


def display_width(text: str) -> int:
    """Columns a monospaced terminal gives `text`: a Chinese character takes two (so tables line up)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    """`text.ljust(width)` by display width (the same as ljust for English)."""
    return text + " " * max(0, width - display_width(text))


if __name__ == "__main__":  # `make lab`: print the edition to open (standard library only)
    print(machine_edition())
