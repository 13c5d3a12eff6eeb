"""Running a framework's script (Mastra in Node, LangGraph or the Claude Agent SDK in their venvs):
one JSON argument in, one JSON report file out, a plain error when it fails.

Every script gets the same contract: its config (the bench's addresses, the tasks, `out`: where to
write the report) as one JSON command-line argument; an environment with PATH, the locale and HOME
only (no key of the learner's, nothing secret) plus what the caller adds; and a time limit.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from course_lib.lang import say

KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")  # what a script's environment keeps of ours


class ScriptFailed(RuntimeError):
    """A framework's script exited with an error or wrote no report; the message holds its stderr's end."""


def run_script(command: list[str], config: dict[str, Any], *, name: str, cwd: Path, timeout: float,
               env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Run `command + [json(config)]`; the report it wrote to `config["out"]`.

    Raises:
        ScriptFailed: it timed out, exited non-zero, or wrote no report.
    """
    out = Path(config["out"])
    environment = {key: os.environ[key] for key in KEPT if key in os.environ} | (env or {})
    try:
        done = subprocess.run([*command, json.dumps(config)], cwd=cwd, env=environment, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired as expired:
        raise ScriptFailed(say("the {n} script did not finish within {s:.0f} s", "{n} 脚本没有在 {s:.0f} 秒内结束",
                               n=name, s=timeout)) from expired
    if done.returncode != 0 or not out.exists():
        raise ScriptFailed(say("the {n} script failed (exit status {code}):", "{n} 脚本失败了（退出状态 {code}）：",
                               n=name, code=done.returncode) + "\n" + done.stderr[-3000:])
    return json.loads(out.read_text(encoding="utf-8"))


def show_source(path: Path, start: str | None = None, end: str | None = None) -> None:
    """Print a script from the first line holding `start` up to the line holding `end` (exclusive)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    first = next((i for i, line in enumerate(lines) if start and start in line), 0)
    last = next((i for i, line in enumerate(lines) if end and end in line and i > first), len(lines))
    print("\n".join(lines[first:last]))
