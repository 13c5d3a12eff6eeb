"""Interview cards: every pointer exists, progress adds up, the deck works from code and as text."""

import pytest

from course_lib.interview import VERDICTS, Card, CardDeck, Progress, load_cards, notebook_sections, resolve_code
from course_lib.paths import fixtures_dir

NOTEBOOKS = fixtures_dir().parent / "notebooks"


def test_fifteen_cards_then_three_follow_ups_with_short_more_and_long_answers_for_the_first_three():
    cards = load_cards()
    assert [c.number for c in cards] == list(range(1, 19))
    assert [c.source.removeprefix("a follow-up beyond the fifteen: ") for c in cards[15:]] == [
        "transports", "resources vs tools", "auth"]
    assert all(c.short and c.more and c.see and c.code and c.source for c in cards)
    assert [c.number for c in cards if c.long] == [1, 2, 3]


@pytest.mark.parametrize("card", load_cards(), ids=lambda c: f"Q{c.number}")
def test_every_notebook_pointer_names_an_existing_section(card):
    for pointer in card.see:
        path = NOTEBOOKS / pointer.notebook
        assert path.exists(), f"Q{card.number}: {pointer.notebook} does not exist"
        assert pointer.section in notebook_sections(path), f"Q{card.number}: no section {pointer.section!r} in {pointer.notebook}"


@pytest.mark.parametrize("card", load_cards(), ids=lambda c: f"Q{c.number}")
def test_every_code_pointer_resolves_to_a_real_function_or_class(card):
    for name in card.code:
        obj = resolve_code(name)
        assert callable(obj), f"Q{card.number}: {name} is not callable"


def test_resolve_code_names_what_is_missing():
    with pytest.raises(LookupError, match="course_lib.loop has no run_everything"):
        resolve_code("course_lib.loop.run_everything")


def test_progress_counts_the_latest_verdict_per_card():
    progress = Progress()
    for number, verdict in [(1, "got it"), (2, "shaky"), (3, "missed"), (4, "got it"), (5, "got it"),
                            (6, "shaky"), (7, "got it"), (2, "got it"), (2, "shaky")]:
        progress.mark(number, verdict)
    assert progress.summary() == "7 of 15 reviewed: 4 got it, 2 shaky, 1 missed"
    assert progress.to_review() == [3, 2, 6]
    progress.clear()
    assert progress.summary() == "0 of 15 reviewed: 0 got it, 0 shaky, 0 missed"


def test_progress_refuses_unknown_verdicts_and_cards():
    with pytest.raises(ValueError, match="unknown verdict 'perfect'"):
        Progress().mark(1, "perfect")
    with pytest.raises(ValueError, match="no card 16"):
        Progress().mark(16, "got it")


def test_the_deck_hides_reveals_marks_and_moves_on():
    deck = CardDeck()
    assert not deck.revealed and "30-second answer" not in deck.text()
    assert deck.text().startswith("Card 1 of 18 · answer hidden")
    deck.reveal()
    assert deck.card.short.split()[0] in deck.text() and "2-minute answer:" in deck.text()
    deck.mark("got it")
    assert deck.card.number == 2 and not deck.revealed
    deck.mark("shaky", advance=False)
    assert deck.card.number == 2 and "(marked: shaky)" in deck.text()
    assert deck.progress.summary() == "2 of 18 reviewed: 1 got it, 1 shaky, 0 missed"


def test_the_buttons_do_what_the_methods_do():
    deck = CardDeck()
    deck.reveal_button.click()
    assert deck.revealed and deck.reveal_button.description == "Hide answer"
    deck.reveal_button.click()
    assert not deck.revealed
    deck.mark_buttons["missed"].click()
    assert deck.progress.marks == {1: "missed"} and deck.card.number == 2
    deck.next_button.click()
    deck.previous_button.click()
    assert deck.card.number == 2
    deck.show(18)
    assert deck.next_button.disabled and "Progress:" in deck._progress.value


def test_the_text_fallback_is_the_plain_text_of_the_widget_bundle():
    deck = CardDeck()
    bundle = deck._repr_mimebundle_()
    assert bundle["text/plain"] == deck.text() == repr(deck)
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "[ Reveal ]" in deck.text() and "mark: [ Got it ]  [ Shaky ]  [ Missed ]" in deck.text()


def test_a_review_deck_holds_only_the_chosen_cards():
    progress = Progress()
    progress.mark(3, "missed")
    progress.mark(9, "shaky")
    deck = CardDeck(progress=progress, numbers=progress.to_review())
    assert [c.number for c in deck.cards] == [3, 9] and deck.text().startswith("Card 1 of 2")
    deck.mark("got it")
    assert progress.marks[3] == "got it" and deck.card.number == 9
    with pytest.raises(ValueError, match="card 1 is not in this deck"):
        deck.show(1)
    with pytest.raises(ValueError, match="choose cards"):
        CardDeck(numbers=[])


def test_a_card_prints_its_pointers():
    card: Card = load_cards()[12]
    text = card.text()
    assert "notebooks/03_calling_mcp_server.ipynb § 6. `id` and `call_id`: two correlation domains" in text
    assert "course_lib.host.McpHost.call" in text
    assert card.text(reveal=False).count("\n") == 1


def test_verdicts_are_the_three_marks():
    assert VERDICTS == ("got it", "shaky", "missed")
