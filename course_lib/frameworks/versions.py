"""The versions on the bench of notebook 09b: each Python framework's installed package and the Node
packages of the Mastra script, with the Node that runs them."""

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
