"""Every markdown cell of both editions renders in JupyterLab as written: no raw `*`/`**`/`_` left
on the page, and each 简体中文 cell keeps the emphasis of its English cell.

JupyterLab 4 renders markdown with `marked`, configured by @jupyterlab/markedparser-extension
(`gfm: true`, `async: true`, two plugins that only touch heading ids and e-mail links). The test runs
that parser itself, the version the installed JupyterLab ships (pinned in tests/node/package.json),
on the project-local Node 22 (tests/node/render_markdown.mjs). Emphasis is where Chinese text goes
wrong: CommonMark's flanking rules refuse a `**` that closes after Chinese punctuation and before a
letter (`**预测：**与`), and the markers then show as typed. They must sit outside the punctuation
(`**预测**：`), as tools/locale/README.md says.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NODE_DIR = REPO / "tests" / "node"
NODE22 = NODE_DIR / "node_modules" / "node" / "bin" / "node"
MARKED = NODE_DIR / "node_modules" / "marked" / "package.json"
EDITIONS = {"en": REPO / "notebooks", "zh-CN": REPO / "notebooks" / "zh-CN"}
GUIDES = [REPO / "README.md", REPO / "README.zh-CN.md", *sorted((REPO / "notebooks").glob("*.md")),
          *sorted((REPO / "notebooks" / "zh-CN").glob("*.md"))]  # fmt: skip
# What JupyterLab's removeMath (@jupyterlab/rendermime latex.ts) hides from marked before rendering:
# `$`, `$$`, `\begin{…}`, `\\(`, `\\[`. The course has none in its markdown (asserted below), so
# the text marked sees is the cell's source itself.
MATH = re.compile(r"\$|\\begin\{|\\\\[(\[]")
# A marker left on the page: a run of `*` touching a letter on either side, or `_`/`__` opening or
# closing a word (snake_case inside a word is not one).
RAW_MARKER = re.compile(r"(?<!\s)\*+|\*+(?!\s)|(?<!\w)_{1,2}\w|\w_{1,2}(?!\w)")


def _markdown_cells(folder: Path) -> dict[tuple[str, str], str]:
    """(notebook name, cell id) → source, for every markdown cell of the notebooks in `folder`."""
    found = {}
    for path in sorted(folder.glob("[0-9]*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                found[(path.name, cell["id"])] = "".join(cell["source"])
    return found


def render(texts: list[str]) -> list[str]:
    """`texts` rendered to HTML by JupyterLab's markdown parser (one Node process for all of them)."""
    if not (NODE22.exists() and MARKED.exists()):
        missing = "the project-local Node 22 and `marked` in tests/node (make node-tools)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs {missing}")
        pytest.skip(f"needs {missing}")
    done = subprocess.run([str(NODE22), str(NODE_DIR / "render_markdown.mjs")], input=json.dumps(texts),
                          capture_output=True, text=True, encoding="utf-8", timeout=120, check=True)  # fmt: skip
    return json.loads(done.stdout)


class _PageText(HTMLParser):
    """The text a reader sees, outside code (a `*` inside `code` is code, not a marker)."""

    def __init__(self) -> None:
        super().__init__()
        self.in_code, self.parts = 0, []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.in_code += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.in_code -= tag in ("code", "pre")

    def handle_data(self, data: str) -> None:
        if not self.in_code:
            self.parts.append(data)


def raw_markers(html: str) -> list[str]:
    """The lines of the rendered page that still show an emphasis marker."""
    page = _PageText()
    page.feed(html)
    return [line.strip() for line in "".join(page.parts).splitlines() if RAW_MARKER.search(line)]


def emphasis(html: str) -> tuple[int, int]:
    """How many strong and emphasised spans the page has."""
    return html.count("<strong>"), html.count("<em>")


@pytest.fixture(scope="module")
def rendered() -> dict[str, dict[tuple[str, str], str]]:
    """Edition → (notebook, cell id) → the cell as JupyterLab renders it."""
    cells = {edition: _markdown_cells(folder) for edition, folder in EDITIONS.items()}
    keys = [(edition, key) for edition in cells for key in cells[edition]]
    html = render([cells[edition][key] for edition, key in keys])
    out: dict[str, dict[tuple[str, str], str]] = {edition: {} for edition in cells}
    for (edition, key), page in zip(keys, html, strict=True):
        out[edition][key] = page
    return out


def test_the_parser_is_the_one_the_installed_jupyterlab_ships():
    import jupyterlab
    from jupyterlab.commands import get_app_dir

    shipped = Path(get_app_dir()) / "static" / "third-party-licenses.json"
    versions = {p["name"]: p["versionInfo"] for p in json.loads(shipped.read_text(encoding="utf-8"))["packages"]}
    pinned = json.loads((NODE_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]["marked"]
    assert pinned == versions["marked"], f"JupyterLab {jupyterlab.__version__} ships marked {versions['marked']}"
    assert "@jupyterlab/markedparser-extension" in versions


def test_the_check_sees_a_marker_chinese_punctuation_strands_and_not_one_put_right():
    wrong, right, code = render(["**预测：**与那次运行相比", "**预测**：与那次运行相比", "`**kwargs` 和 snake_case"])
    assert raw_markers(wrong) == ["**预测：**与那次运行相比"] and emphasis(wrong) == (0, 0)
    assert raw_markers(right) == [] and emphasis(right) == (1, 0)
    assert raw_markers(code) == []


def test_no_markdown_cell_holds_math_jupyterlab_would_hide_from_the_parser():
    held = [key for folder in EDITIONS.values() for key, text in _markdown_cells(folder).items() if MATH.search(text)]
    assert held == [], "render_markdown.mjs would need JupyterLab's removeMath for these"


@pytest.mark.parametrize("edition", EDITIONS)
def test_no_markdown_cell_shows_a_raw_emphasis_marker(rendered, edition):
    stranded = {f"{name} {cell}": lines for (name, cell), html in rendered[edition].items() if (lines := raw_markers(html))}
    assert stranded == {}, "put the punctuation outside the markers: **预测**：, *提示*："


def test_every_chinese_cell_keeps_the_emphasis_of_its_english_cell(rendered):
    lost = {f"{name} {cell}": (emphasis(html), emphasis(rendered["zh-CN"][name, cell]))
            for (name, cell), html in rendered["en"].items()
            if (name, cell) in rendered["zh-CN"] and emphasis(html) != emphasis(rendered["zh-CN"][name, cell])}  # fmt: skip
    assert lost == {}, "(strong, em) in English vs in Chinese"
    assert sum(sum(emphasis(html)) for html in rendered["zh-CN"].values()) > 300  # the comparison saw real emphasis


def test_the_readmes_and_the_guides_learners_open_in_jupyterlab_render_too():
    html = render([path.read_text(encoding="utf-8") for path in GUIDES])
    stranded = {path.name: lines for path, page in zip(GUIDES, html, strict=True) if (lines := raw_markers(page))}
    assert len(GUIDES) == 5 and stranded == {}
