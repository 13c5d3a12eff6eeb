"""Every kind of picture in a real browser: JupyterLab, headless Debian Chromium, Playwright.

A notebook written here (the same cells in `notebooks/` and in `notebooks/zh-CN/`, where the kernel
speaks Chinese) runs a first run, a refused read, an approval that waits for a person, a timeline,
the retries, a stream, the approval pauses, a comparison and three envelopes side by side, and shows
each picture. The test reads the page:

- each sequence diagram is drawn by JupyterLab's own Mermaid renderer (so JupyterLab chose
  `text/vnd.mermaid` over the PNG in the same output), without a parse warning, as an image that is
  not empty, and the SVG it drew holds the labels (the run's call_id, `isError true`, the person's
  question);
- each chart is a PNG the page loaded (not empty);
- in the zh-CN edition, the Chinese labels are drawn with a font that has Chinese glyphs: the SVG
  Mermaid drew is put into the page as it is, and DevTools (`CSS.getPlatformFontsForNode`) says which
  fonts Chromium uses for its text (the PNG's glyphs are checked in tests/test_pictures_charts.py).

Screenshots of the first run's diagram and of the timeline go to `test-artifacts/pictures-*.png`.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.test_browser import CHROMIUM_ARGS, STEP_MS, _chinese_font_families, _fonts_drawing, chromium, running_lab  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"

CELLS = [
    '''import json
import anyio
from functools import partial
from pydantic import BaseModel, ConfigDict
from course_lib import pictures
from course_lib.course import start_course
from course_lib.lang import say

course = start_course(quiet=True)
result = course.run(say("Show the first 20 lines of /workspace/notes.txt", "显示 /workspace/notes.txt 的前 20 行"))
print("CALL_ID", result.trace[0].call_id)''',
    "pictures.sequence(course)",
    '''refused = course.run("Show the first 2 lines of /etc/passwd")
pictures.sequence(refused, course)''',
    '''from course_lib.assistant import NotesAssistant
assistant = NotesAssistant(client=course.client)
paused = assistant.ask(say("Where is my understanding of workflows and agents incomplete?",
                           "我对 workflow 和 agent 的理解哪里还不完整？"))
pictures.sequence(paused, assistant)''',
    '''from course_lib.execution import Executor, Session, Tool, ToolError
from course_lib.parallel import Call, execute_batch

class KeyArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    key: str

async def lookup(args, ctx):
    await anyio.sleep(0.2)
    return {"key": args.key}

lookups, alice = Executor([Tool("lookup", "Look up one value", KeyArgs, lookup)]), Session("alice")
batch = [Call(f"call_{i}", "lookup", json.dumps({"key": f"k{i}"})) for i in range(3)]
together = await execute_batch(lookups, batch, alice)
serial = await execute_batch(lookups, batch, alice, parallel=False)
pictures.timeline({say("together", "一起"): together, say("one at a time", "逐个"): serial}, unit=0.2)''',
    '''from course_lib.retry import RetryPolicy, execute_with_retries
failures = []
async def flaky(args, ctx):
    failures.append(1)
    if len(failures) <= 2:
        raise ToolError("TIMEOUT", "restarting", retryable=True)
    return {"key": args.key}
async def no_wait(seconds):
    pass
policy = RetryPolicy(max_attempts=4, seed=0)
outcome = await execute_with_retries(Executor([Tool("lookup", "Look up", KeyArgs, flaky)]), "call_r", "lookup",
                                     '{"key": "a"}', alice, policy=policy, sleep=no_wait)
pictures.retries(outcome, policy)''',
    '''from course_lib.streaming import StreamedRequests
streamed = StreamedRequests(course.client)
course.run("Show the first 5 lines of /workspace/notes.txt", create=streamed)
pictures.stream(streamed.turns[0])''',
    '''from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools, scratch_workspace
store = NotesStore(scratch_workspace(), clock=ManualClock())
writes = AuditedExecutor(notes_tools(store), audit=store.audit)
todo, _ = store.read("/workspace/todo.md")
preview = await writes.execute("c1", "preview_note_update", json.dumps({"path": "todo.md", "content": todo + "x\\n"}), alice)
arguments = preview.result["data"]["arguments"]
asked = await writes.execute("c2", "apply_note_update", json.dumps(arguments), alice)
writes.approvals.approve(asked.result["error"]["action_id"])
await writes.execute("c3", "apply_note_update", json.dumps(arguments), alice)
pictures.approval(store.audit)''',
    '''from course_lib.comparison import Guesses, WithoutTool, compare
from course_lib.evaluation import load_questions
results = compare({"baseline": None, "no search step": partial(WithoutTool, tool="search_notes"),
                   "guesses": Guesses}, load_questions()[:3])
pictures.comparison(results)''',
    '''from course_lib.chat_loop import run_chat_loop
task = "Show the first 5 lines of /workspace/notes.txt"
pictures.side_by_side(pictures.sequence(course.run(task), course, title="Responses"),
                      pictures.sequence(run_chat_loop(course.client, course.host, task), course, title="Chat Completions"))''',
]
MERMAID, PNG = 3, 6  # sequence diagrams drawn by Mermaid; charts (and the side-by-side) drawn as PNG
EDITIONS = {
    "en": {"folder": "notebooks", "labels": ["model", "app", "MCP server fs", "tools/call read_text_file", "approve?"]},
    "zh-CN": {"folder": "notebooks/zh-CN", "labels": ["模型", "应用", "MCP 服务器 fs", "tools/call read_text_file", "批准吗？"]},
}


@pytest.fixture(params=list(EDITIONS))
def edition(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, EDITIONS[request.param]


@pytest.fixture
def lab(tmp_path: Path, edition: tuple[str, dict[str, Any]]):
    """JupyterLab over a notebook of every picture kind, in the edition's folder; yields (url, token)."""
    _, settings = edition
    folder = tmp_path / "root" / settings["folder"]
    folder.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, folder / "pictures.ipynb")
    (tmp_path / "config" / "labconfig").mkdir(parents=True)
    (tmp_path / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))  # every output in the page
    env = os.environ | {name: str(tmp_path / sub) for name, sub in (
        ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython"), ("JUPYTERLAB_SETTINGS_DIR", "settings"))}  # fmt: skip
    env.pop("OPENAI_API_KEY", None)  # the offline model
    env.pop("COURSE_LANG", None)  # the edition comes from the notebook's folder, as in the course
    with running_lab(tmp_path, tmp_path / "root", env) as served:
        yield served


_STATE = """() => {
    const mermaid = [...document.querySelectorAll('.jp-OutputArea-output.jp-RenderedMermaid')];
    const images = [...document.querySelectorAll('.jp-OutputArea-output.jp-RenderedImage img')];
    return {
        mermaid: mermaid.map(node => {
            const img = node.querySelector('figure img');
            return {warning: node.classList.contains('jp-mod-warning'), src: img ? img.getAttribute('src') : null,
                    width: img ? img.naturalWidth : 0, height: img ? img.naturalHeight : 0};
        }),
        images: images.map(img => ({width: img.naturalWidth, height: img.naturalHeight, complete: img.complete})),
        errors: [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
            .map(node => node.innerText),
        text: [...document.querySelectorAll('.jp-OutputArea-output')].map(node => node.innerText).join('\\n'),
    };
}"""


def _svg(src: str) -> str:
    """The SVG text of a `data:image/svg+xml,…` URL (as JupyterLab's Mermaid renderer makes it)."""
    assert src.startswith("data:image/svg+xml,"), src[:60]
    return urllib.parse.unquote(src.split(",", 1)[1])


def test_every_picture_kind_renders_in_jupyterlab(chromium, lab, edition):
    from playwright.sync_api import sync_playwright

    name, settings = edition
    url, token = lab
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True, timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1300})
            page.set_default_timeout(STEP_MS)
            page.goto(f"{url}/lab/tree/{settings['folder']}/pictures.ipynb?token={token}", wait_until="domcontentloaded")
            page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext")
            page.evaluate("""async () => {
                const panel = window.jupyterapp.shell.currentWidget;
                await panel.sessionContext.ready;
                await window.jupyterapp.commands.execute('notebook:run-all-cells');
            }""")
            page.wait_for_function(
                f"""() => {{
                    const m = [...document.querySelectorAll('.jp-RenderedMermaid figure img')].filter(i => i.naturalWidth > 0);
                    const p = [...document.querySelectorAll('.jp-RenderedImage img')].filter(i => i.naturalWidth > 0);
                    return (m.length >= {MERMAID} && p.length >= {PNG})
                        || document.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]');
                }}""")  # fmt: skip
            state = page.evaluate(_STATE)
            ARTIFACTS.mkdir(exist_ok=True)
            suffix = "" if name == "en" else f"-{name}"
            page.locator(".jp-RenderedMermaid").first.screenshot(path=str(ARTIFACTS / f"pictures-sequence{suffix}.png"))
            page.locator(".jp-RenderedImage").first.screenshot(path=str(ARTIFACTS / f"pictures-timeline{suffix}.png"))
            fonts = []
            if name == "zh-CN":  # the SVG Mermaid drew, put into the page as it is: which fonts draw its text?
                page.evaluate("svg => { const d = document.createElement('div'); d.id = 'pictures-probe';"
                              " d.innerHTML = svg; document.body.prepend(d); }", _svg(state["mermaid"][0]["src"]))
                fonts = _fonts_drawing(page, "#pictures-probe svg")
        finally:
            browser.close()

    assert state["errors"] == [], state["errors"]
    call_id = next(line.split()[1] for line in state["text"].splitlines() if line.startswith("CALL_ID "))
    assert len(state["mermaid"]) == MERMAID, state["mermaid"]
    assert not any(m["warning"] for m in state["mermaid"])  # Mermaid parsed every diagram
    assert all(m["width"] > 100 and m["height"] > 100 for m in state["mermaid"]), state["mermaid"]
    first, refused, waiting = (_svg(m["src"]) for m in state["mermaid"])
    for label in settings["labels"][:4]:
        assert label in first, label
    assert f"{call_id} ⇄ id 3" in first and "initialize · id 1" in first
    assert "isError true" in refused and "FORBIDDEN" in refused
    assert settings["labels"][4] in waiting and "notes__save_learning_gap" in waiting
    assert len(state["images"]) == PNG and all(i["complete"] and i["width"] > 200 and i["height"] > 80 for i in state["images"])
    if name == "zh-CN":  # the Chinese is drawn as Chinese, not as empty boxes
        chinese = _chinese_font_families()
        assert chinese, "no font with Chinese glyphs is installed: apt-get install fonts-wqy-microhei (.ci/run does)"
        assert any(font["familyName"] in chinese and font["glyphCount"] > 0 for font in fonts), (fonts, chinese)
