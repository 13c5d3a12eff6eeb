"""The 简体中文 edition, built from the English notebooks and one gettext catalog per notebook.

    python tools/translations.py extract [STEM ...]   # update the catalogs from the English
    python tools/translations.py build [STEM ...]     # write notebooks/zh-CN/<name>.ipynb
    python tools/translations.py check [STEM ...]     # exit 1, naming each cell that is not in step

(`make translations`, `make notebooks` and `make check-translations` run these.) STEM is a
notebook's name without `.ipynb`. Without one, extract and build work on every notebook that has a
catalog (naming a notebook that has none starts its catalog), and check on every English notebook.

The English notebooks are the source. `tools/locale/zh_CN/LC_MESSAGES/<stem>.po` holds:

- one entry per markdown cell: msgid = the English cell source, msgctxt = `<stem>:<cell id>`;
- one entry per catalogued string literal of a code cell (the task prompt, printed labels):
  msgid = the literal's text as written between its quotes (escapes and f-string `{…}` fields
  included, so the translation keeps them), msgctxt = `<stem>:<cell id>`. Which literals are
  catalogued is listed in `tools/locale/code_strings.toml` (cell id → literals), so the
  English code cells stay exactly as they are. Only one-line `"…"`/`'…'` and `f"…"` literals.
- one entry per comment (`# …`, the text after the `#`) and one-line docstring of a code cell:
  these are prose, so every one is catalogued, with no list; msgctxt = `<stem>:<cell id>`. Tool
  directives (`# fmt: skip`, `# noqa`) are not.

A catalog entry is in step when its msgid is the current English text; `extract` turns a changed
cell's entry fuzzy (the old translation kept, the old English in `#| msgid`), adds new cells
empty and makes removed ones obsolete (`#~`), as gettext's msgmerge does. `build` writes the
zh-CN notebook: same cells, same ids, code identical except catalogued literals, comments and
docstrings, the English text where a translation is missing or fuzzy; it keeps the stored outputs of cells whose source
did not change (`make notebooks` then executes it). `check` fails on a missing, empty, fuzzy or
outdated entry, a catalogued literal no longer in its cell, a translation that changes a wire
value (a `code span`, an identifier like call_id) or the heading structure, a glossary term not
used (`notebooks/zh-CN/GLOSSARY.md`), and a zh-CN notebook whose sources are not what `build`
writes. `check` without a STEM also holds the glossary against the Chinese strings of `course_lib`
(check messages, widget labels, the offline model's Chinese answers: `library_problems`). This is a maintainer's tool (it needs the `i18n` extra, polib), not part of course_lib.
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import tokenize
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polib

REPO = Path(__file__).resolve().parents[1]
LANGUAGE = "zh_CN"  # the gettext locale folder
EDITION = "zh-CN"  # the folder of the translated notebooks
HEADER = {
    "Project-Id-Version": "tool-calling-course",
    "Language": LANGUAGE,
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=UTF-8",
    "Content-Transfer-Encoding": "8bit",
    "Plural-Forms": "nplurals=1; plural=0;",
}
LITERAL = re.compile(r"(?s)^(?P<prefix>[fF]?)(?P<quote>['\"])(?P<body>.*)(?P=quote)$")
# A code span may run over a line break (CommonMark renders it as a space): `Authorization: Bearer
# <token>` is one span, compared as `Authorization: Bearer <token>`. A blank line ends it.
CODE_SPAN = re.compile(r"`([^`\n]+(?:\n[^`\n]+)*)`")
SPAN_BREAK = re.compile(r"[ \t]*\n[ \t]*")


def _spans(text: str) -> set[str]:
    return {SPAN_BREAK.sub(" ", span) for span in CODE_SPAN.findall(text)}
# Words that are wire values or identifiers even outside a code span: call_id, tools/call,
# inputSchema, INVALID_INPUT. A translation must keep every one of them as it is.
WIRE_WORD = re.compile(r"(?<![\w/.])(?:[A-Za-z]\w*(?:[_/][A-Za-z0-9]\w*)+|[a-z]+[A-Z]\w*|[A-Z]{2,}(?:_[A-Z]+)+)(?![\w/])")
HEADING = re.compile(r"^(#{1,6}) ", re.M)


@dataclass(frozen=True)
class Paths:
    """Where one checkout keeps the editions (a test points it at a temporary copy)."""

    root: Path = REPO

    @property
    def notebooks(self) -> Path:
        return self.root / "notebooks"

    @property
    def locale(self) -> Path:
        """The catalogs live beside this tool, not in the learner's file browser."""
        return self.root / "tools" / "locale"

    @property
    def edition(self) -> Path:
        return self.notebooks / EDITION

    @property
    def code_strings(self) -> Path:
        return self.locale / "code_strings.toml"

    @property
    def glossary(self) -> Path:
        return self.edition / "GLOSSARY.md"

    def catalog(self, stem: str) -> Path:
        return self.locale / LANGUAGE / "LC_MESSAGES" / f"{stem}.po"

    def english(self, stem: str) -> Path:
        return self.notebooks / f"{stem}.ipynb"

    def translated(self, stem: str) -> Path:
        return self.edition / f"{stem}.ipynb"

    def stems(self) -> list[str]:
        return sorted(p.stem for p in self.notebooks.glob("[0-9]*.ipynb"))


