"""The Claude Agent SDK on the bench: `tests/outside/claude_read.py` in its own venv, driving the
Claude Code CLI pinned in tests/node, against the offline model's Messages endpoint.

    report = run_claude(bench, {"read": …, "refused": …}, schema)   # inside bench.run(…)
    report["read"]["toolUses"], report["read"]["asked"]             # what the SDK handed back

The script is a file a learner can read and run on its own (`show_source`); it imports only the
SDK. `run_claude` hands it, as one JSON argument, the CLI's path, the bench's model URL (without
`/v1`: the CLI adds `/v1/messages`), the files server's command (through the stdio tap), the tasks
and a folder that serves as the CLI's HOME, so the CLI writes its settings and session files there,
never in the learner's own `~/.claude`.

Nothing leaves the machine: the script's environment keeps only PATH, a locale and that HOME (no key
of the learner's), and the CLI is told to send none of its own traffic (its error reports, usage
statistics and update checks: `DISABLE_ERROR_REPORTING`, `DISABLE_TELEMETRY`,
`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_AUTOUPDATER`). With `traced_to`, the CLI's own
OpenTelemetry traces (`CLAUDE_CODE_ENABLE_TELEMETRY`, `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA`,
`OTEL_TRACES_EXPORTER=otlp`) go to that endpoint, a receiver on 127.0.0.1, and nowhere else.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from course_lib.frameworks import scripts, venvs
from course_lib.frameworks.bench import Bench
from course_lib.frameworks.scripts import run_script
from course_lib.lang import say
from course_lib.node_tools import NodeToolsMissing, ensure_installed
from course_lib.paths import node_dir

_TIMEOUT = 600.0  # seconds for the whole script: a CLI start per conversation, on a busy machine
# The CLI's own traffic to Anthropic (error reports, usage statistics, update checks): off.
QUIET = {"DISABLE_ERROR_REPORTING": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
         "DISABLE_AUTOUPDATER": "1"}  # fmt: skip


def script_path() -> Path:
    """The script's path (`tests/outside/claude_read.py`)."""
    return venvs.repo_dir() / "tests" / "outside" / "claude_read.py"


def cli_path() -> Path:
    """The Claude Code CLI pinned in tests/node (`node_modules/.bin/claude`)."""
    return node_dir() / "node_modules" / ".bin" / "claude"


def cli_version() -> str:
    """The pinned CLI's version, as its package.json says."""
    try:
        return json.loads((node_dir() / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return say("not installed", "未安装")


def ensure_claude(timeout: float = 1800) -> None:
    """The pinned CLI (tests/node) and the SDK's venv are installed; build what is missing.

    Raises:
        NodeToolsMissing: Node.js/npm are missing, or the CLI did not install.
        venvs.VenvFailed: the SDK's venv could not be built.
    """
    ensure_installed(timeout)
    if not _cli_runs():
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=node_dir(), capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        if done.returncode != 0 or not _cli_runs():
            raise NodeToolsMissing(say("npm install did not install a working Claude Code CLI in tests/node:",
                                       "npm install 没有在 tests/node 里装好能运行的 Claude Code CLI：")
                                   + f"\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    venvs.ensure("claude", timeout=timeout)


def _cli_runs() -> bool:
    try:
        return subprocess.run([str(cli_path()), "--version"], capture_output=True, text=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_claude(bench: Bench, tasks: dict[str, str], schema: dict[str, Any], *, traced_to: str | None = None) -> dict[str, Any]:
    """Run the script against the bench; what each of its conversations handed back (`toolUses`,
    `toolResults`, `asked`: the calls `can_use_tool` judged, `result`, `structured`).

    Call it inside `bench.run(…)` to keep the wire. `traced_to`: a recording's endpoint for the
    CLI's spans (and the files server's).

    Raises:
        NodeToolsMissing, venvs.VenvFailed: see `ensure_claude`.
        ScriptFailed: the script failed; its stderr is in the message.
    """
    ensure_claude()
    files = bench.files_stdio(traced_to=traced_to)
    home = files.log.with_name("claude-home")
    home.mkdir(exist_ok=True)
    cli_env = dict(QUIET)
    if traced_to is not None:
        cli_env |= {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
                    "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none",
                    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_ENDPOINT": traced_to}  # fmt: skip
    config = {"cli": str(cli_path()), "modelUrl": bench.model_url.removesuffix("/v1"), "cwd": str(bench.workspace),
              "files": {"command": files.command, "args": files.args}, "tasks": tasks, "schema": schema,
              "home": str(home), "env": cli_env, "out": str(files.log.with_name("claude-report.json"))}  # fmt: skip
    return run_script([str(venvs.python("claude")), str(script_path())], config, name="Claude", cwd=bench.workspace,
                      timeout=_TIMEOUT, env={"HOME": str(home)})  # fmt: skip


def show_source(start: str | None = None, end: str | None = None) -> None:
    """Print the script from the first line holding `start` up to the line holding `end` (exclusive)."""
    scripts.show_source(script_path(), start, end)


def tool_use_ids(report: dict[str, Any], *names: str) -> tuple[str, ...]:
    """The `tool_use` ids (the model's call ids) of the named conversations, in order."""
    return tuple(use["id"] for name in names for use in (report.get(name) or {}).get("toolUses", []))
