"""The files MCP server: what it reads, what it refuses, and how each outcome reaches a client."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from course_lib.arguments import BOTH_HEAD_AND_TAIL, ReadTextFileArgs, input_schema
from course_lib.fs_server import MAX_WHOLE_FILE_BYTES, OUTPUT_SCHEMA, ToolFailure, Workspace, build_server
from course_lib.results import tool_error_code

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "workspace"
TOOL = "read_text_file"
NOTES = (FIXTURES / "notes.txt").read_text(encoding="utf-8")
NOTE_LINES = NOTES.splitlines(keepends=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A private copy of the course workspace, with a secret file outside it."""
    copy = tmp_path / "root"
    shutil.copytree(FIXTURES, copy)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOP SECRET\n")
    return copy


@pytest.fixture
def workspace(root: Path) -> Workspace:
    return Workspace(root)


async def call(workspace: Workspace, arguments: dict | None, *, mode: str = "auto"):
    async with Client(build_server(workspace), mode=mode) as client:
        await client.list_tools()
        return await client.call_tool(TOOL, arguments)


def assert_ok(result, text: str, path: str = "/workspace/notes.txt") -> None:
    assert not result.is_error, result.content
    assert [block.text for block in result.content] == [text]
    lines = len(text.splitlines())
    assert result.structured_content == {"path": path, "text": text, "lines": lines}
    jsonschema.validate(result.structured_content, OUTPUT_SCHEMA)


def assert_error(result, code: str, message: str, workspace: Workspace) -> None:
    assert result.is_error
    assert [block.text for block in result.content] == [f"{code}: {message}"]
    # Text only: the output schema describes successes, and no client checks an error against it.
    assert result.structured_content is None and tool_error_code(result) == code
    # The real location of the workspace never reaches the client.
    for real in (str(workspace.root), str(workspace.root.parent)):
        assert real not in message


# --- discovery ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_lists_one_read_only_tool(workspace, mode):
    async with Client(build_server(workspace), mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == [TOOL]
    tool = tools[0]
    assert tool.input_schema == input_schema()
    assert tool.annotations.read_only_hint is True
    for phrase in ("/workspace", "head", "tail", "first N lines", "last N lines", "both at once is refused"):
        assert phrase in tool.description
    # The cap on whole reads is in the rule the model reads, and it is the cap the server applies.
    assert f"A file over {MAX_WHOLE_FILE_BYTES // 2**20} MiB is not read whole" in tool.description
    jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    assert tool.output_schema == OUTPUT_SCHEMA and "anyOf" not in tool.output_schema  # one shape: successes


# --- reading --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_whole_file(workspace):
    assert_ok(await call(workspace, {"path": "/workspace/notes.txt"}), NOTES)
    assert len(NOTE_LINES) >= 40


@pytest.mark.anyio
@pytest.mark.parametrize("head", [20, 5, 1, 10_000])
async def test_head(workspace, head):
    result = await call(workspace, {"path": "/workspace/notes.txt", "head": head})
    assert_ok(result, "".join(NOTE_LINES[:head]))


@pytest.mark.anyio
async def test_head_20_and_head_5_differ_only_in_the_value(workspace):
    twenty = await call(workspace, {"path": "/workspace/notes.txt", "head": 20})
    five = await call(workspace, {"path": "/workspace/notes.txt", "head": 5})
    assert (twenty.structured_content["lines"], five.structured_content["lines"]) == (20, 5)
    assert twenty.content[0].text.startswith(five.content[0].text)


@pytest.mark.anyio
async def test_tail_3_gives_the_real_last_lines(workspace):
    result = await call(workspace, {"path": "notes.txt", "tail": 3})
    assert_ok(result, "".join(NOTE_LINES[-3:]))
    assert result.content[0].text.splitlines()[-1] == NOTES.splitlines()[-1]  # not an empty "line"


def test_tail_edge_cases(root, workspace):
    (root / "no_newline.txt").write_text("a\nb\nc")
    (root / "empty.txt").write_text("")
    big = "".join(f"line {n} é\n" for n in range(20_000))  # several 64 KiB blocks
    (root / "big.txt").write_text(big, encoding="utf-8")
    read = workspace.read_text_file
    assert read(ReadTextFileArgs(path="no_newline.txt", tail=2)) == "b\nc"
    assert read(ReadTextFileArgs(path="no_newline.txt", tail=9)) == "a\nb\nc"
    assert read(ReadTextFileArgs(path="empty.txt", tail=3)) == ""
    assert read(ReadTextFileArgs(path="big.txt", tail=4)) == "".join(big.splitlines(True)[-4:])
    assert read(ReadTextFileArgs(path="big.txt", tail=15_000)) == "".join(big.splitlines(True)[-15_000:])
    assert read(ReadTextFileArgs(path="big.txt", head=2)) == "line 0 é\nline 1 é\n"


@pytest.mark.anyio
async def test_null_head_counts_as_absent(workspace):
    assert_ok(await call(workspace, {"path": "/workspace/notes.txt", "head": None, "tail": None}), NOTES)


# --- refused arguments: checked by the same model that published the schema -----------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "/workspace/notes.txt", "head": 0}, "head: must be ≥ 1 (got 0)"),
        ({"path": "/workspace/notes.txt", "head": 20, "tail": 3}, BOTH_HEAD_AND_TAIL),
        ({"path": "/workspace/notes.txt", "head": "5"}, "head: expected an integer (got string)"),
        ({"path": "/workspace/notes.txt", "head": 5.5}, "head: expected an integer (got number)"),
        ({"path": "/workspace/notes.txt", "head": True}, "head: expected an integer (got boolean)"),
        ({"path": "/workspace/notes.txt", "lines": 5}, "unknown property 'lines' (allowed: path, head, tail)"),
        ({}, "path: required"),
        (None, "path: required"),
    ],
)
async def test_invalid_arguments_are_refused_before_any_read(workspace, arguments, message):
    assert_error(await call(workspace, arguments), "INVALID_INPUT", message, workspace)
    assert workspace.reads == 0


