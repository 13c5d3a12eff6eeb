import pytest

from course_lib import node_tools


def test_without_node_the_message_says_so_in_the_editions_language(monkeypatch):
    monkeypatch.setattr(node_tools.shutil, "which", lambda name: None)
    monkeypatch.setenv("COURSE_LANG", "en")
    with pytest.raises(node_tools.NodeToolsMissing, match="^Node.js is not installed: install `node` and `npm`"):
        node_tools.ensure_installed()
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    with pytest.raises(node_tools.NodeToolsMissing, match="^没有安装 Node.js：要使用这一部分，请安装 `node` 和 `npm`"):
        node_tools.reference_server(node_tools.node_dir())


def test_the_missing_node_message_names_make_node_tools_and_no_version_it_does_not_need(monkeypatch):
    monkeypatch.setattr(node_tools.shutil, "which", lambda name: None)
    monkeypatch.setenv("COURSE_LANG", "en")
    with pytest.raises(node_tools.NodeToolsMissing) as missing:
        node_tools.inspector_command()
    assert "then `make node-tools`" in str(missing.value) and "Node 22 the MCP Inspector needs" in str(missing.value)
    assert "20" not in str(missing.value)


@pytest.mark.usefixtures("node_tools")  # the fixture installs them (or skips, saying how)
def test_the_inspector_runs_on_the_project_local_node_it_declares():
    import json
    import subprocess

    node, launcher = node_tools.inspector_command()
    engines = json.loads((node_tools.node_dir() / "node_modules" / "@modelcontextprotocol" / "inspector" /
                          "package.json").read_text())["engines"]["node"]  # fmt: skip
    assert engines == ">=22.19.0"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    assert tuple(map(int, version.lstrip("v").split("."))) >= (22, 19, 0), version
    assert launcher.endswith("mcp-inspector")
