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
    with pytest.raises(ValueError, match="card 2: reveal the answer before you mark it"):
        deck.mark("shaky")  # a hidden card cannot be marked
    assert deck.progress.marks == {1: "got it"}
    deck.reveal()
    deck.mark("shaky", advance=False)
    assert deck.card.number == 2 and "(marked: shaky)" in deck.text()
    assert deck.progress.summary() == "2 of 18 reviewed: 1 got it, 1 shaky, 0 missed"


def test_the_buttons_do_what_the_methods_do():
    deck = CardDeck()
    deck.reveal_button.click()
    assert deck.revealed and deck.reveal_button.description == "Hide answer"
    deck.reveal_button.click()
    assert not deck.revealed
    deck.mark_buttons["missed"].click()  # disabled while the answer is hidden: a click does nothing
    assert deck.progress.marks == {} and deck.card.number == 1
    deck.reveal_button.click()
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
    assert "[ Reveal ]" in deck.text() and "mark: [ Got it ]  [ Shaky ]  [ Missed ]   (after Reveal)" in deck.text()
    deck.reveal()
    assert "(after Reveal)" not in deck.text()


def test_the_mark_buttons_are_enabled_only_while_the_answer_is_shown():
    deck = CardDeck()
    states = []
    for step in (deck.reveal, deck.hide, deck.reveal, lambda: deck.mark("got it"), deck.reveal, deck.next,
                 deck.reveal, deck.previous):  # fmt: skip
        step()
        states.append((deck.revealed, {b.disabled for b in deck.mark_buttons.values()}))
    assert states == [(True, {False}), (False, {True}), (True, {False}), (False, {True}), (True, {False}),
                      (False, {True}), (True, {False}), (False, {True})]  # fmt: skip
    assert all(b.disabled for b in CardDeck().mark_buttons.values())  # a fresh deck: nothing to mark yet


def test_the_two_minute_cards_say_two_minutes_and_the_others_thirty_seconds():
    cards = {card.number: card for card in load_cards()}
    assert {n for n, card in cards.items() if card.seconds == 120} == {2, 3}  # the source's "2 分钟回答" and the project answer
    assert cards[1].question.startswith("In 30 seconds") and cards[2].question.startswith("In 2 minutes")
    deck = CardDeck()
    assert "(about 30 seconds)" in deck._question.value
    deck.show(2)
    assert "(about 2 minutes)" in deck._question.value and "30 seconds" not in deck._question.value
    deck.reveal()
    assert "In short:" in deck.text() and "30-second answer" not in deck.text() and "2-minute answer:" in deck.text()
    assert "<b>In short.</b> " in deck._answer.value
    deck.show(3)
    assert "(about 2 minutes)" in deck._question.value
    deck.show(4)
    assert "(about 30 seconds)" in deck._question.value


def test_a_review_deck_holds_only_the_chosen_cards():
    progress = Progress()
    progress.mark(3, "missed")
    progress.mark(9, "shaky")
    deck = CardDeck(progress=progress, numbers=progress.to_review())
    assert [c.number for c in deck.cards] == [3, 9] and deck.text().startswith("Card 1 of 2")
    deck.reveal()
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


# ---- the zh-CN edition: the same cards, the answers in Chinese ---------------------------------

import json  # noqa: E402
import re  # noqa: E402
import unicodedata  # noqa: E402

from course_lib import interview  # noqa: E402

# A wire value or identifier outside a code span (call_id, tools/call, isError, INVALID_INPUT):
# the translation keeps each as it is (the same pattern as tools/translations.py's check).
WIRE_WORD = re.compile(r"(?<![\w/.])(?:[A-Za-z]\w*(?:[_/][A-Za-z0-9]\w*)+|[a-z]+[A-Z]\w*|[A-Z]{2,}(?:_[A-Z]+)+)(?![\w/])")


def raw(name):
    return json.loads((fixtures_dir() / name).read_text(encoding="utf-8"))["cards"]


def parts(card):
    """(name, English text) of every part of a card's answer, in order."""
    long = card.get("long")
    return [("short", card["short"]), *((f"long ¶{i + 1}", p) for i, p in enumerate(long.split("\n\n") if long else [])),
            *((f"more {i + 1}", m) for i, m in enumerate(card["more"]))]


def chinese(text):
    """Written in Chinese: Chinese characters, and no English prose (four English words in a row)."""
    return sum("\u4e00" <= ch <= "\u9fff" for ch in text) >= 5 and not re.search(r"[A-Za-z]+(?: [A-Za-z]+){3}", text)