@dataclass(frozen=True)
class Wanted:
    """One text of the English that the catalog must translate."""

    stem: str
    cell_id: str
    kind: str  # "markdown", "code" (a catalogued literal) or "prose" (a comment or docstring)
    msgid: str

    @property
    def msgctxt(self) -> str:
        return f"{self.stem}:{self.cell_id}"

    @property
    def where(self) -> str:
        return f"{self.stem}.ipynb cell {self.cell_id}"


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# ---- string literals in code cells --------------------------------------------------------------


def _as_python(code: str) -> tuple[list[str], str, list[int]]:
    """A code cell's lines, its text with IPython lines (`%magic`, `!shell`) blanked so Python can
    parse it (same offsets), and the offset at which each line starts."""
    lines = code.splitlines(keepends=True)
    python = "".join(" " * len(line.rstrip("\n")) + "\n" * line.endswith("\n")
                     if line.lstrip().startswith(("%", "!")) else line for line in lines)  # fmt: skip
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return lines, python, starts


def literals(code: str) -> list[tuple[int, int, str, str, str]]:
    """The one-line plain and f-string literals of `code`: (start, end, prefix, quote, body),
    offsets in characters; implicit concatenations, bytes, raw and triple-quoted strings left out.
    IPython lines (`%magic`, `!shell`) are blanked before parsing."""
    lines, python, starts = _as_python(code)
    found = []

    def offset(lineno: int, col: int) -> int:  # ast columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            if node.lineno == node.end_lineno:
                start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
                match = LITERAL.match(code[start:end])
                if match and not re.search(rf"(?<!\\){match['quote']}", match["body"]):
                    found.append((start, end, match["prefix"], match["quote"], match["body"]))
            return  # an f-string's parts are not literals of their own
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(python))
    return sorted(found)


# Comments that talk to a tool, not to the learner: never translated.
DIRECTIVE = re.compile(r"^(?:fmt|noqa|type|pragma|pylint|isort|mypy)\b|^-*$")


def prose(code: str) -> list[tuple[int, int, str]]:
    """The prose of a code cell, which every edition translates without a list: each `# comment`
    (the text after `# `; tool directives such as `# fmt: skip` left out) and each one-line
    docstring of a def or class (the text between its triple quotes). (start, end, text), offsets
    in characters of the text itself."""
    lines, python, starts = _as_python(code)
    found = []
    for token in tokenize.generate_tokens(io.StringIO(python).readline):
        if token.type == tokenize.COMMENT:
            text = token.string[1:].lstrip()
            if text and not DIRECTIVE.match(text) and re.search(r"[^\W\d_]", text):
                start = starts[token.start[0] - 1] + token.start[1] + len(token.string) - len(text)
                found.append((start, start + len(text), text))
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str) and first.lineno == first.end_lineno):  # fmt: skip
                line = lines[first.lineno - 1]
                col = len(line.encode()[:first.col_offset].decode())
                end = len(line.encode()[:first.end_col_offset].decode())
                quoted = line[col:end]
                if quoted[:3] in {'"""', "'''"} and quoted.endswith(quoted[:3]) and len(quoted) >= 6:
                    start = starts[first.lineno - 1] + col + 3
                    found.append((start, start + len(quoted) - 6, quoted[3:-3]))
    return sorted(found)