@pytest.mark.anyio
async def test_invalid_arguments_over_real_json_rpc(workspace):
    result = await call(workspace, {"path": "/workspace/notes.txt", "head": "5"}, mode="legacy")
    assert_error(result, "INVALID_INPUT", "head: expected an integer (got string)", workspace)


# --- paths: where it points is decided before whether it exists -----------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        ("", "INVALID_INPUT", "path is empty"),
        ("notes.txt\x00.md", "INVALID_INPUT", "path contains a NUL byte"),
        ("/workspace/missing.txt", "NOT_FOUND", "'/workspace/missing.txt': no such file"),
        ("docs/missing/deeper.txt", "NOT_FOUND", "'/workspace/docs/missing/deeper.txt': no such file"),
        ("notes.txt/inside", "NOT_FOUND", "'/workspace/notes.txt/inside': no such file"),
        ("/workspace/docs", "INVALID_INPUT", "'/workspace/docs': is a directory"),
        ("/workspace", "INVALID_INPUT", "'/workspace': is a directory"),
        ("/workspace/", "INVALID_INPUT", "'/workspace': is a directory"),
        ("/etc/passwd", "FORBIDDEN", "path is outside /workspace"),
        ("/", "FORBIDDEN", "path is outside /workspace"),
        ("//workspace/notes.txt", "FORBIDDEN", "path is outside /workspace"),
        ("/workspace_evil/notes.txt", "FORBIDDEN", "path is outside /workspace"),
        ("/work/notes.txt", "FORBIDDEN", "path is outside /workspace"),
        ("../outside/secret.txt", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("../../etc/passwd", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("docs/../../outside/secret.txt", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("docs/a/b/../../../../x", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("/workspace/../etc/passwd", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("/workspace/docs/../../workspace/notes.txt", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("../root_evil/notes.txt", "FORBIDDEN", "path climbs out of /workspace with '..'"),
        ("~/notes.txt", "NOT_FOUND", "'/workspace/~/notes.txt': no such file"),
        ("%2e%2e/outside/secret.txt", "NOT_FOUND", "'/workspace/%2e%2e/outside/secret.txt': no such file"),
        ("..%2foutside%2fsecret.txt", "NOT_FOUND", "'/workspace/..%2foutside%2fsecret.txt': no such file"),
        (" notes.txt", "NOT_FOUND", "'/workspace/ notes.txt': no such file"),
    ],
)
async def test_path_outcomes(tmp_path, workspace, path, code, message):
    evil = tmp_path / "root_evil"  # a real sibling whose name starts with the root's name
    evil.mkdir()
    (evil / "notes.txt").write_text("EVIL\n")
    assert_error(await call(workspace, {"path": path}), code, message, workspace)
    assert workspace.reads == 0


@pytest.mark.anyio
async def test_dotdot_that_stays_inside_is_fine(workspace):
    assert_ok(await call(workspace, {"path": "/workspace/docs/../notes.txt", "head": 1}), NOTE_LINES[0])


@pytest.mark.anyio
async def test_tilde_is_a_literal_name(root, workspace):
    (root / "~").mkdir()
    (root / "~" / "x").write_text("tilde\n")
    assert_ok(await call(workspace, {"path": "~/x"}), "tilde\n", path="/workspace/~/x")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("link", "target", "path"),
    [
        ("leak.txt", "outside/secret.txt", "/workspace/leak.txt"),  # file link pointing out
        ("outdir", "outside", "/workspace/outdir/secret.txt"),  # directory link pointing out
        ("ghost.txt", "outside/missing.txt", "/workspace/ghost.txt"),  # dangling, pointing out
        ("ghostdir", "nowhere", "/workspace/ghostdir/x.txt"),  # dangling directory, pointing out
    ],
)
async def test_symlinks_out_of_the_root_are_forbidden(tmp_path, root, workspace, link, target, path):
    (root / link).symlink_to(tmp_path / target)
    result = await call(workspace, {"path": path})
    assert_error(result, "FORBIDDEN", f"'{path}': leads outside /workspace through a symbolic link", workspace)
    assert "TOP SECRET" not in result.content[0].text
    assert workspace.reads == 0


@pytest.mark.anyio
async def test_nested_symlink_chain_out_is_forbidden(tmp_path, root, workspace):
    (root / "docs" / "up").symlink_to("..")  # inside -> inside ...
    (root / "hop").symlink_to(tmp_path / "outside")  # ... -> outside
    result = await call(workspace, {"path": "docs/up/hop/secret.txt"})
    message = "'/workspace/docs/up/hop/secret.txt': leads outside /workspace through a symbolic link"
    assert_error(result, "FORBIDDEN", message, workspace)


@pytest.mark.anyio
async def test_symlinks_inside_the_root_are_allowed(root, workspace):
    (root / "alias.txt").symlink_to("notes.txt")
    (root / "absolute.txt").symlink_to(root / "docs" / "mcp.md")
    assert_ok(await call(workspace, {"path": "alias.txt", "head": 2}), "".join(NOTE_LINES[:2]))
    mcp_md = (root / "docs" / "mcp.md").read_text()
    assert_ok(await call(workspace, {"path": "/workspace/absolute.txt"}), mcp_md, path="/workspace/docs/mcp.md")


@pytest.mark.anyio
async def test_dangling_symlink_inside_is_not_found(root, workspace):
    (root / "gone.txt").symlink_to("nothing-here.txt")
    assert_error(await call(workspace, {"path": "gone.txt"}), "NOT_FOUND", "'/workspace/gone.txt': no such file", workspace)


@pytest.mark.anyio
async def test_symlink_loop_is_refused_without_the_real_path(root, workspace):
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    message = "'/workspace/loop_a': cannot be resolved (symbolic link loop)"
    assert_error(await call(workspace, {"path": "loop_a"}), "INVALID_INPUT", message, workspace)


@pytest.mark.anyio
async def test_fifo_is_not_opened(root, workspace):
    os.mkfifo(root / "pipe")
    assert_error(await call(workspace, {"path": "pipe"}), "INVALID_INPUT", "'/workspace/pipe': not a regular file", workspace)
    assert workspace.reads == 0


@pytest.mark.anyio
async def test_non_utf8_is_refused(root, workspace):
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    result = await call(workspace, {"path": "latin1.txt"})
    assert_error(result, "INVALID_INPUT", "'/workspace/latin1.txt': not a UTF-8 text file", workspace)
    assert workspace.reads == 1  # it was opened; the refusal came from its bytes


# --- protocol errors versus tool errors ------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_unknown_tool_is_a_protocol_error(workspace, mode):
    async with Client(build_server(workspace), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("write_file", {"path": "notes.txt"})
    assert (caught.value.code, caught.value.message) == (-32602, "Unknown tool: write_file")
    assert workspace.reads == 0


@pytest.mark.anyio
async def test_unexpected_failure_is_generic_and_logged(workspace, monkeypatch, caplog):
    def explode(args):
        raise OSError(f"disk on fire under {workspace.root}")

    monkeypatch.setattr(workspace, "read", explode)
    with caplog.at_level(logging.ERROR, logger="course_lib.fs_server"):
        result = await call(workspace, {"path": "notes.txt"})
    assert_error(result, "UPSTREAM_ERROR", "the file could not be read (internal error)", workspace)
    assert "disk on fire" in caplog.text  # the detail went to the log, not to the client


# --- the reads counter -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_reads_count_only_real_reads(workspace):
    async with Client(build_server(workspace)) as client:
        await client.list_tools()
        assert workspace.reads == 0
        await client.call_tool(TOOL, {"path": "/etc/passwd"})
        await client.call_tool(TOOL, {"path": "missing.txt"})
        await client.call_tool(TOOL, {"path": "notes.txt", "head": "20"})
        assert workspace.reads == 0
        await client.call_tool(TOOL, {"path": "notes.txt", "head": 20})
        assert workspace.reads == 1
        await client.call_tool(TOOL, {"path": "todo.md", "tail": 2})
        assert workspace.reads == 2


# --- Workspace directly ----------------------------------------------------------------------


def test_workspace_resolve_and_logical(root, workspace):
    assert workspace.resolve("/workspace/notes.txt") == root.resolve() / "notes.txt"
    assert workspace.resolve("data/config.json") == root.resolve() / "data" / "config.json"
    assert workspace.logical(root.resolve() / "docs" / "mcp.md") == "/workspace/docs/mcp.md"
    assert workspace.logical(root.resolve()) == "/workspace"
    with pytest.raises(ValueError):
        workspace.logical(root.parent / "outside" / "secret.txt")
    with pytest.raises(ToolFailure) as caught:
        workspace.resolve("/workspace_evil/x")
    assert (caught.value.code, caught.value.message) == ("FORBIDDEN", "path is outside /workspace")


def test_workspace_root_must_be_a_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        Workspace(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        Workspace(tmp_path / "file")


def test_long_paths_are_not_echoed_in_full(workspace):
    with pytest.raises(ToolFailure) as caught:
        workspace.resolve("a" * 500 + ".txt")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.message.endswith("…': name too long")
    assert len(caught.value.message) < 80


# --- stdio -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_stdio_server_lists_and_reads(root, tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "course_lib.fs_server", "--root", str(root)], cwd=str(REPO)
    )
    errlog_path = tmp_path / "server-stderr.txt"
    with errlog_path.open("w") as errlog:  # a real file: stdio_client needs a fileno
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool(TOOL, {"path": "/workspace/notes.txt", "head": 5})
            refused = await client.call_tool(TOOL, {"path": "/workspace/notes.txt", "head": 5.5})
    assert [tool.name for tool in tools] == [TOOL]
    assert tools[0].input_schema == input_schema()
    assert_ok(result, "".join(NOTE_LINES[:5]))
    assert refused.is_error and refused.content[0].text == "INVALID_INPUT: head: expected an integer (got number)"
    assert errlog_path.read_text() == ""  # nothing logged at WARNING for normal traffic


@pytest.mark.parametrize("bad_root", ["/nonexistent", "notes_file"])
def test_stdio_root_must_be_a_directory(tmp_path, bad_root):
    (tmp_path / "notes_file").write_text("x")
    done = subprocess.run(
        [sys.executable, "-m", "course_lib.fs_server", "--root", bad_root],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "--root must be an existing directory" in done.stderr


def test_stdio_exits_cleanly_on_eof(root):
    done = subprocess.run(
        [sys.executable, "-m", "course_lib.fs_server", "--root", str(root)],
        cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
