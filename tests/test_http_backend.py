"""The same notebook over real HTTP: the offline model served on a socket, the SDK configured by
environment variables exactly as for a real endpoint. Outputs must match the stored ones."""

import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK = NOTEBOOKS / "00_map_and_first_run.ipynb"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_model(monkeypatch):
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "course_lib.offline_model", "--port", str(port)],
                              stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("the offline model server did not start")
            time.sleep(0.1)
    # Exactly what a learner sets for a real endpoint; the kernel inherits the environment.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-course-test-not-a-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    yield server, port
    server.terminate()
    server.wait(timeout=10)


def _texts(nb) -> list[str]:
    """Each code cell's text outputs, joined (what a learner reads)."""
    texts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                parts.append(out.get("data", {}).get("text/plain", ""))
            elif out.output_type == "error":
                parts.append(f"ERROR {out.ename}: {out.evalue}")
        texts.append("".join(parts))
    return texts


def _run(nb):
    NotebookClient(nb, kernel_name="python3", timeout=180, resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def test_notebook_00_gives_the_same_outputs_over_a_socket(http_model):
    server, port = http_model
    stored = nbformat.read(NOTEBOOK, as_version=4)
    fresh = _run(nbformat.read(NOTEBOOK, as_version=4))
    expected = [t.replace("offline model (deterministic, in-process, no network)", f"real endpoint 127.0.0.1:{port}")
                for t in _texts(stored)]  # fmt: skip
    assert any(f"real endpoint 127.0.0.1:{port}" in t for t in _texts(fresh))  # it said which backend answered
    assert _texts(fresh) == expected

    # Proof that the cells went through the socket: with the server gone, the same notebook fails.
    server.terminate()
    server.wait(timeout=10)
    with pytest.raises(CellExecutionError, match="APIConnectionError"):
        _run(nbformat.read(NOTEBOOK, as_version=4))