def replace_prose(code: str, translations: dict[str, str]) -> str:
    """`code` with every comment and one-line docstring whose text is a key of `translations`
    given the translated text."""
    out, last = [], 0
    for start, end, text in prose(code):
        if text in translations:
            out += [code[last:start], translations[text]]
            last = end
    return "".join(out) + code[last:]


def replace_literals(code: str, translations: dict[str, str]) -> str:
    """`code` with every literal whose body is a key of `translations` given the translated body."""
    out, last = [], 0
    for start, end, prefix, quote, body in literals(code):
        if body in translations:
            out += [code[last:start], prefix, quote, translations[body], quote]
            last = end
    return "".join(out) + code[last:]


def _fields(body: str) -> list[str]:
    """The `{…}` fields of an f-string body, in order (`{{`/`}}` are not fields)."""
    return re.findall(r"(?<!\{)\{(?!\{)[^{}]*\}", body.replace("{{", "").replace("}}", ""))


# ---- what the English asks for ------------------------------------------------------------------


def code_strings(paths: Paths) -> dict[str, dict[str, list[str]]]:
    """`code_strings.toml`: {stem: {cell id: [literal body, …]}}."""
    if not paths.code_strings.exists():
        return {}
    return tomllib.loads(paths.code_strings.read_text(encoding="utf-8"))


def wanted(paths: Paths, stem: str) -> tuple[list[Wanted], list[str]]:
    """Every text of the English notebook `stem` that needs a translation, in cell order, and the
    problems of its code-strings list (a literal or a cell that is no longer there)."""
    notebook = _load(paths.english(stem))
    listed = code_strings(paths).get(stem, {})
    texts, problems = [], []
    ids = {cell.get("id") for cell in notebook["cells"]}
    problems += [f"{stem}.ipynb cell {cell_id}: listed in {paths.code_strings.name}, but the notebook has no "
                 "such cell" for cell_id in listed if cell_id not in ids]  # fmt: skip
    for cell in notebook["cells"]:
        source = _source(cell)
        if cell["cell_type"] == "markdown":
            texts.append(Wanted(stem, cell["id"], "markdown", source))
        seen = set()  # one entry per text of a cell: a comment and a listed literal may say the same
        if cell["cell_type"] == "code":
            for *_, text in prose(source):
                if text not in seen:
                    seen.add(text)
                    texts.append(Wanted(stem, cell["id"], "prose", text))
        if cell["cell_type"] == "code" and cell["id"] in listed:
            bodies = {body for *_, body in literals(source)}
            for body in listed[cell["id"]]:
                if body in bodies:
                    if body not in seen:
                        seen.add(body)
                        texts.append(Wanted(stem, cell["id"], "code", body))
                else:
                    problems.append(f"{stem}.ipynb cell {cell['id']}: the catalogued string {body!r} is no longer "
                                    f"in the cell (the English changed): update {paths.code_strings.name}")  # fmt: skip
    return texts, problems


# ---- extract: the catalogs follow the English ---------------------------------------------------


def _comment(text: Wanted) -> str:
    if text.kind == "markdown":
        return "markdown cell: translate the whole cell; keep `code`, wire values and links as they are"
    if text.kind == "prose":
        return "comment or docstring in a code cell: translate the words; keep code and identifiers as they are"
    keep = "; keep every {…} field" if _fields(text.msgid) else ""
    return f"string in a code cell: keep escapes such as \\n{keep}"