def test_every_card_has_chinese_for_every_part_of_its_english_answer():
    english, zh = raw("interview_cards.json"), raw("interview_cards.zh-CN.json")
    assert [c["number"] for c in zh] == [c["number"] for c in english] == list(range(1, 19))
    for en_card, zh_card in zip(english, zh, strict=True):
        assert [name for name, _ in parts(zh_card)] == [name for name, _ in parts(en_card)], en_card["number"]
        assert all(chinese(text) for _, text in parts(zh_card)), en_card["number"]
        assert set(zh_card) <= {"number", "question", "source", "short", "long", "more"}  # no pointers to drift
    # the source's fifteen are asked in the source's words; the three follow-ups get a Chinese question
    assert [c["number"] for c in english if chinese(c["source"])] == list(range(1, 16))
    assert [c["number"] for c in zh if "question" in c and "source" in c] == [16, 17, 18]
    assert all(chinese(c["question"]) and c["source"].startswith("十五题之外的追问：") for c in zh[15:])


def test_the_chinese_keeps_every_wire_value_of_the_english():
    for en_card, zh_card in zip(raw("interview_cards.json"), raw("interview_cards.zh-CN.json"), strict=True):
        for (name, en_text), (_, zh_text) in zip(parts(en_card), parts(zh_card), strict=True):
            missing = {w for w in WIRE_WORD.findall(en_text) if w not in zh_text}
            assert not missing, f"Q{en_card['number']} {name}: {sorted(missing)}"


def test_the_chinese_uses_the_glossary_and_none_of_its_banned_words():
    glossary = (NOTEBOOKS / "zh-CN" / "GLOSSARY.md").read_text(encoding="utf-8")
    banned = {word.strip() for row in glossary.splitlines() if row.startswith("| ") and row.count("|") >= 5
              for word in row.split("|")[3].split("、") if word.strip() and word.strip() != "不要写作"}  # fmt: skip
    assert {"规范", "白名单", "审批", "服务端", "宿主"} <= banned
    text = (fixtures_dir() / "interview_cards.zh-CN.json").read_text(encoding="utf-8")
    assert not [word for word in banned if word in text]
    for term in ["幂等键", "批准", "允许列表", "沙箱", "严格模式", "轨迹", "关联域", "提示词注入", "规则", "最终消息"]:
        assert term in text, term



def test_the_chinese_deck_asks_the_source_s_question_and_speaks_chinese(zh):
    deck = CardDeck()
    assert deck.card.question == "30 秒回答：什么是 Tool Calling" and deck.card.source == "原文高频面试题第 1 题"
    assert deck.text().startswith("第 1 张，共 18 张 · 答案已隐藏：先大声说出你的回答，再显示答案\n\nQ1. 30 秒回答：什么是 Tool Calling\n")
    assert "[ 显示答案 ]" in deck.text() and "自评：[ 答对了 ]  [ 不太稳 ]  [ 没答上 ]" in deck.text()
    assert [b.description for b in deck.mark_buttons.values()] == ["答对了", "不太稳", "没答上"]
    assert (deck.reveal_button.description, deck.previous_button.description) == ("显示答案", "上一张")
    deck.reveal_button.click()
    text = deck.text()
    assert deck.reveal_button.description == "隐藏答案" and "答案已显示" in text
    assert "30 秒回答：" in text and "2 分钟回答：" in text and "补充：" in text and "在课程里看它：" in text
    assert "工具调用把一件事拆成两半" in text and "Tool calling splits" not in text
    assert "30 秒回答。" in deck._answer.value and "2 分钟回答" in deck._answer.value
    deck.mark_buttons["shaky"].click()
    deck.previous_button.click()
    assert "（已标记：不太稳）" in deck.text() and "本张：<b>不太稳</b>" in deck._progress.value
    assert deck.progress.summary() == "已复习 1/18 张：答对了 0，不太稳 1，没答上 0"
    assert deck._repr_mimebundle_()["text/plain"] == deck.text()
    deck.show(17)
    assert deck.card.question.startswith("追问：") and deck.card.source == "十五题之外的追问：资源与工具"
    assert "第 17 题" in deck._header.value and "先大声作答" in deck._question.value


def test_the_chinese_text_fallback_wraps_at_the_same_width_and_keeps_words_whole(zh):
    for card in load_cards():
        text = card.text()
        for line in text.split("在课程里看它：")[0].splitlines():  # pointers are not wrapped, as in English
            width = sum(2 if unicodedata.east_asian_width(ch) in "WFA" else 1 for ch in line)
            # closing punctuation never starts a line, so it may stand past the width (at most "——")
            assert width <= interview.WIDTH or (width <= interview.WIDTH + 4 and line[-1] in "，。、；：！？）”—"), line
            assert not line.strip().startswith(("，", "。", "、", "：", "；", "）")), line
        flat = "".join(line.strip().removeprefix("- ") for line in text.splitlines())
        zh_card = raw("interview_cards.zh-CN.json")[card.number - 1]
        for _, part in parts(zh_card):
            for word in WIRE_WORD.findall(part):
                assert word in text, (card.number, word)  # never cut inside an identifier
            assert part.replace(" ", "") in flat.replace(" ", ""), card.number


