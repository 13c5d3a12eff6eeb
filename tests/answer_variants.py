"""The offline model's real answers, written the way other models write them (issue 27/28).

Each function takes an answer of the evaluation and returns it as a real model might have put it:
a friendly closing line, markdown and a reworded lead-in, the lines in another order, the quoted
sentences in other words (from `grounding_corpus`: the paraphrase written for that line), or turned
around (the reversal written for that line). The figures of the evaluation must not move for the
first four, and claim grounding must fall for the last.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from grounding_corpus import EN, HELD_OUT_EN, HELD_OUT_ZH, KNOWN_MISSES, ZH

CLOSINGS = {"en": ("Let me know if you'd like anything else!", "Happy to help with anything else you need. 😊",
                   "I hope this helps. Just ask if you want more!"),
            "zh": ("如果还需要别的，随时告诉我！", "希望这对你有帮助，还有问题尽管问。😊", "需要更多内容的话，再叫我就好！")}  # fmt: skip
_QUOTE = re.compile(r"^- (?P<text>.+) \[(?P<path>/[^\]:\s]+):(?P<line>\d+)\]$")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _lang(answer: str) -> str:
    return "zh" if _CJK.search(answer) else "en"


def _by_line(lang: str, part: int) -> dict[tuple[str, int], str]:
    corpus = (EN + HELD_OUT_EN) if lang == "en" else (ZH + HELD_OUT_ZH)
    return {(f"/notes/{name}", line): texts[0] for name, line, *pair in corpus if (texts := pair[part])}


def pleasantry(answer: str, n: int = 0) -> str:
    """A closing line in the answer's language."""
    closings = CLOSINGS[_lang(answer)]
    return f"{answer}\n\n{closings[n % len(closings)]}"


def markdown(answer: str) -> str:
    """The stand-in's rewording (issue 27): lead-in rephrased, bullets as `*`, quotes in bold, **Sources:**."""
    out = []
    for line in answer.splitlines():
        line = line.replace("From your notes:", "Here's what I found in your notes:").replace("根据你的笔记：", "我在你的笔记里找到了这些：")
        line = re.sub(r"^Sources: (.+)$", r"**Sources:** \1", line)
        line = re.sub(r"^来源：(.+)$", r"**来源**：\1", line)
        if match := _QUOTE.match(line):
            line = f"* **{match['text']}** [{match['path']}:{match['line']}]"
        out.append(line)
    return pleasantry("\n".join(out), 1)


def reordered(answer: str) -> str:
    """The Sources line first, the quoted lines in reverse order."""
    lines = answer.splitlines()
    quotes = [line for line in lines if _QUOTE.match(line)]
    sources = [line for line in lines if line.startswith(("Sources:", "来源："))]
    rest = [line for line in lines if line not in quotes and line not in sources]
    return "\n".join(sources + [""] + rest[:1] + quotes[::-1] + rest[1:])


def _replaced(answer: str, part: int) -> tuple[str, int]:
    table = _by_line(_lang(answer), part)
    out, changed = [], 0
    for line in answer.splitlines():
        if (match := _QUOTE.match(line)) and (text := table.get((match["path"], int(match["line"])))):
            line, changed = f"- {text} [{match['path']}:{match['line']}]", changed + 1
        out.append(line)
    return "\n".join(out), changed


def paraphrased(answer: str) -> str:
    """Every quoted sentence the corpus has a paraphrase of, in other words (citation kept)."""
    return pleasantry(_replaced(answer, 0)[0], 2)


def reversed_meaning(answer: str) -> str:
    """Every quoted sentence the corpus has a reversal of, turned around (citation kept)."""
    return _replaced(answer, 1)[0]


def reverses(answer: str) -> int:
    """How many quoted sentences of `answer` `reversed_meaning` turns around in a way the meaning check
    can see (the corpus's `KNOWN_MISSES` left out)."""
    turned = _replaced(answer, 1)[0]
    return sum(1 for line in turned.splitlines() if (match := _QUOTE.match(line)) and match["text"] not in KNOWN_MISSES
               and line not in answer.splitlines())  # fmt: skip


def empty(answer: str) -> str:
    """Nothing but a pleasantry."""
    return CLOSINGS[_lang(answer)][2]


VARIANTS: dict[str, Callable[[str], str]] = {"pleasantry": pleasantry, "markdown": markdown, "reordered": reordered,
                                             "paraphrased": paraphrased}  # fmt: skip
"""The ways of writing the same answer: the evaluation's figures must not move."""
