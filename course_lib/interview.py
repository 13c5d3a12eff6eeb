"""Interview cards: fifteen common questions and three follow-ups, progress, and a flash-card widget.

    deck = CardDeck()        # all 18 cards from fixtures/interview_cards.json, progress kept in memory
    deck                     # in Jupyter: the question, Reveal, then Got it / Shaky / Missed
    deck.reveal(); deck.mark("shaky")      # what the buttons do, callable from code
    deck.progress.summary()  # "1 of 18 reviewed: 0 got it, 1 shaky, 0 missed"

Each card has the question, how long to answer it aloud (30 seconds; 2 minutes for questions 2 and
3, as the source asks them), a short answer, a 2-minute answer where the source has one
(questions 1–3), a "more" section (follow-ups, a boundary, an example from the course), and
pointers to where the course demonstrates it: a notebook section and `course_lib` code.

A card is marked (got it / shaky / missed) only after its answer was revealed: the mark buttons
stay disabled until Reveal, and `mark()` refuses a hidden card.

Where widgets cannot render (GitHub, a terminal, a stored nbval run) the deck still shows
readable text: `deck.text()` is also the `text/plain` part of what Jupyter stores.

`python -m course_lib.interview` prints every card with its answers: a study sheet.

The zh-CN edition (`course_lib.lang`; `COURSE_LANG=zh-CN python -m course_lib.interview` for the
sheet) reads the Chinese answers from `fixtures/interview_cards.zh-CN.json`, which holds only text:
numbers, the source's wording and the pointers stay in the English file. A card then asks the
source's own question (the three follow-ups have a Chinese question of their own), the deck's
labels are Chinese, and a pointer names the section's title in the notebook's zh-CN twin.
"""

from __future__ import annotations

import functools
import html
import importlib
import json
import re
import textwrap
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from course_lib.lang import language, say
from course_lib.paths import fixtures_dir
from course_lib.show import TextFallback

VERDICTS = ("got it", "shaky", "missed")
"""How a learner marks a card after answering aloud."""

VERDICTS_ZH = {"got it": "答对了", "shaky": "不太稳", "missed": "没答上"}
"""The verdicts as the zh-CN edition shows them (the keys stay the ones `mark` takes)."""

WIDTH = 96


@dataclass(frozen=True)
class Pointer:
    """Where the course demonstrates a card: a notebook file and the title of one of its sections."""

    notebook: str
    section: str

    def __str__(self) -> str:
        """The file and the section's title as plain text (a heading's `**bold**` marks dropped)."""
        if language() == "zh-CN" and (title := twin_section(self.notebook, self.section)):
            return f"notebooks/zh-CN/{self.notebook} § {title.replace('**', '')}"
        return f"notebooks/{self.notebook} § {self.section.replace('**', '')}"


@dataclass(frozen=True)
class Card:
    """One interview question and its answers."""

    number: int
    question: str
    source: str  # the question as the source asks it
    short: str  # the 30-second answer
    long: str | None  # the 2-minute answer (questions 1–3)
    more: tuple[str, ...]
    see: tuple[Pointer, ...]
    code: tuple[str, ...]  # dotted names: module.function or module.Class.method
    seconds: int = 30  # how long to answer aloud: 120 for the source's two-minute questions

    def time_text(self) -> str:
        """How long to answer aloud, e.g. "about 30 seconds" (约 30 秒)."""
        if self.seconds % 60 == 0:
            return say("about {n} minutes", "约 {n} 分钟", n=self.seconds // 60)
        return say("about {n} seconds", "约 {n} 秒", n=self.seconds)

    def short_label(self) -> str:
        """The short answer's title: "30-second answer" on a 30-second card, "In short" on a longer one."""
        if self.seconds == 30:
            return say("30-second answer", "30 秒回答")
        return say("In short", "简短回答")

    def text(self, *, reveal: bool = True) -> str:
        """The card as plain text; with `reveal=False` only the question."""
        lines = [f"Q{self.number}. {self.question}", say("    ({source})", "    （{source}）", source=self.source)]
        if not reveal:
            return "\n".join(lines)
        lines += ["", self.short_label() + say(":", "："), *_wrap(self.short)]
        if self.long:
            lines += ["", say("2-minute answer:", "2 分钟回答："),
                      *(line for part in self.long.split("\n\n") for line in [*_wrap(part), ""])]  # fmt: skip
            lines.pop()
        lines += ["", say("More:", "补充："), *(line for item in self.more for line in _wrap(item, bullet=True))]
        lines += ["", say("See it in the course:", "在课程里看它："), *(f"  - {pointer}" for pointer in self.see),
                  *(f"  - {name}" for name in self.code)]  # fmt: skip
        return "\n".join(lines)


def _wrap(text: str, *, bullet: bool = False) -> list[str]:
    first, rest = ("  - ", "    ") if bullet else ("  ", "  ")
    if any(unicodedata.east_asian_width(ch) in "WF" for ch in text):
        return _wrap_wide(text, first, rest)
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest)


