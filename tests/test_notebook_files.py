"""The stored notebooks are reproducible files: executed in order, stable cell ids, and nothing
from the machine or the moment they were run on (timestamps, absolute paths)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9]*.ipynb"))
# Absolute paths of a machine: home folders, temporary folders, this repository's location.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:home|root|Users|tmp|var/folders|work)/[^\s\"'\\]+|[A-Z]:\\\\Users\\\\")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
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
