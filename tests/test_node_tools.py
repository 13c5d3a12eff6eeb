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
