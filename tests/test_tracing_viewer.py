"""A real trace viewer, started by the project, in a real browser: Arize Phoenix (from PyPI, in
build/phoenix-venv) on 127.0.0.1, a traced run of the course's loop sent to it, and headless Debian
Chromium (Playwright) opening the trace: the tool span with its `gen_ai.tool.call.id`, the MCP span
under it with its `jsonrpc.request.id`. A screenshot goes to `test-artifacts/phoenix-trace.png`.

Without Chromium or playwright the test is skipped, except in CI (`CI=true`), where it fails. The
Phoenix venv is built if missing (`make outside-venvs` builds it beforehand).
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from course_lib import tracing
from course_lib.course import start_course
from course_lib.loop import run_loop
from course_lib.tracing.viewer import Phoenix

REPO = Path(__file__).resolve().parents[1]
SCREENSHOT = REPO / "test-artifacts" / "phoenix-trace.png"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
STEP_MS = 120_000


@pytest.fixture
def chromium() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("playwright is not installed; pip install -e '.[test]'")
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if path is None:
        _unavailable("Chromium not found; install Debian's chromium: apt-get install chromium")
    return path


def _unavailable(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the viewer test must run in CI)")
    pytest.skip(message)


def test_phoenix_shows_the_run_and_the_link_in_chromium(chromium, tmp_path):
    from playwright.sync_api import sync_playwright

    course = start_course(quiet=True)
    try:
        with tracing.recording() as trace:
            result = run_loop(course.client, course.host, "Show the first 5 lines of /workspace/notes.txt")
    finally:
        course.close()
    [link] = result.trace
    with Phoenix(tmp_path / "phoenix") as phoenix:
        assert phoenix.url.startswith("http://127.0.0.1:")  # this machine only
        assert phoenix.send(trace.spans) == 200
        assert phoenix.wait_for(len(trace.spans)), "Phoenix did not file the spans"
        assert sorted(phoenix.span_names()) == sorted(s.name for s in trace.spans)
        with urllib.request.urlopen(phoenix.url + "/v1/projects", timeout=10) as answer:
            project = next(p["id"] for p in json.loads(answer.read())["data"] if p["name"] == "course")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1500, "height": 1000})
                page.set_default_timeout(STEP_MS)
                page.goto(f"{phoenix.url}/projects/{project}")
                page.get_by_text("invoke_agent run_loop").first.click()  # the trace, as the learner opens it
                page.get_by_text("execute_tool fs__read_text_file").first.click()
                # the span's Attributes tab: the Info tab folds its attributes section (folded in 2 of 3 runs)
                page.get_by_role("tab", name="Attributes").click()
                # gen_ai.tool.call.id, in the span's attributes: shown on the page (Phoenix keeps hidden copies too)
                page.wait_for_function("id => document.body.innerText.includes(id)", arg=link.call_id)
                assert "gen_ai.tool.call.id" in page.inner_text("body")
                SCREENSHOT.parent.mkdir(exist_ok=True)
                page.screenshot(path=str(SCREENSHOT))
                page.get_by_text("MCP send tools/call").first.click()  # its child: the request that carried it
                page.get_by_role("tab", name="Attributes").click()
                page.wait_for_function("key => document.body.innerText.includes(key)", arg="jsonrpc.request.id")
                body = page.inner_text("body")
                assert "mcp.method.name" in body and str(link.mcp_id) in body
            finally:
                browser.close()
    assert (tmp_path / "phoenix").is_dir()  # what Phoenix kept stays in the folder it was given
