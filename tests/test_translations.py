"""The 简体中文 edition: catalogs that follow the English, a generator, and a check that names every
notebook and cell out of step (tools/translations.py), plus course_lib.lang and the READMEs."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest

REPO = Path(__file__).resolve().parents[1]
PILOT = "00_map_and_first_run"
_spec = importlib.util.spec_from_file_location("translations", REPO / "tools" / "translations.py")
translations = importlib.util.module_from_spec(_spec)
sys.modules["translations"] = translations  # dataclasses look their module up by name
_spec.loader.exec_module(translations)
_links_spec = importlib.util.spec_from_file_location("binder_links", REPO / "binder" / "links.py")
binder_links = importlib.util.module_from_spec(_links_spec)
_links_spec.loader.exec_module(binder_links)


def _copy(tmp_path: Path) -> translations.Paths:
    """What the tool reads for the pilot, in a temporary checkout."""
    real, copy = translations.Paths(), translations.Paths(tmp_path)
    for source, target in [(real.english(PILOT), copy.english(PILOT)), (real.catalog(PILOT), copy.catalog(PILOT)),
                           (real.translated(PILOT), copy.translated(PILOT)), (real.code_strings, copy.code_strings),
                           (real.glossary, copy.glossary)]:  # fmt: skip
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return copy


def _edit_cell(path: Path, cell_id: str, edit) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    [cell] = [c for c in notebook["cells"] if c["id"] == cell_id]
    cell["source"] = edit("".join(cell["source"]))
    path.write_text(json.dumps(notebook, ensure_ascii=False, indent=1), encoding="utf-8")


def _check(paths: translations.Paths, capsys) -> tuple[int, str]:
    code = translations.main(["check", PILOT], paths)
    return code, capsys.readouterr().err


# ---- the pilot and the make targets -------------------------------------------------------------


CHINESE = re.compile(r"[\u4e00-\u9fff]")
TRANSLATED = sorted(p.stem for p in translations.Paths().catalog(PILOT).parent.glob("*.po"))


def test_the_pilot_has_a_catalog():
    assert PILOT in TRANSLATED


@pytest.mark.parametrize("stem", TRANSLATED)
def test_the_check_passes_on_every_translated_notebook(stem):
    """Today the pilot only; every notebook that gets a catalog is checked from then on."""
    done = subprocess.run([sys.executable, "tools/translations.py", "check", stem], cwd=REPO,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"zh-CN edition in step with the English ({stem})"


def test_the_make_targets_run_the_tool_and_make_notebooks_executes_both_editions():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^check-translations:.*\n\t\$\(BIN\)/python tools/translations.py check$", makefile, re.M)
    assert re.search(r"^translations:.*\n\t\$\(BIN\)/python tools/translations.py extract$", makefile, re.M)
    recipe = re.search(r"^notebooks:.*?\n((?:\t.*\n)+)", makefile, re.M)[1]
    assert "cd notebooks && for nb in [0-9]*.ipynb" in recipe  # the English loop, as before
    assert "tools/translations.py build" in recipe and "cd notebooks/zh-CN &&" in recipe
    test = re.search(r"^test:.*\n\t(.*)", makefile, re.M)[1]
    assert "tools/translations.py check" in test and "pytest tests notebooks" in makefile  # nbval collects notebooks/zh-CN


def test_every_english_cell_of_the_pilot_has_its_translation():
    paths = translations.Paths()
    texts, problems = translations.wanted(paths, PILOT)
    catalog = polib.pofile(str(paths.catalog(PILOT)))
    english = json.loads(paths.english(PILOT).read_text(encoding="utf-8"))
    markdown = [c["id"] for c in english["cells"] if c["cell_type"] == "markdown"]
    assert problems == [] and [t.cell_id for t in texts if t.kind == "markdown"] == markdown
    assert catalog.percent_translated() == 100 and catalog.fuzzy_entries() == [] and catalog.obsolete_entries() == []
    assert sum(t.kind == "code" for t in texts) >= 30
    chinese = re.compile(r"[\u4e00-\u9fff]")
    assert all(chinese.search(entry.msgstr) for entry in catalog)


@pytest.mark.parametrize("stem", TRANSLATED)
def test_the_zh_cn_code_cells_are_the_english_ones_but_for_catalogued_strings_and_prose(stem):
    """Catalogued literals, comments and docstrings are the only differences, and every comment and
    docstring of the twin is Chinese."""
    paths = translations.Paths()
    english = json.loads(paths.english(stem).read_text(encoding="utf-8"))["cells"]
    chinese = json.loads(paths.translated(stem).read_text(encoding="utf-8"))["cells"]
    assert [(c["id"], c["cell_type"]) for c in english] == [(c["id"], c["cell_type"]) for c in chinese]
    catalog = polib.pofile(str(paths.catalog(stem)))
    back = {}  # per cell: translated literal → English literal
    for entry in catalog:
        back.setdefault(entry.msgctxt.split(":")[1], {})[entry.msgstr] = entry.msgid
    changed = 0
    for en, zh in zip(english, chinese):
        if en["cell_type"] != "code":
            continue
        en_source, zh_source = "".join(en["source"]), "".join(zh["source"])
        english_again = translations.replace_prose(zh_source, back.get(en["id"], {}))
        assert translations.replace_literals(english_again, back.get(en["id"], {})) == en_source, en["id"]
        assert not [text for *_, text in translations.prose(zh_source) if not CHINESE.search(text)], en["id"]
        changed += en_source != zh_source
    if stem == PILOT:
        assert changed >= 10
        assert 'TASK = "显示 /workspace/notes.txt 的前 20 行"' in "".join(chinese[2]["source"])


def test_the_stored_zh_cn_outputs_speak_chinese_where_the_learner_reads():
    chinese = json.loads(translations.Paths().translated(PILOT).read_text(encoding="utf-8"))["cells"]
    text = {c["id"]: "".join("".join(o.get("text", "")) for o in c.get("outputs", [])) for c in chinese}
    assert "✓ 1. 服务器真的读取了允许读取的文本" in text["85ba258f"]
    assert text["5b2e669d"].startswith("✗ 还没有作答") and text["c36411df"].startswith("✗ 还没有作答")
    assert "call_id      call_" in text["f17aaca9"]  # wire values and ids untouched


def test_extract_and_build_change_nothing_when_nothing_changed(tmp_path):
    paths = _copy(tmp_path)
    before = paths.catalog(PILOT).read_bytes(), paths.translated(PILOT).read_bytes()
    translations.extract(paths, PILOT)
    translations.write(paths, PILOT)  # keeps every stored output: each cell's source is unchanged
    assert (paths.catalog(PILOT).read_bytes(), paths.translated(PILOT).read_bytes()) == before


# ---- staleness: a changed English cell fails, by notebook and cell ------------------------------


def test_a_changed_english_markdown_cell_fails_the_check_naming_notebook_and_cell(tmp_path, capsys):
    paths = _copy(tmp_path)
    assert _check(paths, capsys)[0] == 0
    _edit_cell(paths.english(PILOT), "73eb11dc", lambda s: s.replace("Judge success", "Always judge success"))
    code, err = _check(paths, capsys)
    assert code == 1
    assert f"{PILOT}.ipynb cell 73eb11dc: the English changed since it was translated" in err
    assert f"zh-CN/{PILOT}.ipynb cell 73eb11dc: its source is not what the catalog and the English give" in err

    translations.extract(paths, PILOT)  # gettext semantics: fuzzy, the old translation kept as a hint
    [entry] = [e for e in polib.pofile(str(paths.catalog(PILOT))) if e.msgctxt == f"{PILOT}:73eb11dc"]
    assert entry.fuzzy and "Always judge success" in entry.msgid and "Judge success" in entry.previous_msgid
    assert entry.msgstr.startswith("## 学习目标")
    code, err = _check(paths, capsys)
    assert code == 1 and f"{PILOT}.ipynb cell 73eb11dc: stale translation (fuzzy)" in err
    # the generator never shows a stale translation: that cell falls back to the English
    built = {c["id"]: c for c in translations.build(paths, PILOT)["cells"]}
    assert "Always judge success" in built["73eb11dc"]["source"]

    catalog = polib.pofile(str(paths.catalog(PILOT)))
    [entry] = [e for e in catalog if e.msgctxt == f"{PILOT}:73eb11dc"]
    entry.msgstr = entry.msgstr.replace("凭证据判断成功", "始终凭证据判断成功")
    entry.flags.remove("fuzzy")
    entry.previous_msgid = None
    catalog.save(str(paths.catalog(PILOT)))
    translations.write(paths, PILOT)
    assert _check(paths, capsys)[0] == 0
    assert "始终凭证据判断成功" in "".join(json.loads(paths.translated(PILOT).read_text(encoding="utf-8"))["cells"][1]["source"])


def test_a_changed_catalogued_code_string_fails_naming_notebook_and_cell(tmp_path, capsys):
    paths = _copy(tmp_path)
    _edit_cell(paths.english(PILOT), "dcc0cfdc", lambda s: s.replace("files read by the server so far:", "files read so far:"))
    code, err = _check(paths, capsys)
    assert code == 1
    assert (f"{PILOT}.ipynb cell dcc0cfdc: the catalogued string 'files read by the server so far:' is no longer in "
            "the cell") in err  # fmt: skip
    with pytest.raises(ValueError, match="dcc0cfdc"):
        translations.extract(paths, PILOT)


def test_extract_adds_new_cells_empty_and_makes_removed_ones_obsolete(tmp_path, capsys):
    paths = _copy(tmp_path)
    notebook = json.loads(paths.english(PILOT).read_text(encoding="utf-8"))
    removed = notebook["cells"].pop(1)  # the learning goals
    notebook["cells"].insert(1, {"cell_type": "markdown", "id": "new00001", "metadata": {}, "source": "## New section"})
    paths.english(PILOT).write_text(json.dumps(notebook), encoding="utf-8")
    translations.extract(paths, PILOT)
    catalog = polib.pofile(str(paths.catalog(PILOT)))
    [new] = [e for e in catalog if e.msgctxt == f"{PILOT}:new00001"]
    assert (new.msgid, new.msgstr, new.fuzzy) == ("## New section", "", False)
    [gone] = catalog.obsolete_entries()
    assert gone.msgctxt == f"{PILOT}:{removed['id']}" and gone.msgstr.startswith("## 学习目标")
    code, err = _check(paths, capsys)
    assert code == 1 and f"{PILOT}.ipynb cell new00001: not translated (empty msgstr)" in err


def test_the_check_says_when_a_notebook_has_no_catalog(tmp_path, capsys):
    paths = _copy(tmp_path)
    shutil.copy2(paths.english(PILOT), paths.notebooks / "01_declaring_tools.ipynb")
    # the stand-in 01 has the pilot's cells, not the real 01's: drop the real 01's listed strings
    tables = paths.code_strings.read_text(encoding="utf-8").split('\n["')
    paths.code_strings.write_text('\n["'.join(t for t in tables if not t.startswith('01_declaring_tools"]')),
                                  encoding="utf-8")
    assert translations.main(["check"], paths) == 1
    assert "01_declaring_tools.ipynb: no catalog tools/locale/zh_CN/LC_MESSAGES/01_declaring_tools.po" in capsys.readouterr().err
    assert translations.main(["extract"], paths) == 0  # updates the catalogs there are, starts none
    assert not paths.catalog("01_declaring_tools").exists()
    assert translations.main(["extract", "01_declaring_tools"], paths) == 0  # naming one starts it
    assert all(e.msgstr == "" for e in polib.pofile(str(paths.catalog("01_declaring_tools"))))


# ---- wire values and the glossary ---------------------------------------------------------------


def test_the_glossary_fixes_one_term_per_concept():
    rows = {english: (chinese, avoid, checked) for english, chinese, avoid, checked in
            translations.glossary(translations.Paths())}  # fmt: skip
    assert len(rows) >= 40
    fixed = {"rule": "规则", "value": "值", "result": "结果", "feedback": "反馈", "declaration": "声明",
             "approval": "批准", "idempotency key": "幂等键", "allowlist": "允许列表", "sandbox": "沙箱",
             "strict mode": "严格模式", "tool choice": "工具选择", "parallel calls": "并行调用",
             "protocol error": "协议错误", "tool error": "工具错误", "execution layer": "执行层",
             "offline model": "离线模型", "arguments text": "参数文本", "call_id": "`call_id`"}  # fmt: skip
    for english, chinese in fixed.items():
        assert rows[english][0] == chinese, english
    assert all(rows[t][2] for t in ("rule", "value", "result", "feedback", "declaration", "evidence"))
    chinese_terms = [chinese for chinese, _, _ in rows.values()]
    assert len(chinese_terms) == len(set(chinese_terms))  # one concept, one term: no term serves two


def test_the_pilot_uses_the_glossary_terms_and_keeps_wire_values():
    paths = translations.Paths()
    catalog = polib.pofile(str(paths.catalog(PILOT)))
    entries = {e.msgctxt.split(":")[1]: e for e in catalog if e.comment.startswith("markdown")}
    recap = entries["8eb383d0"].msgstr
    for term in ("**规则**", "**值**", "**结果**", "反馈", "`call_id`", "`function_call`", "`function_call_output.output`"):
        assert term in recap, term
    every = "\n".join(e.msgstr for e in catalog)
    for avoided in ("回馈", "数值", "审批", "最终答案", "应用程序", "调用ID"):
        assert avoided not in every
    for wire in ("`function_call`", "`call_id`", "`tools/call`", "`isError: false`", "`inputSchema`", "`output_text`"):
        assert every.count(wire) >= 1


def test_the_check_catches_a_translated_wire_value_and_an_off_glossary_term():
    terms = translations.glossary(translations.Paths())
    text = translations.Wanted(PILOT, "x", "markdown", "## 5. Errors\n\nThe feedback carries `call_id` and INVALID_INPUT.")
    assert translations.entry_problems(text, "## 5. 错误\n\n反馈带着 `call_id` 和 INVALID_INPUT。", terms) == []
    found = translations.entry_problems(text, "## 5. 错误\n\n回馈带着 `调用ID` 和 无效输入。", terms)
    assert any("drops wire values ['INVALID_INPUT', 'call_id']" in p for p in found)
    assert any("code spans the English does not have ['调用ID']" in p for p in found)
    assert any("the glossary's term is '反馈'" in p for p in found)
    assert any("'回馈' is not the glossary's term for 'feedback'" in p for p in found)
    assert any("headings" in p for p in translations.entry_problems(text, "5. 错误：反馈带着 `call_id` 和 INVALID_INPUT", terms))
    label = translations.Wanted(PILOT, "x", "code", "  call_id {call.call_id} of {n}")
    assert any("fields" in p for p in translations.entry_problems(label, "  call_id {call.call_id}", terms))


def test_a_code_span_over_a_line_break_is_one_wire_value():
    text = translations.Wanted(PILOT, "x", "markdown", "Send `Authorization: Bearer\n<token>` on every request. A `TokenVerifier`\nchecks it.")
    assert translations.wire_values(text.msgid) == {"Authorization: Bearer <token>", "TokenVerifier"}
    assert translations.entry_problems(text, "每个请求都带 `Authorization: Bearer <token>`。由 `TokenVerifier` 检查它。", []) == []
    found = translations.entry_problems(text, "每个请求都带 `Authorization: <token>`。由 `TokenVerifier` 检查它。", [])
    assert any("drops wire values ['Authorization: Bearer <token>']" in p for p in found)


def test_literals_finds_one_line_strings_and_f_strings_and_nothing_else():
    code = ('x = "→ a"; y = f"{x!r} → {len(x)}"\n%time z = "b"\n'
            "w = 'c' 'd'\nv = b\"e\"\nu = '''f'''\nprint('it\\'s', r\"g\")\n")
    bodies = [body for *_, body in translations.literals(code)]
    assert bodies == ["→ a", "{x!r} → {len(x)}", "it\\'s"]  # the %magic line is blanked, not parsed
    swapped = translations.replace_literals(code, {"→ a": "甲", "{x!r} → {len(x)}": "{x!r} 是 {len(x)}"})
    assert swapped.startswith('x = "甲"; y = f"{x!r} 是 {len(x)}"\n%time')


def test_prose_finds_comments_and_one_line_docstrings_and_leaves_directives():
    code = ('def f(x):\n    """Say what f does."""\n    return x  # the value, not the rule\n'
            "# fmt: skip\n%time f(1)  # a magic line is blanked\ny = '# not a comment'\n"
            'class C:\n    """\n    many lines\n    """\n#\n# ----\nz = 1  # noqa: E501\n')
    assert [text for *_, text in translations.prose(code)] == ["Say what f does.", "the value, not the rule"]
    swapped = translations.replace_prose(code, {"Say what f does.": "说明 f 做什么。",
                                                "the value, not the rule": "是值，不是规则"})  # fmt: skip
    assert swapped.startswith('def f(x):\n    """说明 f 做什么。"""\n    return x  # 是值，不是规则\n# fmt: skip')
    assert translations.replace_prose(swapped, {"说明 f 做什么。": "Say what f does.",
                                                "是值，不是规则": "the value, not the rule"}) == code  # fmt: skip


def test_a_comment_that_repeats_a_catalogued_literal_is_one_entry_translated_in_both_places(tmp_path):
    paths = _copy(tmp_path)
    task = "Show the first 20 lines of /workspace/notes.txt"
    _edit_cell(paths.english(PILOT), "90523a52", lambda source: source + f"\n# {task}\n")
    texts, problems = translations.wanted(paths, PILOT)
    assert problems == [] and [t.kind for t in texts if (t.cell_id, t.msgid) == ("90523a52", task)] == ["prose"]
    translations.extract(paths, PILOT)
    [entry] = [e for e in polib.pofile(str(paths.catalog(PILOT))) if e.msgid == task]
    [cell] = [c for c in translations.build(paths, PILOT)["cells"] if c["id"] == "90523a52"]
    assert cell["source"].count(entry.msgstr) == 2 and task not in cell["source"]


def test_a_changed_english_comment_fails_the_check_naming_notebook_and_cell(tmp_path, capsys):
    paths = _copy(tmp_path)
    english = json.loads(paths.english(PILOT).read_text(encoding="utf-8"))
    cell = next(c for c in english["cells"] if c["cell_type"] == "code" and translations.prose("".join(c["source"])))
    start, end, text = translations.prose("".join(cell["source"]))[0]
    translations.extract(paths, PILOT)
    catalog = polib.pofile(str(paths.catalog(PILOT)), wrapwidth=100)
    catalog.find(text, msgctxt=f"{PILOT}:{cell['id']}").msgstr = "旧的说明"  # as if it had been translated
    catalog.save()
    _edit_cell(paths.english(PILOT), cell["id"], lambda source: source[:start] + "a new remark" + source[end:])
    code, err = _check(paths, capsys)
    assert code == 1 and f"{PILOT}.ipynb cell {cell['id']}: " in err
    translations.extract(paths, PILOT)
    [entry] = [e for e in polib.pofile(str(paths.catalog(PILOT))) if e.msgid == "a new remark"]
    assert entry.fuzzy and entry.previous_msgid == text and entry.msgstr == "旧的说明"  # the old one, as a hint


# ---- the language of course_lib -----------------------------------------------------------------


def test_course_lib_finds_the_fixtures_from_the_zh_cn_folder_when_installed_elsewhere(tmp_path, monkeypatch):
    """Binder installs course_lib into site-packages: then the fixtures are found above the kernel's
    folder, which for the Chinese edition is one level deeper (notebooks/zh-CN)."""
    from course_lib import paths

    monkeypatch.delenv("COURSE_FIXTURES", raising=False)
    monkeypatch.setattr(paths, "_BESIDE_PACKAGE", tmp_path)  # nothing beside the package
    monkeypatch.chdir(REPO / "notebooks" / "zh-CN")
    assert paths.fixtures_dir() == REPO / "fixtures" and paths.workspace_dir() == REPO / "fixtures" / "workspace"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError):
        paths.fixtures_dir()



def test_the_language_follows_the_edition_folder_and_course_lang(tmp_path, monkeypatch):
    from course_lib import lang

    monkeypatch.delenv("COURSE_LANG", raising=False)
    (tmp_path / "zh-CN").mkdir()
    monkeypatch.chdir(tmp_path)
    assert lang.language() == "en" and lang.say("{n} ok", "{n} 个通过", n=3) == "3 ok"
    monkeypatch.chdir(tmp_path / "zh-CN")
    assert lang.language() == "zh-CN" and lang.say("{n} ok", "{n} 个通过", n=3) == "3 个通过"
    monkeypatch.setenv("COURSE_LANG", "en")
    assert lang.language() == "en"
    monkeypatch.setenv("COURSE_LANG", "zh_CN.UTF-8")
    assert lang.language() == "zh-CN"


SPELLINGS = {
    "zh-CN": ["zh-CN", "zh_CN", "zh_CN.UTF-8", "zh_CN.utf8", "zh_CN.GB18030", "zh", "ZH", "zh-cn", "zh-Hans",
              "zh-Hans-CN", "zh_SG.UTF-8", "zh-Hant-TW", "zh_TW.UTF-8", " zh_CN ", "zh_CN@pinyin"],
    "en": ["en", "EN", "en-US", "en_US.UTF-8", "en_GB.ISO-8859-1@euro", "en-Latn-US", "C", "C.UTF-8", "POSIX"],
    None: ["fr", "de_DE.UTF-8", "ja-JP", "", "zhx", "english", "cn"],
}  # fmt: skip


@pytest.mark.parametrize(("tag", "edition"), [(tag, edition) for edition, tags in SPELLINGS.items() for tag in tags])
def test_every_usual_spelling_of_a_language_names_its_edition(tag, edition):
    from course_lib import lang

    assert lang.edition_of(tag) == edition


def test_a_course_lang_naming_no_edition_says_so_once_in_both_languages_and_never_raises(tmp_path):
    """Every notebook's first cell calls language(): COURSE_LANG=fr must not break it (it once raised)."""
    script = "from course_lib import lang\nprint(lang.language(), lang.language(), lang.say('ok', '好'))"
    for folder, expected in ((tmp_path, "en en ok"), (tmp_path / "zh-CN", "zh-CN zh-CN 好")):
        folder.mkdir(exist_ok=True)
        done = subprocess.run([sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "COURSE_LANG": "fr", "PYTHONPATH": str(REPO)})  # fmt: skip
        assert done.returncode == 0 and done.stdout.strip() == expected, done.stderr
        [line] = done.stderr.splitlines()  # the folder's edition is kept, said once, in both languages
        assert "COURSE_LANG='fr'" in line and "names no edition" in line and "不是本课程的版本" in line