def extract(paths: Paths, stem: str) -> polib.POFile:
    """Update (or create) the catalog of `stem` from its English notebook and save it.

    Raises:
        ValueError: the code-strings list names a literal or a cell that is not there.
    """
    texts, problems = wanted(paths, stem)
    if problems:
        raise ValueError("\n".join(problems))
    path = paths.catalog(stem)
    old = polib.pofile(str(path), wrapwidth=100) if path.exists() else polib.POFile(wrapwidth=100)
    current = {(e.msgctxt, e.msgid): e for e in old if not e.obsolete}
    current.update({(e.msgctxt, e.msgid): e for e in old.obsolete_entries() if (e.msgctxt, e.msgid) not in current})
    wanted_keys = {(t.msgctxt, t.msgid) for t in texts}
    leftovers: dict[tuple[str, str], list[polib.POEntry]] = {}
    for (ctx, msgid), entry in current.items():
        if (ctx, msgid) not in wanted_keys and entry.msgstr:
            leftovers.setdefault((ctx, entry.comment.split(":")[0]), []).append(entry)
    new = polib.POFile(wrapwidth=100)
    new.metadata = dict(HEADER)
    new.header = (f"简体中文 catalog of notebooks/{stem}.ipynb (the English is the source).\n"
                  "Update with `make translations`; check with `make check-translations`.")  # fmt: skip
    for text in texts:
        entry = current.get((text.msgctxt, text.msgid))
        if entry is not None:
            entry.obsolete = False
            entry.comment = _comment(text)
        else:
            entry = polib.POEntry(msgctxt=text.msgctxt, msgid=text.msgid, msgstr="", comment=_comment(text))
            before = leftovers.get((text.msgctxt, _comment(text).split(":")[0]))
            if before:  # the English of this cell changed: keep the old translation as a hint
                hint = before.pop(0)
                entry.msgstr, entry.flags, entry.previous_msgid = hint.msgstr, ["fuzzy"], hint.msgid
                current.pop((hint.msgctxt, hint.msgid))
        new.append(entry)
    for (ctx, msgid), entry in current.items():
        if (ctx, msgid) not in wanted_keys and entry.msgstr:  # gone from the English: kept, as obsolete
            entry.obsolete = True
            new.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    new.save(str(path))
    return new


# ---- build: the zh-CN notebook ------------------------------------------------------------------


def _usable(entry: polib.POEntry | None) -> bool:
    return entry is not None and bool(entry.msgstr) and not entry.fuzzy and not entry.obsolete


def build(paths: Paths, stem: str) -> dict[str, Any]:
    """The zh-CN notebook of `stem`: English cells with the catalog's usable translations, and the
    stored outputs of the current zh-CN notebook for every cell whose source is unchanged."""
    english = _load(paths.english(stem))
    catalog = polib.pofile(str(paths.catalog(stem)))
    lookup = {(e.msgctxt, e.msgid): e for e in catalog if _usable(e)}
    before = {}
    if paths.translated(stem).exists():
        stored = _load(paths.translated(stem))
        before = {cell.get("id"): cell for cell in stored["cells"]}
    listed = code_strings(paths).get(stem, {})
    cells = []
    for cell in english["cells"]:
        cell = json.loads(json.dumps(cell))
        ctx, source = f"{stem}:{cell['id']}", _source(cell)
        if cell["cell_type"] == "markdown" and (ctx, source) in lookup:
            source = lookup[(ctx, source)].msgstr
        elif cell["cell_type"] == "code":
            source = replace_prose(source, {text: lookup[(ctx, text)].msgstr
                                            for *_, text in prose(source) if (ctx, text) in lookup})  # fmt: skip
            source = replace_literals(source, {body: lookup[(ctx, body)].msgstr
                                               for body in listed.get(cell["id"], []) if (ctx, body) in lookup})  # fmt: skip
        cell["source"] = source
        old = before.get(cell["id"])
        if cell["cell_type"] == "code":
            if old is not None and old["cell_type"] == "code" and _source(old) == source:
                cell["outputs"], cell["execution_count"] = old["outputs"], old["execution_count"]
            else:
                cell["outputs"], cell["execution_count"] = [], None
        cells.append(cell)
    metadata = dict(english["metadata"])
    if before and "widgets" in stored["metadata"]:
        metadata["widgets"] = stored["metadata"]["widgets"]
    else:
        metadata.pop("widgets", None)
    return {**english, "metadata": metadata, "cells": cells}


def write(paths: Paths, stem: str) -> Path:
    """Build the zh-CN notebook of `stem` and write it the way Jupyter does."""
    import nbformat  # comes with Jupyter

    path = paths.translated(stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.from_dict(build(paths, stem)), str(path))
    return path


# ---- check --------------------------------------------------------------------------------------


def glossary(paths: Paths) -> list[tuple[str, str, list[str], bool]]:
    """The glossary's rows: (English, 中文, variants not to use, checked?). A row whose English is
    in bold is checked: a translation of a text that uses the English term must use the Chinese."""
    rows = []
    for line in paths.glossary.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or set(cells[0]) <= set("-: ") or cells[0] == "English":
            continue
        english, chinese, avoid = cells[0], cells[1], cells[2]
        checked = english.startswith("**")
        rows.append((english.strip("*").strip(), chinese, [a.strip() for a in avoid.split("、") if a.strip()],
                     checked))  # fmt: skip
    return rows


