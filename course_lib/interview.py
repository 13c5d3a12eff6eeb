"""Interview cards: fifteen common questions and three follow-ups, progress, and a flash-card widget.

    deck = CardDeck()        # all 18 cards from fixtures/interview_cards.json, progress kept in memory
    deck                     # in Jupyter: the question, Reveal, then Got it / Shaky / Missed
    deck.reveal(); deck.mark("shaky")      # what the buttons do, callable from code
    deck.progress.summary()  # "1 of 18 reviewed: 0 got it, 1 shaky, 0 missed"

Each card has the question, a 30-second answer, a 2-minute answer where the source has one
(questions 1–3), a "more" section (follow-ups, a boundary, an example from the course), and
pointers to where the course demonstrates it: a notebook section and `course_lib` code.

Where widgets cannot render (GitHub, a terminal, a stored nbval run) the deck still shows
readable text: `deck.text()` is also the `text/plain` part of what Jupyter stores.

`python -m course_lib.interview` prints every card with its answers: a study sheet.
"""

from __future__ import annotations

import html
import importlib
import json
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from course_lib.paths import fixtures_dir
from course_lib.show import TextFallback

VERDICTS = ("got it", "shaky", "missed")
"""How a learner marks a card after answering aloud."""

WIDTH = 96


@dataclass(frozen=True)
class Pointer:
    """Where the course demonstrates a card: a notebook file and the title of one of its sections."""

    notebook: str
    section: str

    def __str__(self) -> str:
        return f"notebooks/{self.notebook} § {self.section}"


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

    def text(self, *, reveal: bool = True) -> str:
        """The card as plain text; with `reveal=False` only the question."""
        lines = [f"Q{self.number}. {self.question}", f"    ({self.source})"]
        if not reveal:
            return "\n".join(lines)
        lines += ["", "30-second answer:", *_wrap(self.short)]
        if self.long:
            lines += ["", "2-minute answer:", *(line for part in self.long.split("\n\n") for line in [*_wrap(part), ""])]
            lines.pop()
        lines += ["", "More:", *(line for item in self.more for line in _wrap(item, bullet=True))]
        lines += ["", "See it in the course:", *(f"  - {pointer}" for pointer in self.see),
                  *(f"  - {name}" for name in self.code)]  # fmt: skip
        return "\n".join(lines)


def _wrap(text: str, *, bullet: bool = False) -> list[str]:
    first, rest = ("  - ", "    ") if bullet else ("  ", "  ")
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest)


def cards_path() -> Path:
    """`fixtures/interview_cards.json`."""
    return fixtures_dir() / "interview_cards.json"


