"""The versions on the bench of notebooks 09b and 09c: each Python framework's installed package, the Node
packages of the Mastra script with the Node that runs them, and what the venvs of their own hold
(LangGraph's, the Claude Agent SDK's with the Claude Code CLI it drives)."""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version

from course_lib.frameworks.mastra import node22, versions
from course_lib.lang import say


def show_versions() -> None:
    """Print the installed version of each framework on the bench (and the Node that runs Mastra)."""
    rows = []
    for package, note in (("openai-agents", "Python"),
                          ("pydantic-ai-slim", say("Python, with its [openai,mcp] extras", "Python，带 [openai,mcp] 扩展")),
                          ("fastmcp", say("Python, pydantic-ai's MCP client", "Python，pydantic-ai 的 MCP 客户端")),
                          ("mcp", say("Python, the course's servers", "Python，课程的服务器"))):
        try:
            rows.append((package, version(package), note))
        except PackageNotFoundError:
            rows.append((package, say("not installed", "未安装"), note))
    node = node22()
    try:
        node_version = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        node_version = say("not installed (make node-tools)", "未安装（make node-tools）")
    for package, found in versions().items():
        rows.append((package, found, f"TypeScript, Node {node_version.removeprefix('v')}"))
    for package, found, note in rows:
        print(f"{package:<18} {found:<10} {note}")


def venv_versions(name: str, packages: tuple[str, ...]) -> dict[str, str]:
    """The installed version of each of `packages` in the venv `name` (`frameworks.venvs`, built first if
    missing), asked of that venv's own Python; "not installed" when it cannot be built."""
    from course_lib.frameworks import venvs

    try:
        venvs.ensure(name)  # built now if missing: the notebook's next cells need it anyway
    except venvs.VenvFailed:
        return dict.fromkeys(packages, say("not installed", "未安装"))
    script = ("import importlib.metadata as m, json, sys\n"
              "print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))")
    done = subprocess.run([str(venvs.venv_dir(name) / "bin" / "python"), "-c", script, *packages], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    import json

    return json.loads(done.stdout) if done.returncode == 0 else dict.fromkeys(packages, say("not installed", "未安装"))


def show_more_versions() -> None:
    """Print the versions of notebook 09c's bench: LangGraph's venv, the Claude Agent SDK's venv and the
    Claude Code CLI in tests/node, and the tracing packages of the course's own venv."""
    from course_lib.frameworks.claude import cli_version

    rows = []
    for package, found in venv_versions("langgraph", ("langgraph", "langchain-mcp-adapters", "mcp", "langchain-openai",
                                                      "openinference-instrumentation-mcp")).items():  # fmt: skip
        rows.append((package, found, say("Python, venv build/langgraph-venv", "Python，venv build/langgraph-venv")))
    for package, found in venv_versions("claude", ("claude-agent-sdk",)).items():
        rows.append((package, found, say("Python, venv build/claude-venv", "Python，venv build/claude-venv")))
    rows.append(("@anthropic-ai/claude-code", cli_version(), say("the CLI the SDK drives, tests/node", "SDK 驱动的 CLI，tests/node")))
    for package in ("opentelemetry-sdk", "openai-agents", "pydantic-ai-slim"):
        try:
            rows.append((package, version(package), say("Python, the course's venv", "Python，课程的 venv")))
        except PackageNotFoundError:
            rows.append((package, say("not installed", "未安装"), say("Python, the course's venv", "Python，课程的 venv")))
    for package, found, note in rows:
        print(f"{package:<34} {found:<10} {note}")
