"""The explorer widget in a real browser: JupyterLab, headless Debian Chromium, Playwright.

The test starts JupyterLab on a free loopback port over a temporary copy of notebook 08, runs
every cell, changes `head` from 20 to 5 in the rendered widget (the real <input>), presses Run,
and reads the panels' status texts from the page. Then it presses Pin (the head-5 run becomes the
baseline), runs head 3 (compared with head 5, not with the run before the pin), and presses Reset
(every input back to its default, one fresh baseline run). Then the requests a learner may send
that do not make one tidy call (issue 27, item 6): a request naming no file ("Hello"), an empty
path, head and tail together, a path outside the workspace; for each the page must show this run
and nothing of an earlier one, the rules as they were sent, and what happened to the values and
results. Last, at a narrow width, no status badge breaks over two lines. Screenshots of the
explorer are saved to `test-artifacts/explorer.png` and `explorer-narrow.png`. The same test runs
the 简体中文 twin (`notebooks/zh-CN/`, where the kernel speaks Chinese) and reads the Chinese labels
(`test-artifacts/explorer-zh-CN.png`, `explorer-narrow-zh-CN.png`).

Chromium is Debian's (`apt-get install chromium`); a browser is never downloaded. Without it (or
without playwright) the test is skipped, except in CI (`CI=true`), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from course_lib.explorer import GROUPS

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = "08_explore_which_objects_change.ipynb"
SCREENSHOT = REPO / "test-artifacts" / "explorer.png"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
BASELINE = "Show the first 20 lines of /workspace/notes.txt"
EDITIONS = {  # what each edition's page says: folder, requests, statuses, the run counter, a change note
    "en": {"folder": "notebooks", "baseline": BASELINE, "after": "Show the first 5 lines of /workspace/notes.txt",
           "unchanged": "unchanged", "changed": "changed", "run": r"run (\d+)", "run_js": "`run ${n}:`",
           "removed": "'20' → '5', removed ", "removal": "removed", "more_reads": "(+1)", "screenshot": SCREENSHOT,
           "edition": "en", "file_menu": "File", "baseline_status": "baseline", "compared": "compared with run {n}",
           "pinned": "baseline: run {n}", "the_baseline": "the baseline", "no_call": "no call: the model answered in text",
           "no_result": "not executed: no call", "second_call": "call 2 of 2: fs__read_text_file", "two_calls": "2 calls: ",
           "no_file": "Show the first 20 lines", "hello": "Hello",
           "narrow_screenshot": SCREENSHOT.with_name("explorer-narrow.png")},
    "zh-CN": {"folder": "notebooks/zh-CN", "baseline": "显示 /workspace/notes.txt 的前 20 行",
              "after": "显示 /workspace/notes.txt 的前 5 行", "unchanged": "未变化", "changed": "已变化",
              "run": r"第 (\d+) 次运行", "run_js": "`第 ${n} 次运行`", "removed": "'20' → '5'，删除了 ",
              "removal": "删除了", "more_reads": "（+1）", "screenshot": SCREENSHOT.with_name("explorer-zh-CN.png"),
              "edition": "zh-CN", "file_menu": "文件", "baseline_status": "基线", "compared": "与第 {n} 次运行比较",
              "pinned": "基线：第 {n} 次运行", "the_baseline": "基线 · ", "no_call": "没有调用：模型直接用文本回答",
              "no_result": "未执行：没有调用", "second_call": "第 2 个调用（共 2 个）：fs__read_text_file",
              "two_calls": "2 个调用：", "no_file": "显示前 20 行", "hello": "你好",
              "narrow_screenshot": SCREENSHOT.with_name("explorer-narrow-zh-CN.png")},
}  # fmt: skip
NARROW = {"width": 640, "height": 1300}  # JupyterLab then leaves the explorer about 270px: columns of about 90px
STARTUP_SECONDS = 90
STEP_MS = 120_000  # any single browser step (run all cells is the longest)


def _unavailable(message: str) -> None:
    """Fail in CI (the browser test must run there); skip on a machine set up without a browser."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the browser test must run in CI)")
    pytest.skip(message)