def load_cards(path: Path | None = None) -> list[Card]:
    """The cards, in question order.

    Raises:
        FileNotFoundError: the cards file is missing.
        ValueError: the file is not a list of cards numbered 1, 2, 3, …
    """
    raw = json.loads((path or cards_path()).read_text(encoding="utf-8"))
    cards = [
        Card(c["number"], c["question"], c["source"], c["short"], c.get("long"), tuple(c["more"]),
             tuple(Pointer(p["notebook"], p["section"]) for p in c["see"]), tuple(c["code"]))
        for c in raw["cards"]
    ]  # fmt: skip
    if [card.number for card in cards] != list(range(1, len(cards) + 1)):
        raise ValueError("cards must be numbered 1, 2, 3, … in order")
    return cards


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
            raise ValueError(f"unknown verdict {verdict!r}; use one of: {', '.join(VERDICTS)}")
        if not 1 <= number <= self.total:
            raise ValueError(f"no card {number}: the cards are 1–{self.total}")
        self.marks[number] = verdict

    def count(self, verdict: str) -> int:
        return sum(1 for value in self.marks.values() if value == verdict)

    def summary(self) -> str:
        """E.g. "7 of 15 reviewed: 4 got it, 2 shaky, 1 missed"."""
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
            raise ValueError(f"choose cards among 1–{len(every)}; got {chosen}")
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
            ValueError: unknown verdict.
        """
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
            raise ValueError(f"card {number} is not in this deck ({', '.join(map(str, positions))})")
        self.show_position(positions[number])

    def show_position(self, position: int) -> None:
        self.position, self.revealed = position, False
        self._refresh()

    # -- the plain-text view --

    def text(self) -> str:
        """What the deck shows, as plain text."""
        card = self.card
        state = "answer shown" if self.revealed else "answer hidden: say yours aloud first, then reveal"
        verdict = self.progress.marks.get(card.number)
        lines = [f"Card {self.position + 1} of {len(self.cards)} · {state}", "", card.text(reveal=self.revealed), ""]
        if not self.revealed:
            lines.append("[ Reveal ]")
        lines.append("mark: [ Got it ]  [ Shaky ]  [ Missed ]" + (f"   (marked: {verdict})" if verdict else ""))
        lines.append(f"progress: {self.progress.summary()}")
        return "\n".join(lines)


    # -- the widget --

    def _build(self) -> None:
        self._header = widgets.HTML()
        self._question = widgets.HTML()
        self._answer = widgets.HTML()
        self.reveal_button = widgets.Button(description="Reveal", icon="eye", button_style="info")
        self.reveal_button.on_click(lambda _: self.hide() if self.revealed else self.reveal())
        self.mark_buttons = {
            verdict: widgets.Button(description=verdict.capitalize(), button_style=style)
            for verdict, style in zip(VERDICTS, ("success", "warning", "danger"))
        }
        for verdict, button in self.mark_buttons.items():
            button.on_click(lambda _, v=verdict: self.mark(v))
        self.previous_button = widgets.Button(description="Previous", icon="arrow-left")
        self.next_button = widgets.Button(description="Next", icon="arrow-right")
        self.previous_button.on_click(lambda _: self.previous())
        self.next_button.on_click(lambda _: self.next())
        self._progress = widgets.HTML()
        self.widget = widgets.VBox([
            self._header, self._question, self.reveal_button, self._answer,
            widgets.HBox([widgets.Label("How did it go?"), *self.mark_buttons.values()]),
            widgets.HBox([self.previous_button, self.next_button]), self._progress,
        ])  # fmt: skip
        self._refresh()

    def _refresh(self) -> None:
        card = self.card
        self._header.value = f"<b>Card {self.position + 1} of {len(self.cards)}</b> · question {card.number}"
        self._question.value = (f"<h4 style='margin:4px 0'>{html.escape(card.question)}</h4>"
                                f"<span style='color:#6b7280'>{html.escape(card.source)}</span>"
                                + ("" if self.revealed else "<p><i>Answer aloud first (about 30 seconds), then reveal.</i></p>"))  # fmt: skip
        self._answer.value = _answer_html(card) if self.revealed else ""
        self.reveal_button.description = "Hide answer" if self.revealed else "Reveal"
        self.previous_button.disabled = self.position == 0
        self.next_button.disabled = self.position == len(self.cards) - 1
        verdict = self.progress.marks.get(card.number)
        marked = f" · this card: <b>{verdict}</b>" if verdict else ""
        self._progress.value = f"<b>Progress:</b> {html.escape(self.progress.summary())}{marked}"


def _answer_html(card: Card) -> str:
    parts = [f"<p><b>30-second answer.</b> {html.escape(card.short)}</p>"]
    if card.long:
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in card.long.split("\n\n"))
        parts.append(f"<details><summary><b>2-minute answer</b></summary>{paragraphs}</details>")
    parts.append("<b>More</b><ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in card.more) + "</ul>")
    where = [f"<li><code>{html.escape(p.notebook)}</code> § {html.escape(p.section)}</li>" for p in card.see]
    where += [f"<li><code>{html.escape(name)}</code></li>" for name in card.code]
    parts.append("<b>See it in the course</b><ul>" + "".join(where) + "</ul>")
    return "".join(parts)


def main() -> None:
    """`python -m course_lib.interview`: print every card with its answers."""
    for card in load_cards():
        print(card.text())
        print("\n" + "─" * WIDTH + "\n")


if __name__ == "__main__":
    main()