def wire_values(text: str) -> set[str]:
    """What a translation must keep letter for letter: code spans and identifier-like words."""
    plain = CODE_SPAN.sub(" ", text)
    plain = re.sub(r"\]\([^)]*\)", "]", plain)  # a link's target may point at the zh-CN twin
    return _spans(text) | set(WIRE_WORD.findall(plain))


def entry_problems(text: Wanted, msgstr: str, terms: list[tuple[str, str, list[str], bool]]) -> list[str]:
    """What is wrong with one translation of `text` (empty when nothing is)."""
    found = []
    joined = CODE_SPAN.sub(lambda span: SPAN_BREAK.sub(" ", span[0]), msgstr)
    missing = sorted(w for w in wire_values(text.msgid) if w not in joined)
    if missing:
        found.append(f"{text.where}: the translation changes or drops wire values {missing}")
    invented = sorted(_spans(msgstr) - _spans(text.msgid) - wire_values(text.msgid))
    if invented:
        found.append(f"{text.where}: the translation has code spans the English does not have {invented}")
    if text.kind == "markdown" and HEADING.findall(text.msgid) != HEADING.findall(msgstr):
        found.append(f"{text.where}: the translation's headings are not the English's (levels and number)")
    if text.kind == "code" and _fields(text.msgid) != _fields(msgstr):
        found.append(f"{text.where}: the translation's {{…}} fields are not the English's {_fields(text.msgid)}")
    plain = CODE_SPAN.sub(" ", text.msgid)
    for english, chinese, avoid, checked in terms:  # a code cell's label may name a field instead: not checked
        used = re.search(rf"\b{re.escape(english)}(?:s|es|d|ed|ing)?\b", plain, re.I)
        if checked and text.kind == "markdown" and used and chinese not in msgstr:
            found.append(f"{text.where}: the English says '{english}': the glossary's term is '{chinese}'")
        found += [f"{text.where}: '{word}' is not the glossary's term for '{english}' (use '{chinese}')"
                  for word in _avoided(msgstr, chinese, avoid)]  # fmt: skip
    return found


def _avoided(text: str, chinese: str, avoid: list[str]) -> list[str]:
    """The variants of `avoid` that `text` uses outside the glossary's own term (失败诊断表 holds 诊断表)."""
    rest = text.replace(chinese, " ") if chinese else text
    return [word for word in avoid if word in rest]


CJK = re.compile(r"[\u3400-\u9fff]")
# What an English check message says in code, not prose: {fields}, "quoted values", a call `f(a, b)`, `a.b`.
LIBRARY_CODE = re.compile(r"\{[^{}]*\}|\"[^\"]*\"|'[^']*'|\w+\([^()]*\)|\w+(?:\.\w+)+")


def library_problems(paths: Paths) -> list[str]:
    """The glossary held against the Chinese that `course_lib` writes itself: every string literal with
    Chinese in it (check messages, widget labels, the offline model's Chinese answers) must avoid the
    variants the glossary forbids, and the zh text of a `say(en, zh)` pair must use the Chinese term of
    every checked (bold) term its English uses."""
    terms = glossary(paths) if paths.glossary.exists() else []
    found: list[str] = []
    for module in sorted((paths.root / "course_lib").rglob("*.py")):
        where = module.relative_to(paths.root)
        tree = ast.parse(module.read_text(encoding="utf-8"), str(where))
        # A dict key is what the code matches (a learner's word it accepts, 审批 → approval), not text it writes.
        keys = {id(key) for node in ast.walk(tree) if isinstance(node, ast.Dict) for key in node.keys}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and CJK.search(node.value)
                    and id(node) not in keys):  # fmt: skip
                found += [f"{where}:{node.lineno}: '{word}' is not the glossary's term for '{english}' (use '{chinese}')"
                          for english, chinese, avoid, _ in terms for word in _avoided(node.value, chinese, avoid)]  # fmt: skip
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "say"
                    and len(node.args) >= 2 and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                                    for a in node.args[:2])):  # fmt: skip
                en, zh = node.args[0].value, node.args[1].value
                plain = LIBRARY_CODE.sub(" ", CODE_SPAN.sub(" ", en))
                found += [f"{where}:{node.lineno}: the English says '{english}': the glossary's term is '{chinese}'"
                          for english, chinese, _, checked in terms
                          if checked and re.search(rf"\b{re.escape(english)}(?:s|es|d|ed|ing)?\b", plain, re.I)
                          and chinese not in zh and not re.search(rf"\b{re.escape(english)}\b", zh)]  # kept as a name  # fmt: skip
    return found