def test_a_chinese_pointer_names_the_section_of_the_zh_cn_twin(zh):
    card = load_cards()[0]
    assert str(card.see[0]) == f"notebooks/zh-CN/00_map_and_first_run.ipynb § {interview.twin_section(card.see[0].notebook, card.see[0].section)}"
    assert re.search("[\u4e00-\u9fff]", str(card.see[0])), str(card.see[0])  # e.g. "§ 2. 谁做什么"
    assert interview.twin_section("00_map_and_first_run.ipynb", "no such section") is None


@pytest.mark.parametrize("card", load_cards(), ids=lambda c: f"Q{c.number}")
def test_every_pointer_with_a_twin_finds_its_section_there_under_the_same_number(card):
    for pointer in card.see:
        if not (NOTEBOOKS / "zh-CN" / pointer.notebook).exists():
            continue  # that notebook's twin is not built yet: the pointer shows the English section
        title = interview.twin_section(pointer.notebook, pointer.section)
        assert title, f"Q{card.number}: {pointer} has no title in the zh-CN twin"
        number = re.match(r"\d+\. ", pointer.section)
        assert title.startswith(number[0]) if number else title != pointer.section, (pointer.section, title)


def test_the_english_pointers_and_sheet_stay_english(capsys):
    card = load_cards()[0]
    assert str(card.see[0]) == "notebooks/00_map_and_first_run.ipynb § 2. Who does what"
    interview.main()
    out = capsys.readouterr().out
    assert out.startswith("Q1. In 30 seconds: what is tool calling?\n    (30 秒回答：什么是 Tool Calling)\n")


def test_the_study_sheet_prints_in_chinese(zh, capsys):
    interview.main()
    out = capsys.readouterr().out
    assert out.count("30 秒回答：\n") == 16 and out.count("简短回答：\n") == 2  # cards 2 and 3 are two-minute cards
    assert "原文高频面试题第 15 题" in out and "十五题之外的追问：鉴权" in out
    assert "30-second answer" not in out and "See it in the course" not in out


def test_a_chinese_file_that_does_not_match_the_english_is_refused(zh, tmp_path, monkeypatch):
    entries = raw("interview_cards.zh-CN.json")
    entries[3]["more"].pop()
    path = tmp_path / "interview_cards.zh-CN.json"
    path.write_text(json.dumps({"cards": entries}, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(interview, "chinese_cards_path", lambda: path)
    with pytest.raises(ValueError, match="card 4 does not match the English card"):
        load_cards()
    entries = raw("interview_cards.zh-CN.json")[:17]
    path.write_text(json.dumps({"cards": entries}, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="numbered as the English ones"):
        load_cards()


def test_the_chinese_deck_refuses_in_chinese(zh):
    with pytest.raises(ValueError, match="没有 '答对了' 这种自评；请用其中之一：got it, shaky, missed"):
        Progress().mark(1, "答对了")
    with pytest.raises(ValueError, match="没有第 19 张卡片"):
        Progress(total=18).mark(19, "got it")
    with pytest.raises(ValueError, match="这副卡片里没有第 1 张（3, 9）"):
        CardDeck(numbers=[3, 9]).show(1)
    with pytest.raises(ValueError, match="请在 1–18 中选卡片"):
        CardDeck(numbers=[])


def test_a_pointer_prints_its_section_title_as_plain_text(monkeypatch):
    """A heading's markdown emphasis is not printed: '· value', not '· **value**', in both editions."""
    pointer = interview.Pointer("00_map_and_first_run.ipynb", "6. The model's call · **value**")
    monkeypatch.setenv("COURSE_LANG", "en")
    assert str(pointer) == "notebooks/00_map_and_first_run.ipynb § 6. The model's call · value"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert "**" not in str(pointer) and str(pointer).startswith("notebooks/zh-CN/00_map_and_first_run.ipynb § 6. ")


def test_the_chinese_cards_write_no_double_dashes():
    """The zh-CN edition's style (notebooks 00–05): commas, colons, parentheses or two sentences, not "——"."""
    text = (fixtures_dir() / "interview_cards.zh-CN.json").read_text(encoding="utf-8")
    assert "——" not in text


def test_the_chinese_deck_gives_each_card_its_time_and_marks_only_after_reveal(zh):
    deck = CardDeck()
    assert "先大声作答（约 30 秒），再显示答案。" in deck._question.value
    assert deck.text().endswith("自评：[ 答对了 ]  [ 不太稳 ]  [ 没答上 ]   （显示答案之后）\n进度：已复习 0/18 张：答对了 0，不太稳 0，没答上 0")
    with pytest.raises(ValueError, match="第 1 题：先显示答案，再给自己打分"):
        deck.mark("got it")
    deck.show(2)
    assert "先大声作答（约 2 分钟），再显示答案。" in deck._question.value
    deck.reveal()
    assert "简短回答：" in deck.text() and "30 秒回答" not in deck.text() and "<b>简短回答。</b>" in deck._answer.value
    assert not any(b.disabled for b in deck.mark_buttons.values())