def _wide(ch: str) -> bool:  # "A" (ambiguous: “”, —, …) is wide in Chinese text
    return unicodedata.east_asian_width(ch) in "WFA"


_TOKEN = re.compile(r"[!-~]+|\s+|.")  # a run of printable ASCII (a word, `call_id`, JSON) stays whole
_NO_LINE_START = set("，。、；：！？）」』”’》…—")


def _wrap_wide(text: str, first: str, rest: str) -> list[str]:
    """Wrap Chinese text to WIDTH columns (a Chinese character is two): break between characters,
    never inside an ASCII word, and never before closing punctuation."""
    lines, line, width = [], first, len(first)
    for token in _TOKEN.findall(text):
        size = sum(2 if _wide(ch) else 1 for ch in token)
        if width + size > WIDTH and line.strip() and token[0] not in _NO_LINE_START:
            lines.append(line.rstrip())
            line, width = rest, len(rest)
            if token.isspace():
                continue
        line, width = line + token, width + size
    return [*lines, line.rstrip()]


def cards_path() -> Path:
    """`fixtures/interview_cards.json`."""
    return fixtures_dir() / "interview_cards.json"


def chinese_cards_path() -> Path:
    """`fixtures/interview_cards.zh-CN.json`: the Chinese text of the same cards."""
    return fixtures_dir() / "interview_cards.zh-CN.json"


def load_cards(path: Path | None = None, *, lang: str | None = None) -> list[Card]:
    """The cards, in question order, in the edition's language (or `lang`: "en" or "zh-CN").

    In Chinese a card's question is the source's own wording (`source`); the three follow-ups,
    which the source does not ask, have a Chinese question and a Chinese note of where they come from.

    Raises:
        FileNotFoundError: a cards file is missing.
        ValueError: the file is not a list of cards numbered 1, 2, 3, …, or the Chinese file does
            not have the same cards, each with Chinese for every part of its English answer.
    """
    raw = json.loads((path or cards_path()).read_text(encoding="utf-8"))
    cards = [
        Card(c["number"], c["question"], c["source"], c["short"], c.get("long"), tuple(c["more"]),
             tuple(Pointer(p["notebook"], p["section"]) for p in c["see"]), tuple(c["code"]), c.get("seconds", 30))
        for c in raw["cards"]
    ]  # fmt: skip
    if [card.number for card in cards] != list(range(1, len(cards) + 1)):
        raise ValueError("cards must be numbered 1, 2, 3, … in order")
    if (lang or language()) == "zh-CN":
        return [_in_chinese(card, zh) for card, zh in zip(cards, _chinese_entries(cards), strict=True)]
    return cards


def _chinese_entries(cards: list[Card]) -> list[dict[str, Any]]:
    """The Chinese file's entries, checked against the English cards part by part."""
    entries = json.loads(chinese_cards_path().read_text(encoding="utf-8"))["cards"]
    if [e.get("number") for e in entries] != [card.number for card in cards]:
        raise ValueError(f"{chinese_cards_path().name}: its cards must be numbered as the English ones, 1–{len(cards)}")
    for card, entry in zip(cards, entries, strict=True):
        asks_in_chinese = _has_chinese(card.source)  # one of the source's fifteen
        problems = [
            not entry.get("short"),
            bool(card.long) != bool(entry.get("long")),
            bool(card.long) and len(card.long.split("\n\n")) != len(entry["long"].split("\n\n")),
            len(entry.get("more", [])) != len(card.more) or not all(entry["more"]),
            asks_in_chinese == bool(entry.get("question")) or asks_in_chinese == bool(entry.get("source")),
        ]
        if any(problems):
            raise ValueError(f"{chinese_cards_path().name}: card {card.number} does not match the English card "
                             "(short, long with as many paragraphs, as many 'more' items; a question and a "
                             "source only for a follow-up the source does not ask)")  # fmt: skip
    return entries


