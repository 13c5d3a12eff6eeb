"""The official MCP Inspector (CLI mode) drives our stdio server: a program nobody here wrote."""

import json
import subprocess
import sys

import pytest

from course_lib.node_tools import inspector_command
from course_lib.paths import workspace_dir


@pytest.fixture(scope="module")
def inspect(tmp_path_factory, node_tools):
    home = tmp_path_factory.mktemp("inspector-home")  # the Inspector may keep a catalog under $HOME

    def run(*args):
        command = [*inspector_command(), "--cli", sys.executable, "-m", "course_lib.fs_server",
                   "--root", str(workspace_dir()), *args]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=home,
                              env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(home)})  # fmt: skip
        start = done.stdout.index("{")
        body, _ = json.JSONDecoder().raw_decode(done.stdout[start:])
        return done.returncode, body

    return run


def test_tools_list_shows_read_text_file_with_its_schema(inspect):
    code, body = inspect("--method", "tools/list")
    assert code == 0
    [tool] = body["tools"]
    assert tool["name"] == "read_text_file"
    assert tool["inputSchema"]["required"] == ["path"]
    assert set(tool["inputSchema"]["properties"]) == {"path", "head", "tail"}


def test_tools_call_with_path_and_head_returns_the_right_lines(inspect):
    code, body = inspect("--method", "tools/call", "--tool-name", "read_text_file",
                         "--tool-arg", "path=/workspace/notes.txt", "head=3")  # fmt: skip
    expected = "".join((workspace_dir() / "notes.txt").read_text().splitlines(keepends=True)[:3])
    assert code == 0 and body["isError"] is False
    assert body["content"][0]["text"] == expected and body["structuredContent"]["lines"] == 3


def test_a_refused_path_is_reported_as_a_tool_error(inspect):
    code, body = inspect("--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", "path=/etc/passwd")
    assert body["isError"] is True and body["content"][0]["text"].startswith("FORBIDDEN: ")
    assert str(workspace_dir()) not in json.dumps(body)
    assert code != 0  # the Inspector's CLI exits non-zero on a tool error