@pytest.fixture
def chromium() -> str:
    """The path of Debian's Chromium, once playwright is known to be importable (checked before JupyterLab starts)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("playwright is not installed; pip install -e '.[test]'")
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if path is None:
        _unavailable("Chromium not found; install Debian's chromium: apt-get install chromium")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """Stop JupyterLab (it shuts its kernels down on SIGTERM); kill its process group if it hangs."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.fixture(params=list(EDITIONS))
def edition(request: pytest.FixtureRequest) -> dict[str, Any]:
    """One edition of notebook 08: the English, then the zh-CN twin."""
    return EDITIONS[request.param]


@contextmanager
def running_lab(tmp_path: Path, root: Path, env: dict[str, str], settings: Sequence[str] = ()) -> Iterator[tuple[str, str]]:
    """JupyterLab serving `root` on a free port with `env` (its log in tmp_path/lab.log), until the block
    ends; yields (base URL, token) once the server answers."""
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
        *settings,
    ] + (["--allow-root"] if os.geteuid() == 0 else [])  # CI containers often run as root  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with open(tmp_path / "lab.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
                                   start_new_session=True)  # fmt: skip
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while True:
                if process.poll() is not None:
                    pytest.fail(f"JupyterLab exited with {process.returncode}:\n{(tmp_path / 'lab.log').read_text()[-3000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {STARTUP_SECONDS}s")
                time.sleep(0.3)
            yield url, token
        finally:
            _stop(process)