def _has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _in_chinese(card: Card, zh: dict[str, Any]) -> Card:
    question = zh.get("question") or card.source
    source = zh.get("source") or f"原文高频面试题第 {card.number} 题"
    return Card(card.number, question, source, zh["short"], zh.get("long"), tuple(zh["more"]), card.see, card.code,
                card.seconds)


def twin_section(notebook: str, section: str) -> str | None:
    """The title that section `section` of `notebooks/<notebook>` has in the notebook's zh-CN twin
    (the cell with the same id, its heading at the same place), or None without a twin or section."""
    folder = fixtures_dir().parent / "notebooks"
    english, twin = folder / notebook, folder / "zh-CN" / notebook
    if not (english.exists() and twin.exists()):
        return None
    twin_cells = {cell.get("id"): cell for cell in _cells(twin)}
    for cell in _cells(english):
        if section in (titles := _titles(cell)) and (translated := twin_cells.get(cell.get("id"))):
            twin_titles = _titles(translated)
            return twin_titles[titles.index(section)] if len(twin_titles) == len(titles) else None
    return None


def _cells(path: Path) -> list[dict[str, Any]]:
    return _markdown_cells(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _markdown_cells(path: Path, mtime_ns: int) -> list[dict[str, Any]]:  # read again once the file changes
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "markdown"]


def _titles(cell: dict[str, Any]) -> list[str]:
    return [line.lstrip("#").strip() for line in "".join(cell["source"]).splitlines() if line.startswith("#")]


def resolve_code(name: str) -> Any:
    """The object a card's code pointer names, e.g. `course_lib.loop.run_loop`.

    Raises:
        LookupError: no module prefix of `name` imports, or an attribute is missing.
    """
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(obj, attribute):
                raise LookupError(f"{name}: {'.'.join(parts[:cut])} has no {'.'.join(parts[cut:])}")
            obj = getattr(obj, attribute)
        return obj
    raise LookupError(f"{name}: no module of it can be imported")