@pytest.mark.parametrize("language, kinds, final", [
    ("en", '✗ Not answered yet: replace each ... with "rule", "value" or "result".\n',
     "✗ Not answered yet: define final_text(response_json), then set answer = final_text (the function itself, without parentheses) and run the cell again.\n"),
    ("zh-CN", '✗ 还没有作答：把每个 ... 换成 "rule"、"value" 或 "result"。\n',
     "✗ 还没有作答：定义 final_text(response_json)，然后写 answer = final_text（函数本身，不带括号），再运行这个单元格。\n"),
])  # fmt: skip
def test_notebook_00_checks_speak_the_editions_language(language, kinds, final, monkeypatch, capsys):
    from course_lib.exercises import nb00

    monkeypatch.setenv("COURSE_LANG", language)
    assert nb00.check_kinds(dict.fromkeys(nb00.OBJECTS, ...)) is False
    assert nb00.check_final_text(...) is False
    assert capsys.readouterr().out == kinds + final


def test_the_chinese_pass_message_of_notebook_00(monkeypatch, capsys):
    from course_lib.exercises import nb00

    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert nb00.check_final_text(nb00.SOLUTIONS["check_final_text"]()) is True
    assert capsys.readouterr().out == "✓ 在全部 165 个响应上（消息、调用、reasoning 和 refusal 最多三项的每一种排列），final_text 与 SDK 的 output_text 一致。\n"


