"""Mastra (TypeScript) on the bench: the script `tests/node/frameworks/mastra_read.mts`, run by Node 22.

    report = run_mastra(bench, {"read": "Show the first 5 lines of /workspace/notes.txt",
                                "refused": "Show the first 5 lines of /etc/passwd"}, run)
    report["read"]["text"]        # what Mastra's agent.generate() handed back

The script is a file a learner can read and run on its own; it imports `@mastra/core`, `@mastra/mcp`,
`@mastra/observability`, `@ai-sdk/openai` and `zod`, pinned in `tests/node/package.json` with the Node 22
that runs it. It lives beside those packages because Node resolves an `import` from the importing
file's folder upwards (ES modules ignore `NODE_PATH`), and it is `.mts` so Node 22 strips its types
natively (22.18 and later) and runs it as an ES module, with no build step and no `tsx`.

`run_mastra` passes the script the bench's addresses (the offline model through its tap, the files
server through `stdio_tap`), with `MASTRA_TELEMETRY_DISABLED=1` (Mastra reports usage to PostHog
unless told not to) and no API key in its environment; the wire lands in the bench's `Run`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from course_lib.frameworks.bench import Bench
from course_lib.lang import say
from course_lib.node_tools import NodeToolsMissing, ensure_installed
from course_lib.paths import node_dir

_TIMEOUT = 180.0  # seconds for the whole script (Node start, Mastra's import, four agent runs)
_PACKAGES = ("@mastra/core", "@mastra/mcp", "@mastra/observability", "@ai-sdk/openai", "zod")
# What the script's environment keeps of ours: enough to find programs and a home, nothing secret.
_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


def script_path() -> Path:
    """The Mastra script's path (`tests/node/frameworks/mastra_read.mts`)."""
    return node_dir() / "frameworks" / "mastra_read.mts"


def node22() -> Path:
    """The project-local Node 22 (the npm package `node`, pinned in `tests/node`)."""
    return node_dir() / "node_modules" / "node" / "bin" / "node"


def ensure_mastra(timeout: float = 600) -> None:
    """The pinned Node 22 and Mastra packages are installed (`npm install` in tests/node if not).

    Raises:
        NodeToolsMissing: Node.js/npm are missing, or `npm install` failed.
    """
    ensure_installed(timeout)
    modules = node_dir() / "node_modules"
    if node22().exists() and all((modules / name / "package.json").exists() for name in _PACKAGES):
        return
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=node_dir(), capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip
    if done.returncode != 0 or not all((modules / name / "package.json").exists() for name in _PACKAGES):
        raise NodeToolsMissing(say("npm install did not install Mastra's packages in tests/node:",
                                   "npm install 没有在 tests/node 里装好 Mastra 的包：")
                               + f"\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def versions() -> dict[str, str]:
    """The installed version of each package the script imports, read from its package.json."""
    found = {}
    for name in _PACKAGES:
        try:
            found[name] = json.loads((node_dir() / "node_modules" / name / "package.json").read_text())["version"]
        except (OSError, ValueError, KeyError):
            found[name] = say("not installed", "未安装")
    return found


class MastraFailed(RuntimeError):
    """The Mastra script exited with an error; the message holds the end of what it printed."""


def run_mastra(bench: Bench, tasks: dict[str, str], *, traced_to: str | None = None) -> dict[str, Any]:
    """Run the Mastra script against the bench's offline model and a files server over stdio; what
    each of its agent runs handed back (`text`, `finishReason`, `toolCalls`, `toolResults`, `suspended`).

    Call it inside `bench.run(…)` to keep the wire of the run. `traced_to`: a recording's endpoint
    for Mastra's spans (and the files server's).

    Raises:
        NodeToolsMissing: Node.js, or the pinned Mastra packages, are not available (see `ensure_mastra`).
        MastraFailed: the script failed; its stderr is in the message.
    """
    ensure_mastra()
    files = bench.files_stdio(traced_to=traced_to)
    out = files.log.with_name("mastra-report.json")
    config = {"modelUrl": bench.model_url, "files": {"command": files.command, "args": files.args, "cwd": files.cwd},
              "tasks": tasks, "out": str(out), **({"tracedTo": traced_to} if traced_to else {})}  # fmt: skip
    env = {key: os.environ[key] for key in _KEPT if key in os.environ} | {"MASTRA_TELEMETRY_DISABLED": "1"}
    try:
        done = subprocess.run([str(node22()), str(script_path()), json.dumps(config)], cwd=node_dir(), env=env,
                              capture_output=True, text=True, timeout=_TIMEOUT)  # fmt: skip
    except subprocess.TimeoutExpired as expired:
        raise MastraFailed(say("the Mastra script did not finish within {s:.0f} s", "Mastra 脚本没有在 {s:.0f} 秒内结束",
                               s=_TIMEOUT)) from expired
    if done.returncode != 0 or not out.exists():
        raise MastraFailed(say("the Mastra script failed (exit status {code}):", "Mastra 脚本失败了（退出状态 {code}）：",
                               code=done.returncode) + "\n" + done.stderr[-3000:])
    return json.loads(out.read_text(encoding="utf-8"))


def show_source(start: str | None = None) -> None:
    """Print the script (from the first line holding `start`, if given), as the file holds it."""
    lines = script_path().read_text(encoding="utf-8").splitlines()
    first = next((i for i, line in enumerate(lines) if start and start in line), 0)
    print("\n".join(lines[first:]))


def call_ids(report: dict[str, Any], *names: str) -> tuple[str, ...]:
    """The `toolCallId`s (the model's `call_id`s) of the named agent runs of a Mastra report, in order."""
    return tuple(call["toolCallId"] for name in names for call in (report.get(name) or {}).get("toolCalls", []))
