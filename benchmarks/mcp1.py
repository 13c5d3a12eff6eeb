"""Benchmark 1's mcp 1.x client row: what LangChain's MCP adapter (it still pins `mcp<2`) pays per
call on our files server and on the Node reference, measured with that client itself.

The course runs on mcp 2.x, so the 1.x client lives in a venv of its own, `.venv-mcp1/` at the
repository root (ignored by git), built on first use: `python -m venv`, then `pip install
"mcp>=1.30,<2"` (the same index and cache as the course's venv). Remove the folder to rebuild it.
`_mcp1_client.py` runs there and reports JSON; this module turns that into rows.

The servers, each over stdio from that client, all open at once and called in interleaved rounds:
(k) our files server as it ships (output schema: the success shape), (l) the same server
declaring the two-shape schema it had before (`_stdio_variants two-shapes`), (l') a what-if: the
shipped shape declared as draft-07, as the Node reference declares its own (`_stdio_variants
draft-07`), (m) the Node reference server. mcp 1.x checks every success with a fresh
`jsonschema.validate`, the schema itself checked against its dialect's metaschema included, so the
schema's size and dialect show in every call; the check's own median is noted per server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import REPO, Row, progress, ratio_row
from course_lib.node_tools import NodeToolsMissing, node_available, reference_server
from course_lib.paths import workspace_dir

REQUIREMENT = "mcp>=1.30,<2"
VENV = REPO / ".venv-mcp1"
OURS = "(k) mcp 1.x client: our server, stdio"
TWO_SHAPES = "(l) mcp 1.x client: our server with the two-shape schema (before), stdio"
DRAFT_07 = "(l') mcp 1.x client: what-if, our success shape declared draft-07, stdio"
NODE = "(m) mcp 1.x client: Node server, stdio"


def client_python() -> Path:
    """The venv's Python, with mcp 1.x installed (built on first use).

    Raises:
        RuntimeError: the venv could not be built (the message says what failed).
    """
    python, marker = VENV / "bin" / "python", VENV / ".installed"
    if python.exists() and marker.exists() and marker.read_text() == REQUIREMENT:
        return python
    progress(f"building {VENV.name}/ with {REQUIREMENT} (first run only)")
    for command in ([sys.executable, "-m", "venv", str(VENV)],
                    [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", REQUIREMENT]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"`{' '.join(command[-3:])}` failed: {(done.stderr or done.stdout).strip()[-300:]}")
    marker.write_text(REQUIREMENT)
    return python


def _servers(arguments: dict) -> tuple[list[dict], str | None]:
    root = str(workspace_dir())
    servers = [
        {"label": OURS, "command": sys.executable, "args": ["-m", "course_lib.fs_server", "--root", root], "cwd": root},
        *({"label": label, "command": sys.executable, "args": ["-m", "benchmarks._stdio_variants", kind, root],
           "cwd": str(REPO), "env": {"PYTHONPATH": str(REPO)}} for label, kind in ((TWO_SHAPES, "two-shapes"),
                                                                                   (DRAFT_07, "draft-07"))),
    ]  # fmt: skip
    if not node_available():
        return servers, "skipped: Node.js not installed"
    try:
        node = reference_server(workspace_dir())
    except NodeToolsMissing as missing:
        return servers, f"skipped: {str(missing).splitlines()[0]}"
    servers.append({"label": NODE, "command": node.command, "args": node.args, "cwd": node.cwd and str(node.cwd),
                    "env": node.env})  # fmt: skip
    return servers, None


def rows(bench: str, arguments: dict, rounds: int, per_round: int) -> list[Row]:
    """The mcp 1.x rows of benchmark 1 (skipped rows, never an exception, when the venv or Node is missing)."""
    try:
        python = client_python()
    except (RuntimeError, OSError, subprocess.SubprocessError) as failed:
        return [Row(bench, f"{label}, per call", None, "µs", note=f"skipped: {failed}") for label in (OURS, NODE)]
    servers, node_skipped = _servers(arguments)
    progress(f"{bench}: mcp 1.x client, {rounds} rounds × {per_round} calls per server")
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as spec:
        json.dump({"arguments": arguments, "servers": servers}, spec)
        spec.flush()
        # -I: isolated, so the script's folder (benchmarks/, with its http.py) does not shadow the stdlib
        done = subprocess.run([str(python), "-I", str(REPO / "benchmarks" / "_mcp1_client.py"), spec.name, str(rounds),
                               str(per_round)], capture_output=True, text=True, timeout=1800)  # fmt: skip
    if done.returncode != 0:
        why = f"skipped: the mcp 1.x client failed: {done.stderr.strip()[-300:]}"
        return [Row(bench, f"{label}, per call", None, "µs", note=why) for label in (OURS, NODE)]
    report = json.loads(done.stdout)
    found = report["servers"]
    out = []
    for label in (OURS, TWO_SHAPES, DRAFT_07, NODE):
        if label not in found:
            out.append(Row(bench, f"{label}, per call", None, "µs", note=node_skipped or "skipped"))
            continue
        figures = found[label]
        out.append(Row(bench, f"{label}, per call", figures["call_us"], "µs",
                       note=f"{figures['calls']} calls; output-schema check {figures['validate_us']:.0f} µs per call; "
                            f"schema {figures['schema_bytes']} bytes; mcp {report['mcp']}, "
                            f"jsonschema {report['jsonschema']}"))  # fmt: skip
    if NODE in found:
        ours, node = found[OURS], found[NODE]
        out.append(ratio_row(bench, "mcp 1.x client: our stdio ÷ Node stdio, per call", ours["call_us"], node["call_us"],
                             limit=1.0, note=f"schema check {ours['validate_us']:.0f} vs {node['validate_us']:.0f} µs"))
        for label, what in ((TWO_SHAPES, "with the two-shape schema (before)"), (DRAFT_07, "what-if, draft-07")):
            other = found[label]
            out.append(Row(bench, f"mcp 1.x client: our stdio {what} ÷ Node stdio", other["call_us"] / node["call_us"],
                           "×", note=f"schema check {other['validate_us']:.0f} µs per call"))  # fmt: skip
    texts = {label: figures["text"].rstrip("\n") for label, figures in found.items()}
    if len(set(texts.values())) > 1:
        out.append(Row(bench, "mcp 1.x results agree", None, "", note="DIFFERENT TEXTS: " + "; ".join(texts)))
    return out
