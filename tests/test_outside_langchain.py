"""README's "After the course: frameworks": LangChain's MCP adapter cannot share the course's venv
(its current release requires mcp<2), and the README's way round it works. The commands are taken
from the README itself, with the venv in a temporary folder; pip needs its index (or its cache)."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def readme_commands() -> list[str]:
    section = README[README.index("**LangChain.**"):]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1).strip().splitlines()


def test_the_readme_gives_a_venv_of_its_own_and_names_the_pin(tmp_path):
    commands = readme_commands()
    assert commands[0] == "python3 -m venv build/langchain-venv" and len(commands) == 3
    assert '"langchain-mcp-adapters==0.3.2" "mcp<2"' in commands[1]
    # The pin, read in the release's own metadata, as the README states it.
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(tmp_path),
                    "langchain-mcp-adapters==0.3.2"], check=True, timeout=300)  # fmt: skip
    [wheel] = tmp_path.glob("langchain_mcp_adapters-0.3.2-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "Requires-Dist: mcp<2.0.0,>=1.24.0" in metadata
    assert "requires `mcp>=1.24,<2`" in README


def test_the_readme_commands_read_through_the_adapter_in_their_own_venv(tmp_path):
    venv = tmp_path / "langchain-venv"
    outputs = []
    for command in readme_commands():
        line = command.replace("build/langchain-venv", str(venv)).replace("python3 ", f"{sys.executable} ", 1)
        done = subprocess.run(line, shell=True, cwd=REPO, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{command} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        outputs.append(done.stdout)
    printed = outputs[-1]
    assert "tools: ['read_text_file']" in printed
    assert "/workspace/notes.txt → ['A tool call involves three kinds of object" in printed
    assert "/etc/passwd → ['FORBIDDEN: path is outside /workspace']" in printed
    assert "as a tool call: ToolMessage status error" in printed
    mcp = subprocess.run([str(venv / "bin" / "python"), "-c", "import mcp, importlib.metadata as m; print(m.version('mcp'))"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert mcp.startswith("1.")  # its own mcp 1.x; the course's venv keeps 2.x
