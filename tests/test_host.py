import pytest

from course_lib.fs_server import Workspace, build_server
from course_lib.host import McpHost, UnknownAlias, files_host
from course_lib.paths import workspace_dir


@pytest.fixture
def host():
    with files_host() as h:
        yield h


def test_aliases_map_back_to_server_and_original_name(host):
    route = host.route("fs__read_text_file")
    assert (route.server, route.tool) == ("fs", "read_text_file")
    assert [t["name"] for t in host.responses_tools()] == ["fs__read_text_file"]


def test_call_sends_the_original_name_and_unchanged_arguments(host):
    call = host.call("fs__read_text_file", {"path": "/workspace/notes.txt", "head": 5})
    assert call.exchange.request["params"] == {"name": "read_text_file", "arguments": {"path": "/workspace/notes.txt", "head": 5}}
    assert call.result is not None and not call.result.is_error
    lines = call.result.content[0].text.splitlines()
    assert lines == (workspace_dir() / "notes.txt").read_text().splitlines()[:5]
    assert call.mcp_id == call.exchange.response["id"]


def test_unknown_alias_raises_before_anything_is_sent(host):
    before = len(host.connections["fs"].messages)
    with pytest.raises(UnknownAlias, match="unknown tool 'fs__delete'"):
        host.call("fs__delete", {})
    assert len(host.connections["fs"].messages) == before


def test_two_servers_with_the_same_tool_name_stay_distinguishable(tmp_path):
    (tmp_path / "notes.txt").write_text("other server's notes\n")
    with McpHost() as h:
        h.add_server("fs", build_server(Workspace(workspace_dir())))
        h.add_server("alt", build_server(Workspace(tmp_path), name="alt-files"))
        assert [t["name"] for t in h.responses_tools()] == ["fs__read_text_file", "alt__read_text_file"]
        ours = h.call("fs__read_text_file", {"path": "notes.txt", "head": 1})
        theirs = h.call("alt__read_text_file", {"path": "notes.txt", "head": 1})
    assert theirs.result.content[0].text == "other server's notes\n"
    assert ours.result.content[0].text != theirs.result.content[0].text
    assert ours.exchange.request["params"] == theirs.exchange.request["params"]  # the alias never changes the arguments


def test_prefix_can_only_be_used_once(host):
    with pytest.raises(ValueError, match="already connected"):
        host.add_server("fs", build_server(Workspace(workspace_dir())))


def test_a_prefix_with_the_alias_separator_is_refused(host):
    with pytest.raises(ValueError, match="may not contain '__'"):
        host.add_server("my__fs", build_server(Workspace(workspace_dir())))
