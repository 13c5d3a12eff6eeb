"""The files MCP server: one read-only tool, `read_text_file`, over a sandboxed folder.

It is built on the low-level `mcp.server.Server`, not `MCPServer`, because MCPServer's generated
argument model silently coerces ("5" becomes 5) and silently drops unknown properties. Here the
handler receives the raw `params.arguments` object and checks it with `ReadTextFileArgs`, the same
model that generates the published `inputSchema`, so the declared rule and the check are one.

It mirrors the reference filesystem server's `read_text_file` (name, head/tail meaning, refusal
of both) without its weaknesses: head/tail are checked by presence (head 0 is refused, not "read
everything"), paths are compared by components (no `/workspace_evil` sibling-prefix trick, as in
CVE-2025-53110) and links are resolved before deciding (no symlink escape, as in CVE-2025-53109).

Run over stdio:  python -m course_lib.fs_server --root DIR [--name files]
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import stat
import sys
import threading
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from course_lib.arguments import ArgumentsError, ReadTextFileArgs, input_schema, quote, validate_read_args

logger = logging.getLogger(__name__)

LOGICAL_ROOT = "/workspace"
TOOL_NAME = "read_text_file"
ERROR_CODES = ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND", "UPSTREAM_ERROR")
_BLOCK = 64 * 1024  # tail reads backwards in blocks of this size

TOOL_DESCRIPTION = (
    "Read a UTF-8 text file from the workspace and return its text. "
    "Paths are logical: {root}/notes.txt, or relative to {root} (notes.txt); "
    "nothing outside {root} can be read, not even through a symbolic link. "
    "Optional head: N returns only the first N lines; optional tail: N returns only the last N "
    "lines (N is an integer of at least 1). Give at most one of head and tail: both at once is "
    "refused. Read-only: it never changes a file."
)
"""Formatted with the workspace's logical root by build_server."""

_SUCCESS_SHAPE = {
    "properties": {
        "path": {"type": "string", "description": "Logical path of the file read"},
        "text": {"type": "string", "description": "The text returned"},
        "lines": {"type": "integer", "minimum": 0, "description": "Number of lines returned"},
    },
    "required": ["path", "text", "lines"],
    "additionalProperties": False,
}
_ERROR_SHAPE = {
    "properties": {"error": {
        "type": "object",
        "properties": {"code": {"type": "string", "enum": list(ERROR_CODES)}, "message": {"type": "string"}},
        "required": ["code", "message"],
        "additionalProperties": False,
    }},
    "required": ["error"],
    "additionalProperties": False,
}
# Declared so clients can check results. It covers the error shape too: the TypeScript SDK
# validates structuredContent even when isError is true (the Python SDK skips error results).
OUTPUT_SCHEMA: dict[str, Any] = {"type": "object", "anyOf": [_SUCCESS_SHAPE, _ERROR_SHAPE]}


