"""The reference filesystem server (Node, over stdio) beside ours, under two aliases."""

import pytest

from course_lib.fs_server import Workspace, build_server
from course_lib.host import McpHost
from course_lib.node_tools import reference_server
from course_lib.paths import workspace_dir
from course_lib.side_by_side import compare


@pytest.fixture(scope="module")
def host(node_tools):
    with McpHost() as h:
        h.add_server("fs", build_server(Workspace(workspace_dir())))
        h.add_stdio_server("ref", reference_server(workspace_dir()), only={"read_text_file"})
        yield h


def test_both_tools_are_offered_under_two_aliases_and_map_back(host):
    assert [t["name"] for t in host.responses_tools()] == ["fs__read_text_file", "ref__read_text_file"]
    assert (host.route("ref__read_text_file").server, host.route("ref__read_text_file").tool) == ("ref", "read_text_file")
    assert "Secure MCP Filesystem Server" in host.server_log("ref")  # its stderr went to the log file


def test_the_arguments_do_not_change_because_of_the_alias(host):
    args = {"path": "notes.txt", "head": 2}
    ours, theirs = host.call("fs__read_text_file", args), host.call("ref__read_text_file", args)
    assert ours.exchange.request["params"] == theirs.exchange.request["params"] == {"name": "read_text_file", "arguments": args}
    assert ours.result.content[0].text.rstrip("\n") == theirs.result.content[0].text


def test_the_side_by_side_table_comes_from_real_calls(host):
    rows = {row.case: row for row in compare(host, "fs__read_text_file", "ref__read_text_file", roots=[workspace_dir()])}
    assert rows["whole file"].agree
    # the reference checks head by truthiness: head 0 reads the whole file; ours refuses it
    assert rows["head 0"].theirs == "44 lines" and rows["head 0"].ours == "error: INVALID_INPUT"
    assert rows["head and tail"].theirs == "error: Cannot specify both head and tail parameters simultaneously"
    assert rows["outside the root"].ours == "error: FORBIDDEN" and "Access denied" in rows["outside the root"].theirs
    # on a file that ends with a newline the reference counts the empty string after it as a line
    assert rows["tail 2"].ours == "2 lines" and rows["tail 2"].theirs == "1 line"
    assert rows["head 3"].theirs == "3 lines, no final newline"
    for row in rows.values():
        assert str(workspace_dir()) not in row.ours + row.theirs  # real paths are masked