@pytest.fixture
def lab(tmp_path: Path, edition: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """A JupyterLab server over a copy of notebook 08 (in its edition's folder); yields (base URL, token)."""
    root = tmp_path / "root"
    (root / edition["folder"]).mkdir(parents=True)
    shutil.copy(REPO / edition["folder"] / NOTEBOOK, root / edition["folder"] / NOTEBOOK)
    # No "Jupyter news?" toast over the widget (and no request for news): disable that plugin.
    (tmp_path / "config" / "labconfig").mkdir(parents=True)
    (tmp_path / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    env = os.environ | {  # keep the user's Jupyter config, runtime and workspaces out of it
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "IPYTHONDIR": str(tmp_path / "ipython"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
    }  # fmt: skip
    # JupyterLab's own language comes from what `make lab` hands it for the edition (binder/lab_settings.py:
    # an app settings folder of the zh-CN edition's own); the English edition gets no argument.
    settings = subprocess.run([sys.executable, "binder/lab_settings.py", "--edition", edition["edition"]], cwd=REPO,
                              env=env | {"JUPYTERLAB_DIR": str(tmp_path / "lab-app")}, capture_output=True, text=True,
                              timeout=60, check=True).stdout.split()  # fmt: skip
    with running_lab(tmp_path, root, env, settings) as served:
        yield served


def _statuses(explorer) -> dict[str, str]:
    return {name: explorer.locator(f".explorer-panel-{name} .explorer-status").inner_text().strip()
            for names in GROUPS.values() for name in names}


def _run_number(explorer, edition: dict[str, Any]) -> int:
    return int(re.search(edition["run"], explorer.locator(".explorer-summary").inner_text()).group(1))


def _wait_for_text(page, selector: str, text: str) -> None:
    """Wait until the last explorer's element `selector` shows `text` (the kernel answers asynchronously)."""
    page.wait_for_function(
        "([sel, text]) => [...document.querySelectorAll('.explorer')].at(-1).querySelector(sel)?.innerText.includes(text)",
        arg=[selector, text],
    )  # fmt: skip


def _fonts_drawing(page, selector: str) -> list[dict[str, Any]]:
    """The fonts Chromium really used to draw the text of the last element matching `selector`
    (DevTools protocol: CSS.getPlatformFontsForNode): [{familyName, glyphCount, …}]."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"][-1]
    fonts: list[dict[str, Any]] = []

    def walk(node_id: int) -> None:  # the element's text nodes sit in its descendants
        fonts.extend(cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node_id})["fonts"])
        for child in cdp.send("DOM.describeNode", {"nodeId": node_id, "depth": 1})["node"].get("children", []):
            if child["nodeType"] == 1:
                walk(cdp.send("DOM.pushNodesByBackendIdsToFrontend", {"backendNodeIds": [child["backendNodeId"]]})["nodeIds"][0])

    walk(node)
    return fonts


def _chinese_font_families() -> set[str]:
    """The families fontconfig says cover Chinese (every name it knows each family by)."""
    listed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=30).stdout
    return {name.strip() for line in listed.splitlines() for name in line.split(",") if name.strip()}


def _texts(explorer) -> dict[str, str]:
    """Each panel's text as this run has it: a changed panel's struck-out old parts (<del>, and the
    arrow after them) left out, so what remains is the current run's own text."""
    return {name: explorer.locator(f".explorer-panel-{name} pre").evaluate(
        "pre => { const now = pre.cloneNode(true); now.querySelectorAll('del, .explorer-arrow').forEach(e => e.remove());"
        " document.body.appendChild(now); const text = now.innerText; now.remove(); return text; }")
        for names in GROUPS.values() for name in names}  # fmt: skip


def _set_input(explorer, name: str, value: str) -> None:
    box = explorer.locator(f".explorer-input-{name} input")
    box.fill(value)
    box.press("Tab")  # the widget takes the value on "change"


def _run_and_wait(page, explorer, edition: dict[str, Any]) -> dict[str, Any]:
    """Press Run, wait for the next run number, and read what the page shows of it."""
    number = _run_number(explorer, edition)
    explorer.locator("button.explorer-run").click()
    page.wait_for_function(
        "n => [...document.querySelectorAll('.explorer .explorer-summary')].at(-1).innerText.includes("
        + edition["run_js"] + ")",
        arg=number + 1,
    )  # fmt: skip
    return {"run": number + 1, "statuses": _statuses(explorer), "texts": _texts(explorer),
            "summary": explorer.locator(".explorer-summary").inner_text()}


def _any_request(page, explorer, edition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Issue 27 item 6 in the page, from the defaults: each case run against the same baseline."""
    seen = {"baseline": {"texts": _texts(explorer)}}
    _set_input(explorer, "request", edition["hello"])
    seen["hello"] = _run_and_wait(page, explorer, edition)
    _set_input(explorer, "request", "")
    _set_input(explorer, "path", "")
    seen["empty_path"] = _run_and_wait(page, explorer, edition)
    _set_input(explorer, "path", "/workspace/notes.txt")
    _set_input(explorer, "tail", "3")  # head is 20 too
    seen["head_and_tail"] = _run_and_wait(page, explorer, edition)
    _set_input(explorer, "tail", "0")
    explorer.locator(".explorer-input-outside input[type=checkbox]").check()
    seen["outside"] = _run_and_wait(page, explorer, edition)
    return seen


def _badges_on_one_line(page) -> list[dict[str, Any]]:
    """Every status badge of the last explorer: how many lines its text takes and whether it stays
    inside its panel (a Range over the text gives one rectangle per line it is drawn on)."""
    return page.evaluate("""() => {
        const last = [...document.querySelectorAll('.explorer')].at(-1);
        return [...last.querySelectorAll('.explorer-status')].map(badge => {
            const range = document.createRange();
            range.selectNodeContents(badge);
            const panel = badge.closest('.widget-html-content') || badge.parentElement.parentElement;
            const b = badge.getBoundingClientRect(), p = panel.getBoundingClientRect();
            return {text: badge.innerText, lines: range.getClientRects().length,
                    inside: b.left >= p.left - 1 && b.right <= p.right + 1, width: Math.round(p.width)};
        });
    }""")


def test_head_20_to_5_in_jupyterlab(chromium: str, lab: tuple[str, str], edition: dict[str, Any]) -> None:
    from playwright.sync_api import sync_playwright

    url, token = lab
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True,
                                             timeout=60_000)  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1300})
            page.set_default_timeout(STEP_MS)
            page.goto(f"{url}/lab/tree/{edition['folder']}/{NOTEBOOK}?token={token}", wait_until="domcontentloaded")
            # The app object exists once JupyterLab has started (expose_app_in_browser).
            page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext")
            page.evaluate("""async () => {
                const panel = window.jupyterapp.shell.currentWidget;
                await panel.sessionContext.ready;
                await window.jupyterapp.commands.execute('notebook:run-all-cells');
            }""")
            # The "Your turn" view, once the baseline run has reached the page (both views share one model).
            page.wait_for_function(f"""() => {{
                const last = [...document.querySelectorAll('.explorer')].at(-1);
                return last?.querySelector('.explorer-input-head input')?.value === '20'
                    && last.querySelector('.explorer-summary').innerText.includes({json.dumps(edition["baseline"])});
            }}""")
            explorer = page.locator(".explorer").last
            explorer.evaluate("element => element.scrollIntoView({block: 'center'})")  # clear of the toolbar
            before = _run_number(explorer, edition)
            _set_input(explorer, "head", "5")
            statuses = _run_and_wait(page, explorer, edition)["statuses"]
            SCREENSHOT.parent.mkdir(exist_ok=True)
            explorer.screenshot(path=str(edition["screenshot"]))
            arguments_inserted = explorer.locator(".explorer-panel-arguments ins").inner_text()
            arguments_removed = explorer.locator(".explorer-panel-arguments del").inner_text()
            arguments_shown = explorer.locator(".explorer-panel-arguments pre").inner_text()
            changes = {name: explorer.locator(f".explorer-panel-{name} .explorer-change").inner_text()
                       for name in GROUPS["value"] + GROUPS["result"]}  # fmt: skip
            # A rule panel is shown whole: nothing hidden below a scroll edge, and `head` visible in it.
            rules_cut = {name: explorer.locator(f".explorer-panel-{name} pre").evaluate(
                "pre => pre.scrollHeight > pre.clientHeight + 1") for name in GROUPS["rule"]}  # fmt: skip
            rules_text = [explorer.locator(f".explorer-panel-{name} pre").inner_text() for name in GROUPS["rule"]]
            summary = explorer.locator(".explorer-summary").inner_text()
            fonts = _fonts_drawing(page, ".explorer .explorer-summary")
            menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
            pin_before_click = explorer.locator("button.explorer-pin").is_disabled()
            # Pin: the head-5 run on show becomes the baseline; the next run is compared with it.
            explorer.locator("button.explorer-pin").click()
            _wait_for_text(page, ".explorer-baseline", edition["pinned"].format(n=before + 1))
            pinned_statuses = _statuses(explorer)
            pin_after_click = explorer.locator("button.explorer-pin").is_disabled()
            _set_input(explorer, "head", "3")
            explorer.locator("button.explorer-run").click()
            _wait_for_text(page, ".explorer-summary", edition["compared"].format(n=before + 1))
            after_pin = {name: explorer.locator(f".explorer-panel-{name} .explorer-change").inner_text()
                         for name in ("arguments", "mcp_arguments")}  # fmt: skip
            # Reset: every input back to its default and one run, the new baseline.
            explorer.locator("button.explorer-reset").click()
            _wait_for_text(page, ".explorer-summary", edition["the_baseline"])
            page.wait_for_function(
                "() => [...document.querySelectorAll('.explorer')].at(-1).querySelector('.explorer-input-head input').value === '20'")
            reset_statuses = _statuses(explorer)
            reset_summary = explorer.locator(".explorer-summary").inner_text()
            reset_run = _run_number(explorer, edition)
            # Honest for any request (issue 27, item 6), each compared with the fresh baseline.
            cases = _any_request(page, explorer, edition)
            # At a narrow width no badge breaks over two lines (issue 28): the outside run's unchanged and changed ones.
            page.set_viewport_size(NARROW)
            explorer.evaluate("element => element.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)  # one layout pass
            badges = _badges_on_one_line(page)
            explorer.screenshot(path=str(edition["narrow_screenshot"]))
        finally:
            browser.close()
    assert {statuses[name] for name in GROUPS["rule"]} == {edition["unchanged"]}, statuses
    assert {statuses[name] for name in GROUPS["value"] + GROUPS["result"]} == {edition["changed"]}, statuses
    assert (arguments_removed, arguments_inserted) == ("20", "5")
    assert '"head":20 → 5}' in arguments_shown  # regression: the page read "head":205
    assert changes["arguments"] == changes["mcp_arguments"] == "'20' → '5'"
    assert changes["mcp_result"].startswith(edition["removed"]) and changes["mcp_result"].count(edition["removal"]) == 1
    assert rules_cut == {name: False for name in GROUPS["rule"]} and all('"head"' in t for t in rules_text)
    assert edition["after"] in summary
    assert edition["more_reads"] in summary  # one more real file read
    assert menus and menus[0].strip() == edition["file_menu"], menus  # JupyterLab's own menus, in the edition's language
    # Pin and Reset, clicked in the page
    assert not pin_before_click and pin_after_click  # Pin is on for a run that is not the baseline, off once pinned
    assert set(pinned_statuses.values()) == {edition["baseline_status"]}, pinned_statuses
    assert after_pin == {"arguments": "'5' → '3'", "mcp_arguments": "'5' → '3'"}, after_pin  # not '20' → '3'
    assert set(reset_statuses.values()) == {edition["baseline_status"]}, reset_statuses
    assert edition["baseline"] in reset_summary and reset_run == before + 3
    if edition["folder"].endswith("zh-CN"):  # the Chinese is drawn as Chinese, not as empty boxes
        chinese = _chinese_font_families()
        assert chinese, "no font with Chinese glyphs is installed: apt-get install fonts-wqy-microhei (.ci/run does)"
        assert any(font["familyName"] in chinese and font["glyphCount"] > 0 for font in fonts), (fonts, chinese)
    # Honest for any request: the rules are the declarations sent, whatever the model did; every other
    # panel shows this run (nothing left from the run before), and says what happened.
    rules, values, results = (GROUPS[g] for g in ("rule", "value", "result"))
    base = cases["baseline"]["texts"]
    for case, seen in cases.items():
        if case == "baseline":
            continue
        assert seen["run"] == reset_run + list(cases).index(case), (case, seen["summary"])
        assert {seen["statuses"][n] for n in rules} == {edition["unchanged"]}, (case, seen["statuses"])
        assert all('"head"' in seen["texts"][n] and seen["texts"][n] == base[n] for n in rules), case
        assert {seen["statuses"][n] for n in values} == {edition["changed"]}, (case, seen["statuses"])
    for case in ("hello", "empty_path"):  # a text answer: no call, nothing executed, the model's own words
        seen = cases[case]
        assert seen["texts"]["arguments"] == edition["no_call"], (case, seen["texts"])
        assert seen["texts"]["mcp_result"] == seen["texts"]["function_call_output"] == edition["no_result"], case
        assert "A tool call involves" not in seen["texts"]["answer"] and seen["texts"]["answer"].strip(), case
        assert "(+0)" in seen["summary"] or "（+0）" in seen["summary"], seen["summary"]
    assert edition["no_file"] + "\n" in cases["empty_path"]["summary"] + "\n", cases["empty_path"]["summary"]
    both = cases["head_and_tail"]
    assert edition["two_calls"] in both["summary"], both["summary"]
    for name in values + results[:2]:  # every call of the run listed, none kept from the text answer before it
        assert edition["second_call"] in both["texts"][name], (name, both["texts"][name])
        assert edition["no_call"] not in both["texts"][name] and edition["no_result"] not in both["texts"][name]
    outside = cases["outside"]
    assert "/etc/passwd" in outside["texts"]["arguments"] and '"isError": true' in outside["texts"]["mcp_result"]
    assert "FORBIDDEN" in outside["texts"]["mcp_result"] and edition["second_call"] not in outside["texts"]["mcp_result"]
    # Narrow: every badge on one line and inside its panel
    assert len(badges) == 8 and max(b["width"] for b in badges) < 260, badges  # really narrow
    assert all(b["lines"] == 1 and b["inside"] for b in badges), badges