class ToolFailure(Exception):
    """A tool-level refusal or failure; `message` names logical paths only."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Workspace:
    """A real folder shown to the model as `logical_root`; every path is checked before use."""

    def __init__(self, root: Path, logical_root: str = LOGICAL_ROOT) -> None:
        """Raises:
        FileNotFoundError: `root` does not exist.
        NotADirectoryError: `root` is not a directory.
        ValueError: `logical_root` is not an absolute POSIX path.
        """
        self.root = Path(root).resolve(strict=True)  # resolved once: all checks compare against it
        if not self.root.is_dir():
            raise NotADirectoryError(f"workspace root is not a directory: {root}")
        self.logical_root = PurePosixPath(logical_root)
        if not self.logical_root.is_absolute():
            raise ValueError(f"logical root must be absolute, got {logical_root!r}")
        self.reads = 0
        self._lock = threading.Lock()  # reads may happen in worker threads

    def resolve(self, path: str) -> Path:
        """Map a logical (`/workspace/...`) or relative path to a real regular file inside root.

        Every refusal about *where* the path points comes before anything that would reveal
        whether the file exists.

        Raises:
            ToolFailure: INVALID_INPUT (empty, NUL byte, name too long, directory, not a
                regular file, link loop), FORBIDDEN (outside the root, by `..` or through a
                symbolic link, or
                permission denied), NOT_FOUND (no such file).
        """
        if not isinstance(path, str) or path == "":
            raise ToolFailure("INVALID_INPUT", "path is empty")
        if "\x00" in path:
            raise ToolFailure("INVALID_INPUT", "path contains a NUL byte")
        parts = self._inside_parts(PurePosixPath(path))
        shown = quote(str(self.logical_root.joinpath(*parts)))
        try:
            real = self.root.joinpath(*parts).resolve()  # follows every link, dangling ones too
        except RuntimeError:  # its text would name the real path
            raise ToolFailure("INVALID_INPUT", f"{shown}: cannot be resolved (symbolic link loop)") from None
        # is_relative_to compares components, so <root>_evil is not inside <root>.
        if not real.is_relative_to(self.root):
            raise ToolFailure("FORBIDDEN", f"{shown}: leads outside {self.logical_root} through a symbolic link")
        try:
            mode = real.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            raise ToolFailure("NOT_FOUND", f"{shown}: no such file") from None
        except PermissionError:
            raise ToolFailure("FORBIDDEN", f"{shown}: permission denied") from None
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise ToolFailure("INVALID_INPUT", f"{shown}: name too long") from None
        if stat.S_ISDIR(mode):
            raise ToolFailure("INVALID_INPUT", f"{shown}: is a directory")
        if not stat.S_ISREG(mode):
            raise ToolFailure("INVALID_INPUT", f"{shown}: not a regular file")
        return real

    def _inside_parts(self, pure: PurePosixPath) -> list[str]:
        """The components below the logical root, with `..` applied; refuse any way out."""
        if pure.is_absolute():
            prefix = self.logical_root.parts
            # Component comparison: "/workspace_evil" has parts ("/", "workspace_evil").
            if pure.parts[: len(prefix)] != prefix:
                raise ToolFailure("FORBIDDEN", f"path is outside {self.logical_root}")
            rest = pure.parts[len(prefix):]
        else:
            rest = pure.parts  # relative paths live under the root; "~" and "%2e" stay literal
        parts: list[str] = []
        for part in rest:
            if part != "..":
                parts.append(part)
            elif parts:
                parts.pop()
            else:
                raise ToolFailure("FORBIDDEN", f"path climbs out of {self.logical_root} with '..'")
        return parts

    def logical(self, real: Path) -> str:
        """The logical path (`/workspace/...`) of a real path inside the root.

        Raises:
            ValueError: `real` is not inside the root.
        """
        return str(self.logical_root.joinpath(*Path(real).relative_to(self.root).parts))

    def read_text_file(self, args: ReadTextFileArgs) -> str:
        """Return the whole text, its first `head` lines, or its last `tail` lines.

        Raises:
            ToolFailure: from resolve(); INVALID_INPUT if the bytes read are not UTF-8.
        """
        return self.read(args)[1]

    def read(self, args: ReadTextFileArgs) -> tuple[str, str]:
        """Like read_text_file, but return `(logical path of the file read, text)`.

        Raises:
            ToolFailure: as read_text_file.
        """
        real = self.resolve(args.path)
        shown = self.logical(real)
        try:
            # O_NOFOLLOW: if the checked file is swapped for a link after resolve(), refuse.
            fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except PermissionError:
            raise ToolFailure("FORBIDDEN", f"{quote(shown)}: permission denied") from None
        with self._lock:
            self.reads += 1
        with os.fdopen(fd, "rb") as file:
            if args.head is not None:
                data = _head(file, args.head)
            elif args.tail is not None:
                data = _tail(file, args.tail)
            else:
                data = file.read()
        try:
            return shown, data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailure("INVALID_INPUT", f"{quote(shown)}: not a UTF-8 text file") from None


def _head(file: BinaryIO, count: int) -> bytes:
    """The first `count` lines, reading no further than needed."""
    lines: list[bytes] = []
    for line in file:  # binary iteration splits after b"\n", one line at a time
        lines.append(line)
        if len(lines) == count:
            break
    return b"".join(lines)


def _tail(file: BinaryIO, count: int) -> bytes:
    """The last `count` lines, reading backwards from the end in blocks."""
    position = file.seek(0, os.SEEK_END)
    blocks: list[bytes] = []
    newlines = 0
    # More than `count` newlines guarantees the first of the last `count` lines is complete.
    while position > 0 and newlines <= count:
        step = min(_BLOCK, position)
        position -= step
        file.seek(position)
        blocks.append(file.read(step))
        newlines += blocks[-1].count(b"\n")
    lines = _split_lines(b"".join(reversed(blocks)))
    if position > 0:
        lines = lines[1:]  # may start mid-line
    return b"".join(lines[-count:])


def _split_lines(data: bytes) -> list[bytes]:
    """Lines ending at b"\\n" (kept), as in _head; a final newline makes no empty last line."""
    # Not bytes.splitlines: it also breaks at a lone b"\r", which _head does not.
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    return lines + [pieces[-1]] if pieces[-1] else lines


def count_lines(text: str) -> int:
    """Number of lines in `text`, where a final newline does not start a new line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _error_result(code: str, message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{code}: {message}")],
        structured_content={"error": {"code": code, "message": message}},
        is_error=True,
    )


def build_server(workspace: Workspace, name: str = "files") -> Server:
    """A low-level MCP server exposing `read_text_file` over `workspace`."""
    tool = types.Tool(
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION.format(root=workspace.logical_root),
        input_schema=input_schema(),
        output_schema=OUTPUT_SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=True),
    )

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            # Not a tool failure: the request names nothing this server offers. Long names are cut.
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name[:64]}")
        try:
            # Absent arguments are an empty object, so the check reports "path: required".
            args = validate_read_args(params.arguments if params.arguments is not None else {})
            shown, text = await anyio.to_thread.run_sync(workspace.read, args)
        except (ArgumentsError, ToolFailure) as failure:
            return _error_result(failure.code, failure.message)
        except Exception:
            logger.exception("read_text_file failed unexpectedly")  # detail to stderr, not the client
            return _error_result("UPSTREAM_ERROR", "the file could not be read (internal error)")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content={"path": shown, "text": text, "lines": count_lines(text)},
        )

    return Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def _serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    """Serve the workspace over stdio until stdin closes; stdout carries only the protocol.

    Raises:
        SystemExit: with status 2 if the arguments are wrong or --root is not a directory.
    """
    parser = argparse.ArgumentParser(prog="python -m course_lib.fs_server", description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=Path, help="real folder shown as /workspace")
    parser.add_argument("--name", default="files", help="server name reported to clients")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    options = parser.parse_args(argv)
    if not options.root.is_dir():
        parser.error(f"--root must be an existing directory: {options.root}")  # exits 2, on stderr
    logging.basicConfig(level=options.log_level, stream=sys.stderr)  # stdout belongs to the protocol
    anyio.run(_serve_stdio, build_server(Workspace(options.root), options.name))


if __name__ == "__main__":
    main()