def notebook_sections(path: Path) -> list[str]:
    """The headings of a notebook's markdown cells, without their `#` marks."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        line.lstrip("#").strip()
        for cell in notebook["cells"]
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("#")
    ]


# ---- progress --------------------------------------------------------------------------------


@dataclass
class Progress:
    """How the learner marked each card this session (kept in memory only)."""

    total: int = 15
    marks: dict[int, str] = field(default_factory=dict)  # card number → verdict (the latest wins)

    def mark(self, number: int, verdict: str) -> None:
        """Record a verdict for card `number`.

        Raises:
            ValueError: unknown verdict, or no such card.
        """
        if verdict not in VERDICTS:
            raise ValueError(say(f"unknown verdict {verdict!r}; use one of: {', '.join(VERDICTS)}",
                                 f"没有 {verdict!r} 这种自评；请用其中之一：{', '.join(VERDICTS)}"))
        if not 1 <= number <= self.total:
            raise ValueError(say(f"no card {number}: the cards are 1–{self.total}", f"没有第 {number} 张卡片：卡片是 1–{self.total}"))
        self.marks[number] = verdict

    def count(self, verdict: str) -> int:
        return sum(1 for value in self.marks.values() if value == verdict)

    def summary(self) -> str:
        """E.g. "7 of 15 reviewed: 4 got it, 2 shaky, 1 missed" ("已复习 7/15 张：答对了 4，不太稳 2，没答上 1")."""
        if language() == "zh-CN":
            counts = "，".join(f"{VERDICTS_ZH[v]} {self.count(v)}" for v in VERDICTS)
            return f"已复习 {len(self.marks)}/{self.total} 张：{counts}"
        counts = ", ".join(f"{self.count(v)} {v}" for v in VERDICTS)
        return f"{len(self.marks)} of {self.total} reviewed: {counts}"

    def to_review(self) -> list[int]:
        """The cards to go over again: missed first, then shaky, each in card order."""
        return sorted((n for n, v in self.marks.items() if v != "got it"), key=lambda n: (self.marks[n] != "missed", n))

    def clear(self) -> None:
        self.marks.clear()


# ---- the deck --------------------------------------------------------------------------------


class CardDeck(TextFallback):
    """Flash cards with a hidden answer, a reveal, and a self-mark; usable from code and as a widget.

    Buttons and methods do the same thing: `reveal()` / `hide()`, `mark(verdict)` (records it and,
    by default, moves to the next card with the answer hidden), `next()`, `previous()`, `show(n)`.
    A card is marked only once its answer is shown: until Reveal the mark buttons are disabled
    and `mark()` raises.
    `numbers` limits the deck to some cards (e.g. `progress.to_review()`), in that order.
    """

    def __init__(self, cards: list[Card] | None = None, progress: Progress | None = None,
                 numbers: Iterable[int] | None = None) -> None:  # fmt: skip
        """Raises:
        ValueError: `numbers` names a card that does not exist, or is empty.
        """
        every = cards if cards is not None else load_cards()
        by_number = {card.number: card for card in every}
        chosen = list(numbers) if numbers is not None else list(by_number)
        if not chosen or any(n not in by_number for n in chosen):
            raise ValueError(say(f"choose cards among 1–{len(every)}; got {chosen}", f"请在 1–{len(every)} 中选卡片；你给的是 {chosen}"))
        self.cards = [by_number[n] for n in chosen]
        self.progress = progress if progress is not None else Progress(total=len(every))
        self.position = 0
        self.revealed = False
        self._build()

    @property
    def card(self) -> Card:
        """The card on show."""
        return self.cards[self.position]

    # -- what the buttons do --

    def reveal(self) -> None:
        self.revealed = True
        self._refresh()

    def hide(self) -> None:
        self.revealed = False
        self._refresh()

    def mark(self, verdict: str, *, advance: bool = True) -> None:
        """Mark the card on show, then (by default) go to the next one with its answer hidden.

        Raises:
            ValueError: the answer is still hidden (say yours aloud, reveal, then mark), or an
                unknown verdict.
        """
        if not self.revealed:
            raise ValueError(say("card {n}: reveal the answer before you mark it (say yours aloud first)",
                                 "第 {n} 题：先显示答案，再给自己打分（先大声说出你的回答）", n=self.card.number))
        self.progress.mark(self.card.number, verdict)
        if advance and self.position < len(self.cards) - 1:
            self.position += 1
            self.revealed = False
        self._refresh()

    def next(self) -> None:
        self.show_position(min(self.position + 1, len(self.cards) - 1))

    def previous(self) -> None:
        self.show_position(max(self.position - 1, 0))

    def show(self, number: int) -> None:
        """Go to card `number` (answer hidden).

        Raises:
            ValueError: that card is not in this deck.
        """
        positions = {card.number: i for i, card in enumerate(self.cards)}
        if number not in positions:
            raise ValueError(say(f"card {number} is not in this deck ({', '.join(map(str, positions))})",
                                 f"这副卡片里没有第 {number} 张（{', '.join(map(str, positions))}）"))
        self.show_position(positions[number])

    def show_position(self, position: int) -> None:
        self.position, self.revealed = position, False
        self._refresh()

    # -- the plain-text view --

    def text(self) -> str:
        """What the deck shows, as plain text."""
        card = self.card
        if self.revealed:
            state = say("answer shown", "答案已显示")
        else:
            state = say("answer hidden: say yours aloud first, then reveal", "答案已隐藏：先大声说出你的回答，再显示答案")
        verdict = self.progress.marks.get(card.number)
        lines = [say("Card {n} of {total} · {state}", "第 {n} 张，共 {total} 张 · {state}",
                     n=self.position + 1, total=len(self.cards), state=state),
                 "", card.text(reveal=self.revealed), ""]  # fmt: skip
        if not self.revealed:
            lines.append(say("[ Reveal ]", "[ 显示答案 ]"))
        marks = say("mark: [ Got it ]  [ Shaky ]  [ Missed ]", "自评：[ 答对了 ]  [ 不太稳 ]  [ 没答上 ]")
        if not self.revealed:
            marks += say("   (after Reveal)", "   （显示答案之后）")
        lines.append(marks + (say("   (marked: {v})", "   （已标记：{v}）", v=_verdict(verdict)) if verdict else ""))
        lines.append(say("progress: {summary}", "进度：{summary}", summary=self.progress.summary()))
        return "\n".join(lines)


    # -- the widget --

    def _build(self) -> None:
        self._header = widgets.HTML()
        self._question = widgets.HTML()
        self._answer = widgets.HTML()
        self.reveal_button = widgets.Button(description=say("Reveal", "显示答案"), icon="eye", button_style="info")
        self.reveal_button.on_click(lambda _: self.hide() if self.revealed else self.reveal())
        self.mark_buttons = {
            verdict: widgets.Button(description=say(verdict.capitalize(), VERDICTS_ZH[verdict]), button_style=style)
            for verdict, style in zip(VERDICTS, ("success", "warning", "danger"))
        }
        for verdict, button in self.mark_buttons.items():
            button.on_click(lambda _, v=verdict: self.mark(v))
        self.previous_button = widgets.Button(description=say("Previous", "上一张"), icon="arrow-left")
        self.next_button = widgets.Button(description=say("Next", "下一张"), icon="arrow-right")
        self.previous_button.on_click(lambda _: self.previous())
        self.next_button.on_click(lambda _: self.next())
        self._progress = widgets.HTML()
        self.widget = widgets.VBox([
            self._header, self._question, self.reveal_button, self._answer,
            widgets.HBox([widgets.Label(say("How did it go?", "答得怎么样？")), *self.mark_buttons.values()]),
            widgets.HBox([self.previous_button, self.next_button]), self._progress,
        ])  # fmt: skip
        self._refresh()

    def _refresh(self) -> None:
        card = self.card
        self._header.value = say("<b>Card {n} of {total}</b> · question {q}", "<b>第 {n} 张，共 {total} 张</b> · 第 {q} 题",
                                 n=self.position + 1, total=len(self.cards), q=card.number)  # fmt: skip
        hint = say("Answer aloud first ({time}), then reveal.", "先大声作答（{time}），再显示答案。", time=card.time_text())
        self._question.value = (f"<h4 style='margin:4px 0'>{html.escape(card.question)}</h4>"
                                f"<span style='color:#6b7280'>{html.escape(card.source)}</span>"
                                + ("" if self.revealed else f"<p><i>{hint}</i></p>"))  # fmt: skip
        self._answer.value = _answer_html(card) if self.revealed else ""
        self.reveal_button.description = say("Hide answer", "隐藏答案") if self.revealed else say("Reveal", "显示答案")
        for button in self.mark_buttons.values():  # a mark is for an answer compared with the card's
            button.disabled = not self.revealed
            button.tooltip = "" if self.revealed else say("reveal the answer first", "先显示答案")
        self.previous_button.disabled = self.position == 0
        self.next_button.disabled = self.position == len(self.cards) - 1
        verdict = self.progress.marks.get(card.number)
        marked = say(" · this card: <b>{v}</b>", " · 本张：<b>{v}</b>", v=_verdict(verdict)) if verdict else ""
        self._progress.value = say("<b>Progress:</b> ", "<b>进度：</b>") + f"{html.escape(self.progress.summary())}{marked}"


def _verdict(verdict: str) -> str:
    return say(verdict, VERDICTS_ZH.get(verdict, verdict))


def _answer_html(card: Card) -> str:
    parts = [f"<p><b>{html.escape(card.short_label())}{say('.', '。')}</b>{say(' ', '')}{html.escape(card.short)}</p>"]
    if card.long:
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in card.long.split("\n\n"))
        summary = say("2-minute answer", "2 分钟回答")
        parts.append(f"<details><summary><b>{summary}</b></summary>{paragraphs}</details>")
    parts.append(say("<b>More</b>", "<b>补充</b>") + "<ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in card.more) + "</ul>")
    where = [f"<li><code>{html.escape(p.notebook)}</code> § {html.escape(_section(p))}</li>" for p in card.see]
    where += [f"<li><code>{html.escape(name)}</code></li>" for name in card.code]
    parts.append(say("<b>See it in the course</b>", "<b>在课程里看它</b>") + "<ul>" + "".join(where) + "</ul>")
    return "".join(parts)


def _section(pointer: Pointer) -> str:
    return (language() == "zh-CN" and twin_section(pointer.notebook, pointer.section)) or pointer.section


def main() -> None:
    """`python -m course_lib.interview`: print every card with its answers."""
    for card in load_cards():
        print(card.text())
        print("\n" + "─" * WIDTH + "\n")


if __name__ == "__main__":
    main()
