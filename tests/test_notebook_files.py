"""The stored notebooks are reproducible files: executed in order, stable cell ids, and nothing
from the machine or the moment they were run on (timestamps, absolute paths)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = [*sorted((REPO / "notebooks").glob("[0-9]*.ipynb")),  # the English, then the 简体中文 edition
             *sorted((REPO / "notebooks" / "zh-CN").glob("[0-9]*.ipynb"))]
_spec = importlib.util.spec_from_file_location("stable_widget_ids", REPO / ".ci" / "stable_widget_ids.py")
stable_widget_ids = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stable_widget_ids)
# Absolute paths of a machine: home folders, temporary folders, this repository's location.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:home|root|Users|tmp|var/folders|work)/[^\s\"'\\]+|[A-Z]:\\\\Users\\\\")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO / "notebooks")))
def test_notebook_is_stored_executed_and_machine_free(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    ids = [cell.get("id") for cell in cells]
    assert None not in ids and len(set(ids)) == len(ids)
    counts = [cell["execution_count"] for cell in cells if cell["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), "run top to bottom once (make notebooks)"
    timed = [cell["id"] for cell in cells if "execution" in cell.get("metadata", {})]
    assert timed == [], "cell timestamps stored: make notebooks runs with record_timing off"
    outputs = json.dumps([cell.get("outputs", []) for cell in cells])
    assert MACHINE_PATH.findall(outputs) == []
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"


def test_the_pattern_finds_machine_paths():
    assert MACHINE_PATH.findall('"/home/ann/course/x.txt" and /tmp/pytest-1/a') == ["/home/ann/course/x.txt", "/tmp/pytest-1/a"]
    assert MACHINE_PATH.findall('"/workspace/notes.txt" /notes/a.md') == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO / "notebooks")))
def test_stored_widget_ids_are_the_stable_ones(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert stable_widget_ids.stabilize(notebook, path.name) is notebook, "run make notebooks (it keeps ids stable)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO / "notebooks")))
def test_stored_streams_are_merged(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert stable_widget_ids.coalesce_streams(notebook) is notebook, "run .ci/stable_widget_ids.py on it (make notebooks does)"


def test_consecutive_streams_merge_and_others_stay():
    out = lambda name, text: {"output_type": "stream", "name": name, "text": text}  # noqa: E731
    shown = {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}}
    notebook = {"cells": [{"cell_type": "code", "outputs": [out("stdout", ["a\n"]), out("stdout", ["b\n", "c"]),
                                                            out("stderr", ["e\n"]), shown, out("stdout", ["d\n"])]},
                          {"cell_type": "markdown", "source": "m"}]}
    merged = stable_widget_ids.coalesce_streams(notebook)
    assert merged["cells"][0]["outputs"] == [out("stdout", ["a\n", "b\n", "c"]), out("stderr", ["e\n"]), shown,
                                             out("stdout", ["d\n"])]
    assert merged["cells"][1] == notebook["cells"][1]
    assert stable_widget_ids.coalesce_streams(merged) is merged


def test_stable_ids_rename_every_reference_and_drop_what_nothing_shows():
    a, b, c, dropped = "a" * 32, "b" * 32, "c" * 32, "d" * 32
    view = {"output_type": "display_data", "data": {stable_widget_ids.VIEW: {"model_id": a}}, "metadata": {}}
    state = {a: {"state": {"children": [f"IPY_MODEL_{b}"], "layout": f"IPY_MODEL_{c}"}}, b: {"state": {}},
             c: {"state": {}}, dropped: {"state": {}}}
    notebook = {"cells": [{"outputs": [view]}], "metadata": {"widgets": {stable_widget_ids.STATE: {"state": state}}}}
    stable = stable_widget_ids.stabilize(notebook, "x.ipynb")
    new_state = stable["metadata"]["widgets"][stable_widget_ids.STATE]["state"]
    new_a = stable["cells"][0]["outputs"][0]["data"][stable_widget_ids.VIEW]["model_id"]
    assert len(new_state) == 3 and not {a, b, c, dropped} & set(new_state)
    children, layout = new_state[new_a]["state"]["children"][0][10:], new_state[new_a]["state"]["layout"][10:]
    assert {children, layout} == set(new_state) - {new_a}
    assert stable_widget_ids.stabilize(stable, "x.ipynb") is stable  # a second pass changes nothing


def test_the_learners_file_browser_shows_notebooks_and_guides_only():
    """Translation catalogs and the nbval sanitizer live beside the tools that read them."""
    tracked = subprocess.run(["git", "ls-files", "notebooks"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()  # fmt: skip
    assert tracked and [name for name in tracked if not name.endswith((".ipynb", ".md"))] == []
