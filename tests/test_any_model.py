"""Every notebook of both editions run to the end on a model that is not the offline model.

A learner with a key runs the same cells against a real endpoint. Here the endpoint is the project's
own stand-in (`course_lib.offline_model.standin`: the offline model varied the way real models vary),
served over real HTTP, and every notebook is executed with the keys set, as a learner's kernel would
have them (`STANDIN_ENV`). A cell that raises fails the test unless it is tagged `raises-exception`
(a common-mistake cell); stored outputs are not compared here (nbval does that offline).

The two editions run on two kinds of model, to cover both in one pass (the code cells of the two
editions are the same, so an error in one is an error in both): the English edition on the default
model (`gpt-4.1`: no reasoning items), the Chinese edition on a reasoning model (`gpt-6-luna`: a
`reasoning` item before every output, which a hand-built input must send back). Both get text before
free calls, reordered arguments, reworded answers and dated model names.

`STOPS` is the list of notebooks that stop today, each with the first line of its error: such a
notebook is an expected failure (`xfail(strict=True)`) only while it stops with that very error. A
notebook that runs to the end, or stops elsewhere, fails the test: fix the notebook, then remove (or
update) its line here.

`COURSE_STANDIN_PROFILE=local` runs the same notebooks on the stand-in's local-server profile (as
Ollama's `/v1/responses` answers: no state, `tool_choice` ignored), both editions on the default model,
without `STOPS`: what a learner with a local server would meet. Not part of `make test`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course_lib.offline_model import running_server
from tests.conftest import standin_env

ROOT = Path(__file__).resolve().parent.parent
EDITIONS = {"en": ROOT / "notebooks", "zh-CN": ROOT / "notebooks" / "zh-CN"}
PROFILE = os.environ.get("COURSE_STANDIN_PROFILE", "hosted")  # "local": as a local server answers (see above)
MODELS = {"en": "gpt-4.1", "zh-CN": "gpt-6-luna" if PROFILE == "hosted" else "gpt-4.1"}  # default model, reasoning model
CELL_TIMEOUT = 600  # seconds; a cell that waits on a model that never answers fails instead of hanging CI

# The notebooks that stop today on the stand-in, each with (a stable part of) the first line of its error.
# Remove a line once its notebook runs to the end; `test_every_notebook_runs_on_another_model` says which.
STOPS: dict[tuple[str, str], str] = {}


class KnownStop(Exception):
    """The notebook stopped with the error `STOPS` records for it: an expected failure, for now."""


def first_error_line(error: CellExecutionError) -> str:
    """`ename: evalue`, first line only: what stopped the notebook, without the traceback."""
    ename, evalue = getattr(error, "ename", "") or "", getattr(error, "evalue", "") or ""
    return f"{ename}: {evalue}".splitlines()[0] if ename else str(error).strip().splitlines()[-1]


@pytest.fixture(scope="module")
def endpoint():
    """The stand-in over real HTTP for the module, in the profile chosen (`PROFILE`); its base URL."""
    with running_server(vary=PROFILE) as url:
        yield url


def cases():
    for edition, folder in EDITIONS.items():
        for path in sorted(folder.glob("[0-9]*.ipynb")):
            known = STOPS.get((edition, path.stem)) if PROFILE == "hosted" else None
            marks = [pytest.mark.xfail(strict=True, raises=KnownStop, reason=known)] if known else []
            yield pytest.param(edition, path, marks=marks, id=f"{edition}/{path.stem}")


@pytest.mark.parametrize(("edition", "path"), list(cases()))
def test_every_notebook_runs_on_another_model(edition, path, endpoint, monkeypatch):
    for name, value in standin_env(endpoint, MODELS[edition]).items():
        monkeypatch.setenv(name, value)  # the kernel inherits this environment
    monkeypatch.delenv("COURSE_LANG", raising=False)  # the edition comes from the notebook's folder, as for a learner
    notebook = nbformat.read(path, as_version=4)
    runner = NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})  # the kernel's cwd, as nbval's
    started = time.monotonic()
    try:
        runner.execute()
    except CellExecutionError as error:
        line = first_error_line(error)
        known = STOPS.get((edition, path.stem)) if PROFILE == "hosted" else None
        if known is not None and known in line:
            raise KnownStop(line) from None
        cell = next((c.get("id") for c in notebook.cells if c.get("outputs") and any(
            o.get("output_type") == "error" for o in c["outputs"])), "?")  # fmt: skip
        pytest.fail(f"{edition}/{path.name} stopped in cell {cell}: {line}"
                    + (f" (STOPS expects: {known!r})" if known else ""), pytrace=False)
    finally:
        print(f"{edition}/{path.stem}: {time.monotonic() - started:.1f} s on {MODELS[edition]}")
    assert labelled_offline_runs(notebook, endpoint) == [], "a demo ran offline on purpose without saying so"


def labelled_offline_runs(notebook: nbformat.NotebookNode, url: str) -> list[str]:
    """The cells that take the offline model on purpose (`offline_on_purpose(`) yet did not print the one
    line that says so and names the endpoint it does not use: [] when every such demo said it."""
    import httpx

    where = httpx.URL(url)
    host = f"{where.host}:{where.port}"
    said = ("Offline on purpose: ", f"not on {host}."), ("这里特意使用离线模型：", f"不发往 {host}。")
    silent = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or "offline_on_purpose(" not in cell.source:
            continue
        printed = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        lines = [line.rstrip() for line in printed.splitlines() if line.startswith(tuple(start for start, _ in said))]
        if any(not line.endswith(tuple(end for _, end in said)) for line in lines):
            silent.append(f"{cell.get('id')}: the line does not name {host}")
        elif not lines and cell.get("id") not in ONLY_WHEN_NEEDED:
            silent.append(f"{cell.get('id')}: no line")
    return silent


# Cells that take the offline model only when the configured model cannot show the lesson (a cell id is the
# same in both editions); elsewhere a cell that calls `offline_on_purpose(` always does.
ONLY_WHEN_NEEDED = {
    "d4e5f6a8": "04: the store:false round trip runs on the configured model when it is a reasoning model",
    "810483f4": "07: a model that sends three calls in one response runs the cells itself",
}