def check(paths: Paths, stem: str) -> list[str]:
    """Everything that keeps the zh-CN edition of `stem` from being in step with the English."""
    path = paths.catalog(stem)
    if not path.exists():
        return [f"{stem}.ipynb: no catalog {path.relative_to(paths.root)}: start it with "
                f"`python tools/translations.py extract {stem}` and translate it"]
    texts, found = wanted(paths, stem)
    catalog = polib.pofile(str(path))
    entries = {(e.msgctxt, e.msgid): e for e in catalog if not e.obsolete}
    terms = glossary(paths) if paths.glossary.exists() else []
    for text in texts:
        entry = entries.get((text.msgctxt, text.msgid))
        if entry is None:
            old = any(e.msgctxt == text.msgctxt for e in entries.values())
            found.append(f"{text.where}: " + ("the English changed since it was translated" if old else
                         "not in the catalog yet") + ": run `make translations`, then translate it")  # fmt: skip
        elif entry.fuzzy:
            found.append(f"{text.where}: stale translation (fuzzy): the English changed; update the msgstr "
                         "and remove the fuzzy flag")  # fmt: skip
        elif not entry.msgstr:
            found.append(f"{text.where}: not translated (empty msgstr)")
        else:
            found += entry_problems(text, entry.msgstr, terms)
    keys = {(t.msgctxt, t.msgid) for t in texts}
    found += [f"{stem}.ipynb: the catalog entry {e.msgctxt} ({e.msgid[:40]!r}…) is not in the English any more: "
              "run `make translations`" for key, e in entries.items() if key not in keys]  # fmt: skip
    twin = paths.translated(stem)
    if not twin.exists():
        return found + [f"{twin.relative_to(paths.root)}: missing: run `make notebooks`"]
    expected, stored = build(paths, stem)["cells"], _load(twin)["cells"]
    if [(c["id"], c["cell_type"]) for c in expected] != [(c.get("id"), c["cell_type"]) for c in stored]:
        return found + [f"{twin.relative_to(paths.root)}: its cells are not the English's (ids, types, order): "
                        "run `make notebooks`"]  # fmt: skip
    found += [f"{twin.relative_to(paths.root)} cell {new['id']}: its source is not what the catalog and the English "
              "give: run `make notebooks`" for new, old in zip(expected, stored) if _source(new) != _source(old)]  # fmt: skip
    return found


# ---- command line -------------------------------------------------------------------------------


def main(argv: list[str], paths: Paths = Paths()) -> int:
    if not argv or argv[0] not in {"extract", "build", "check"}:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    command, stems = argv[0], argv[1:]
    unknown = [s for s in stems if not paths.english(s).exists()]
    if unknown:
        print(f"no English notebook notebooks/{unknown[0]}.ipynb", file=sys.stderr)
        return 2
    translated = [s for s in paths.stems() if paths.catalog(s).exists()]
    if command == "extract":
        for stem in stems or translated:
            try:
                extract(paths, stem)
            except ValueError as wrong:
                print(wrong, file=sys.stderr)
                return 1
            print(f"updated {paths.catalog(stem).relative_to(paths.root)}")
        return 0
    if command == "build":
        for stem in stems or translated:
            print(f"built {write(paths, stem).relative_to(paths.root)}")
        return 0
    problems: list[str] = [] if stems else library_problems(paths)  # the whole edition: course_lib's Chinese too
    for stem in stems or paths.stems():
        problems += check(paths, stem)
    for problem in problems:
        print(problem, file=sys.stderr)
    checked = ", ".join(stems) if stems else "every notebook"
    print(f"{len(problems)} problem(s) in the zh-CN edition ({checked})" if problems
          else f"zh-CN edition in step with the English ({checked})")  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