@pytest.mark.parametrize(("environment", "folder"), [
    ({"COURSE_LANG": "zh-CN"}, "notebooks/zh-CN"), ({"COURSE_LANG": "zh_CN"}, "notebooks/zh-CN"),
    ({"COURSE_LANG": "zh-Hans"}, "notebooks/zh-CN"), ({"LANG": "zh_CN.UTF-8"}, "notebooks/zh-CN"),
    ({"LANG": "zh_SG.GB18030"}, "notebooks/zh-CN"), ({"LC_ALL": "zh_CN.utf8", "LANG": "en_US.UTF-8"}, "notebooks/zh-CN"),
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "notebooks/zh-CN"),
    ({"LANG": "de_DE.UTF-8", "LANGUAGE": "zh_CN:en"}, "notebooks/zh-CN"), ({"LANG": "C", "LANGUAGE": "zh_CN"}, "notebooks"),
    ({"LANG": "zh_CN.UTF-8", "COURSE_LANG": "en"}, "notebooks"), ({"LANG": "C.UTF-8"}, "notebooks"),
    ({"COURSE_LANG": "fr"}, "notebooks"), ({"LANG": "fr_FR.UTF-8"}, "notebooks"), ({}, "notebooks"),
])  # fmt: skip
def test_make_lab_opens_the_edition_of_the_learners_language(environment, folder):
    """The Chinese README's `make lab` opens the 简体中文 notebook 00 on a Chinese machine, or when asked,
    and hands JupyterLab the zh-CN edition's settings (its menus in Chinese) only then."""
    from course_lib import lang

    env = {k: v for k, v in os.environ.items() if k not in {"COURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"}}
    env |= environment
    done = subprocess.run(["make", "-n", "lab"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    [command] = [line for line in done.stdout.splitlines() if " lab " in f"{line} " and "jupyter" in line]
    assert f" {folder}/00_map_and_first_run.ipynb" in command, done.stdout
    edition = "zh-CN" if folder.endswith("zh-CN") else "en"
    assert lang.machine_edition(env) == edition and f"lab_settings.py --edition {edition})" in command
    assert done.stderr.count("names no edition") == (1 if environment.get("COURSE_LANG") == "fr" else 0)


def test_the_zh_cn_edition_gets_jupyterlabs_chinese_locale_and_the_english_one_keeps_its_own(tmp_path):
    """What `make lab` hands JupyterLab for each edition, read as JupyterLab reads overrides."""
    from jupyterlab_server.settings_utils import _get_overrides  # the function lab calls for overrides

    env = {**os.environ, "JUPYTERLAB_DIR": str(tmp_path / "lab")}
    run = lambda *args: subprocess.run([sys.executable, "binder/lab_settings.py", *args], cwd=REPO, env=env,  # noqa: E731
                                       capture_output=True, text=True, timeout=60, check=True).stdout.split()  # fmt: skip
    assert run("--edition", "en") == [] and run() == []
    [argument] = run("--edition", "zh-CN")
    assert argument == f"--LabApp.app_settings_dir={tmp_path / 'lab' / 'settings-zh-CN'}"
    chinese, _ = _get_overrides(argument.split("=", 1)[1])
    english, _ = _get_overrides(str(tmp_path / "lab" / "settings"))
    assert chinese["@jupyterlab/translation-extension:plugin"] == {"locale": "zh_CN"}
    assert "@jupyterlab/translation-extension:plugin" not in english
    assert chinese["@jupyterlab/apputils-extension:notification"] == english["@jupyterlab/apputils-extension:notification"]


def test_jupyterlab_itself_can_speak_chinese():
    """The language pack is a dependency: in the English interface Settings → Language lists it as
    "<displayName> - <nativeName>" (JupyterLab's translation extension), which README.zh-CN names."""
    from jupyterlab_server.translation_utils import get_language_packs

    packs, _ = get_language_packs("en")
    item = f"{packs['zh_CN']['displayName']} - {packs['zh_CN']['nativeName']}"
    assert item == "Chinese (Simplified, China) - 中文 (简体, 中国)"
    for guide in (REPO / "README.zh-CN.md", REPO / "notebooks" / "zh-CN" / "INSTRUCTOR.md"):
        assert f"Settings → Language → {item}" in guide.read_text(encoding="utf-8"), guide.name


# ---- README.zh-CN.md ----------------------------------------------------------------------------


def test_the_chinese_readme_has_the_same_two_commands_and_its_binder_links_check():
    readme = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
    quick = re.findall(r"```bash\n(.*?)```", readme, re.S)[0]
    assert [line.split("#")[0].strip() for line in quick.splitlines() if line.strip()] == ["make lab", "make test"]
    assert "README.zh-CN.md" in binder_links.FILES and binder_links.problems() == []
    # The zh-CN links enter through the course's server extension: JupyterLab in Chinese, then the notebook.
    assert "(https://mybinder.org/v2/gh/OWNER/REPO/HEAD?urlpath=course/zh-CN/notebooks/zh-CN/00_map_and_first_run.ipynb)" in readme
    assert "urlpath=lab/tree/" not in readme
    for target in re.findall(r"`make ([a-z-]+)`", readme):
        assert re.search(rf"^{target}:", (REPO / "Makefile").read_text(encoding="utf-8"), re.M), target
    english = (REPO / "README.md").read_text(encoding="utf-8")
    assert "[简体中文](README.zh-CN.md)" in english and "`make check-translations`" in english


def test_the_chinese_readme_gives_the_english_windows_commands_for_its_own_edition():
    """The same PowerShell lines as README.md, but opening the zh-CN notebook 00 with the zh-CN settings."""
    block = lambda text: re.findall(r"```powershell\n(.*?)```", text, re.S)[0].splitlines()  # noqa: E731
    english = block((REPO / "README.md").read_text(encoding="utf-8"))
    chinese = block((REPO / "README.zh-CN.md").read_text(encoding="utf-8"))
    edition = ["$zh = .venv\\Scripts\\python binder\\lab_settings.py --edition zh-CN",
               ".venv\\Scripts\\jupyter lab notebooks\\zh-CN\\00_map_and_first_run.ipynb $zh"]  # fmt: skip
    assert [line for line in chinese if line not in edition] == [line for line in english if "lab" not in line]
    assert [line for line in chinese if line in edition] == edition
    assert chinese.index(edition[1]) == english.index(".venv\\Scripts\\jupyter lab notebooks\\00_map_and_first_run.ipynb")


def _link_docs_and_notebooks(tmp_path: Path) -> None:
    """The documents with Binder links, copied, and every notebook of both editions as an empty file."""
    for name in ("README.md", "README.zh-CN.md", "notebooks/INSTRUCTOR.md", "notebooks/zh-CN/INSTRUCTOR.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    for notebook in [*(REPO / "notebooks").glob("[0-9]*.ipynb"), *(REPO / "notebooks" / "zh-CN").glob("[0-9]*.ipynb")]:
        (tmp_path / notebook.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / notebook.relative_to(REPO)).touch()


def test_the_link_check_wants_the_twin_once_it_exists(tmp_path):
    _link_docs_and_notebooks(tmp_path)
    assert binder_links.problems(tmp_path) == []
    # Go back to the day before 09's twin existed: its links opened the English notebook, and passed.
    name = "09_capstone_notes_assistant.ipynb"
    for doc in ("README.zh-CN.md", "notebooks/zh-CN/INSTRUCTOR.md"):
        text = (tmp_path / doc).read_text(encoding="utf-8").replace(f"notebooks/zh-CN/{name}", f"notebooks/{name}")
        (tmp_path / doc).write_text(text.replace(f"](zh-CN/{name})", f"](../{name})"), encoding="utf-8")
    (tmp_path / "notebooks" / "zh-CN" / name).unlink()
    assert binder_links.problems(tmp_path) == []
    (tmp_path / "notebooks" / "zh-CN" / name).touch()  # the twin lands: the links must follow
    assert binder_links.problems(tmp_path) == [
        f"README.zh-CN.md: opens notebooks/{name}, not its notebooks/zh-CN edition",
        f"README.zh-CN.md: no Binder link for notebooks/zh-CN/{name}",
        f"notebooks/zh-CN/INSTRUCTOR.md: opens notebooks/{name}, not its notebooks/zh-CN edition",
        f"notebooks/zh-CN/INSTRUCTOR.md: no Binder link for notebooks/zh-CN/{name}"]


def test_the_link_check_wants_the_chinese_links_to_enter_in_chinese_and_the_english_to_stay(tmp_path):
    _link_docs_and_notebooks(tmp_path)
    name = "02_parsing_arguments.ipynb"
    zh_readme, zh_guide, en_readme = (tmp_path / "README.zh-CN.md", tmp_path / "notebooks/zh-CN/INSTRUCTOR.md",
                                      tmp_path / "README.md")  # fmt: skip
    zh_readme.write_text(zh_readme.read_text(encoding="utf-8").replace(  # a zh link that opens JupyterLab in English
        f"urlpath=course/zh-CN/notebooks/zh-CN/{name}", f"urlpath=lab/tree/notebooks/zh-CN/{name}"), encoding="utf-8")
    zh_guide.write_text(zh_guide.read_text(encoding="utf-8").replace(  # the same in a hub link of the guide
        f"urlpath=course/zh-CN/tool-calling-course/notebooks/zh-CN/{name}",
        f"urlpath=lab/tree/tool-calling-course/notebooks/zh-CN/{name}"), encoding="utf-8")
    en_readme.write_text(en_readme.read_text(encoding="utf-8").replace(  # English links stay lab/tree
        f"urlpath=lab/tree/notebooks/{name}", f"urlpath=course/zh-CN/notebooks/{name}"), encoding="utf-8")
    assert binder_links.problems(tmp_path) == [
        f"README.md: the Binder link for notebooks/{name} enters through course/zh-CN, not lab/tree",
        f"README.zh-CN.md: the Binder link for notebooks/zh-CN/{name} enters through lab/tree, not course/zh-CN",
        f"notebooks/zh-CN/INSTRUCTOR.md: the nbgitpuller link for notebooks/zh-CN/{name} enters through lab/tree, "
        "not course/zh-CN"]
    # The entry the links name is the route the server extension answers.
    from course_lib.lab_edition import entry_path

    assert {edition: entry_path(edition, "x") for edition in binder_links.ENTRY} == {
        edition: f"{entry}/x" for edition, entry in binder_links.ENTRY.items()}


def test_the_glossary_is_held_against_course_libs_own_chinese(tmp_path, capsys):
    """A forbidden variant planted in a check message fails `make check-translations`, naming file and line;
    a say() pair whose English uses a checked term must use its Chinese; a dict key (a word the code
    accepts), a docstring and an English word kept as a name are not violations. The real course_lib is clean."""
    assert translations.library_problems(translations.Paths()) == []
    copy = translations.Paths(tmp_path)
    copy.glossary.parent.mkdir(parents=True)
    shutil.copy2(translations.Paths().glossary, copy.glossary)
    (tmp_path / "notebooks" / "zh-CN").mkdir(exist_ok=True)
    (tmp_path / "course_lib").mkdir()
    (tmp_path / "course_lib" / "planted.py").write_text(
        "'''审批 is read as 批准.'''\n"
        "ACCEPTS = {'审批': 'approval'}\n"
        "ok = say('result has no isError', 'result 没有 isError')\n"
        "bad = say('Wait for the approval.', '等待审批。')\n", encoding="utf-8")  # fmt: skip
    assert translations.main(["check"], copy) == 1
    err = capsys.readouterr().err
    assert "course_lib/planted.py:4: '审批' is not the glossary's term for 'approval' (use '批准')" in err
    assert "course_lib/planted.py:4: the English says 'approval': the glossary's term is '批准'" in err
    assert ":1:" not in err and ":2:" not in err and ":3:" not in err
