"""Give the widget models stored in executed notebooks ids that depend only on the notebook.

ipywidgets names every model with a random UUID, so each `make notebooks` rewrote the stored widget
state and every widget output of notebooks 06, 08, 09 and 10 even when nothing in them changed.
This renames each model id to one derived from the notebook's name and the model's place: models
in the order their views appear in the outputs, each followed by the models it references
(`IPY_MODEL_<id>`, in sorted property order). Models that no output reaches (widgets made and
dropped along the way) are not kept: nothing shows them, and nothing fixes their order. References
stay consistent because every occurrence of an old id is replaced.

    python .ci/stable_widget_ids.py notebooks/08_explore_which_objects_change.ipynb ...

It also merges consecutive stream outputs of one cell (two `print`s can arrive as two `stdout`
outputs, depending on timing; nbconvert's CoalesceStreamsPreprocessor runs before execution, so
it never sees them), so a stored cell's output does not depend on the machine's load.

`make notebooks` runs it after executing each notebook; tests/test_notebook_files.py checks that
the stored notebooks are already stable (running it again changes nothing).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
MODEL_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
REFERENCE = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


def stabilize(notebook: dict[str, Any], name: str) -> dict[str, Any]:
    """The notebook with every widget model id replaced by a stable one (a new dict)."""
    state = notebook.get("metadata", {}).get("widgets", {}).get(STATE, {}).get("state", {})
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in order:
            return
        order.append(model_id)
        if model_id in state:
            for reference in REFERENCE.findall(json.dumps(state[model_id], sort_keys=True)):
                visit(reference)

    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            if VIEW in output.get("data", {}):
                visit(output["data"][VIEW]["model_id"])
    new = {old: hashlib.sha256(f"{name}:{i}".encode()).hexdigest()[:32] for i, old in enumerate(order)}
    if all(old == fresh for old, fresh in new.items()) and set(state) <= set(order):
        return notebook
    kept = dict(notebook)
    if state:  # models no output reaches (widgets made and dropped along the way) show nowhere: not kept
        widgets = kept["metadata"]["widgets"][STATE]
        kept["metadata"] = {**kept["metadata"], "widgets": {**kept["metadata"]["widgets"], STATE: {
            **widgets, "state": {model_id: value for model_id, value in state.items() if model_id in order}}}}
    text = MODEL_ID.sub(lambda match: new.get(match[0], match[0]), json.dumps(kept, ensure_ascii=False))
    return json.loads(text)


def coalesce_streams(notebook: dict[str, Any]) -> dict[str, Any]:
    """The notebook with each run of same-named stream outputs in a cell merged into one (a new
    dict), or `notebook` itself when there is none."""
    if not any(a.get("output_type") == b.get("output_type") == "stream" and a.get("name") == b.get("name")
               for cell in notebook.get("cells", []) for a, b in zip(cell.get("outputs", []), cell.get("outputs", [])[1:])):
        return notebook
    cells = []
    for cell in notebook["cells"]:
        merged: list[dict[str, Any]] = []
        for output in cell.get("outputs", []):
            last = merged[-1] if merged else None
            if (last is not None and output.get("output_type") == last.get("output_type") == "stream"
                    and output.get("name") == last.get("name")):
                text = "".join(last["text"]) + "".join(output["text"])
                merged[-1] = {**last, "text": text.splitlines(keepends=True)}
            else:
                merged.append(output)
        cells.append({**cell, "outputs": merged} if "outputs" in cell else cell)
    return {**notebook, "cells": cells}


def main(paths: list[str]) -> int:
    import nbformat  # comes with Jupyter; only needed to write the notebook the way Jupyter does

    for path in map(Path, paths):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        stable = coalesce_streams(stabilize(notebook, path.name))
        if stable is not notebook:
            nbformat.write(nbformat.from_dict(stable), str(path))
            print(f"stable widget ids, streams merged: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
