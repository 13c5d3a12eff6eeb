"""Outside MCP programs written by others, for checking our pieces against the real ecosystem:
the MCP Inspector (a CLI that drives any MCP server) and the reference filesystem server.

Both are npm packages pinned in `tests/node/package.json` and installed into that folder only
(`make node-tools`, or `ensure_installed()`), never globally. They need Node.js; without it the
functions here say so plainly instead of failing somewhere deeper.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from course_lib.lang import say
from course_lib.paths import node_dir


class NodeToolsMissing(RuntimeError):
    """Node.js or the pinned npm packages are not available."""


def node_available() -> bool:
    """True when `node` and `npm` are on the PATH."""
    return shutil.which("node") is not None and shutil.which("npm") is not None


def ensure_installed(timeout: float = 600) -> None:
    """Install the pinned packages into `tests/node/node_modules` if they are not there yet.

    Raises:
        NodeToolsMissing: Node.js/npm are missing, or `npm install` failed (its output is in the message).
    """
    if not node_available():
        raise NodeToolsMissing(say("Node.js is not installed: install `node` and `npm` to use this part, then `make node-tools` "
                                   "(it installs the pinned packages, and the Node 22 the MCP Inspector needs, into tests/node)",
                                   "没有安装 Node.js：要使用这一部分，请安装 `node` 和 `npm`，然后运行 `make node-tools`"
                                   "（它会把固定版本的包和 MCP Inspector 需要的 Node 22 装进 tests/node）"))
    installed = node_dir() / "node_modules"
    if (installed / ".bin" / "mcp-server-filesystem").exists() and _CONFORMANCE.exists() and _NODE22.exists():
        return
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund"], cwd=node_dir(), capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise NodeToolsMissing(say("npm install failed in tests/node:", "在 tests/node 里执行 npm install 失败：")
                               + f"\n{done.stdout[-2000:]}{done.stderr[-2000:]}")  # npm's own output as it was


def bin_path(name: str) -> Path:
    """The path of an installed package's command (e.g. `mcp-inspector`).

    Raises:
        NodeToolsMissing: see `ensure_installed`.
    """
    ensure_installed()
    return node_dir() / "node_modules" / ".bin" / name


_NODE22 = node_dir() / "node_modules" / "node" / "bin" / "node"  # npm package `node`: Node 22 itself
_CONFORMANCE = node_dir() / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def inspector_command() -> list[str]:
    """The MCP Inspector's command line (add `--cli …` and its arguments), run by the project-local Node 22.

    The pinned Inspector declares `"engines": {"node": ">=22.19.0"}` in its package.json, and its
    `.bin` shim would take whatever `node` is on the PATH (Debian's is 20), so it is started as
    `<node 22> <its launcher>`, like the conformance suite.

    Raises:
        NodeToolsMissing: see `ensure_installed`.
    """
    return [str(_NODE22), str(bin_path("mcp-inspector"))]


def conformance_command() -> list[str]:
    """The official MCP conformance suite's command line, run by the project-local Node 22.

    The suite needs Node 22 or newer and its `.bin` shim would take whatever `node` is on the
    PATH (Debian's is 20), so it is started as `<node 22> <its index.js>`.

    Raises:
        NodeToolsMissing: see `ensure_installed`.
    """
    ensure_installed()
    return [str(_NODE22), str(_CONFORMANCE)]


def reference_server(root: Path) -> StdioServerParameters:
    """How to start the reference filesystem server over stdio, allowed to read only `root`.

    Raises:
        NodeToolsMissing: see `ensure_installed`.
    """
    return StdioServerParameters(command=str(bin_path("mcp-server-filesystem")), args=[str(root)], cwd=str(root))
