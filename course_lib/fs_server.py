"""The files MCP server: one read-only tool, `read_text_file`, over a sandboxed folder.

It is built on the low-level `mcp.server.Server`, not `MCPServer`, because MCPServer's generated
argument model silently coerces ("5" becomes 5) and silently drops unknown properties. Here the
handler receives the raw `params.arguments` object and checks it with `ReadTextFileArgs`, the same
model that generates the published `inputSchema`, so the declared rule and the check are one.

It mirrors the reference filesystem server's `read_text_file` (name, head/tail meaning, refusal
of both) without its weaknesses: head/tail are checked by presence (head 0 is refused, not "read
everything"), paths are compared by components (no `/workspace_evil` sibling-prefix trick, as in
CVE-2025-53110) and links are resolved before deciding (no symlink escape, as in CVE-2025-53109);
the checked path is then opened one component at a time without following links, so a folder
swapped for a link between the check and the open is refused, not followed.

Decisions (pinned by tests/test_fs_server_attacks.py): only logical paths count, so the root's
real path is FORBIDDEN; a file with more than one hard link is FORBIDDEN (its other name may be
outside the root); a path that changes while it is resolved or opened is NOT_FOUND (or FORBIDDEN
if a link appeared on the way), never an internal error; invisible characters (controls, bidi
such as U+202E) are refused; `\\`, `C:`, `%2e`, fullwidth dots and `~` are plain characters;
whole reads and head/tail are capped.

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
import unicodedata
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from course_lib.arguments import ArgumentsError, ReadTextFileArgs, input_schema, quote, validate_read_args
from course_lib.stdio import serve_stdio

logger = logging.getLogger(__name__)

LOGICAL_ROOT = "/workspace"
TOOL_NAME = "read_text_file"
_BLOCK = 64 * 1024  # tail reads backwards in blocks of this size
MAX_PATH_CHARS = 4096  # longest path text accepted (Linux PATH_MAX)
MAX_NAME_BYTES = 255  # longest single name, in UTF-8 bytes (Linux NAME_MAX)
MAX_WHOLE_FILE_BYTES = 1024 * 1024  # a bigger file is refused whole ("use head or tail"), never loaded
MAX_LINES_BYTES = MAX_WHOLE_FILE_BYTES  # most head/tail may return; they stop reading once past it
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})  # controls, format/bidi, surrogates, separators
_JOINERS = frozenset("\u200c\u200d")  # ZWNJ, ZWJ: format characters that scripts and emoji need in text

TOOL_DESCRIPTION = (
    "Read a UTF-8 text file from the workspace and return its text. "
    "Paths are logical: {root}/notes.txt, or relative to {root} (notes.txt); "
    "nothing outside {root} can be read, not even through a symbolic link. "
    "Optional head: N returns only the first N lines; optional tail: N returns only the last N "
    "lines (N is an integer of at least 1). Give at most one of head and tail: both at once is "
    "refused. A file over 1 MiB is not read whole: ask for its head or tail. Read-only: it never "
    "changes a file."
)
"""Formatted with the workspace's logical root by build_server."""

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Logical path of the file read"},
        "text": {"type": "string", "description": "The text returned"},
        "lines": {"type": "integer", "minimum": 0, "description": "Number of lines returned"},
    },
    "required": ["path", "text", "lines"],
    "additionalProperties": False,
}
"""The shape of a successful result's `structuredContent`, and only that. An error travels as
`isError: true` with the text "CODE: message" and no structured content (`error_result`): the
2025-11-25 spec asks conforming structured results of a tool with an output schema, and its own
tool-error example is text alone; clients skip the check for an error (mcp 1.x and 2.x:
`if not result.isError: validate`; the TypeScript SDK checks structuredContent only when present).
One shape keeps every client's check cheap: mcp 1.x runs `jsonschema.validate` on each result, and
the two-shape `anyOf` (success or error) it had before cost that check 2 to 5 times as much. No
`$schema`: the default 2020-12, the one dialect every client must support (draft-07 would check
faster still in mcp 1.x; benchmarks/README.md, benchmark 1 with an mcp 1.x client)."""


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
        self._root_prefix = str(self.root).rstrip("/") + "/"  # the read path works on strings (fewer Paths)
        self._logical_prefix = str(self.logical_root).rstrip("/") + "/"

    def resolve(self, path: str) -> Path:
        """Map a logical (`/workspace/...`) or relative path to a real regular file inside root.

        Every refusal about *where* the path points comes before anything that would reveal
        whether the file exists.

        Raises:
            ToolFailure: INVALID_INPUT (see check_path_text; a directory, a file named with a
                trailing '/', not a regular file, a link loop), FORBIDDEN (outside the root, by
                `..` or through a symbolic link, or permission denied), NOT_FOUND (no such file,
                or a link on the way removed or replaced while being followed).
        """
        return self.root.joinpath(*self._real_parts(path))

    def _real_parts(self, path: str) -> tuple[str, ...]:
        """resolve() as the components of the real file below the root (no Path built on the way).

        Raises:
            ToolFailure: as resolve().
        """
        check_path_text(path)
        parts = self._inside_parts(PurePosixPath(path))
        shown = quote(self._logical_text(parts))
        mode = None
        if parts:  # the usual case first: every component there, none a link (one lstat each)
            current = self._root_prefix[:-1]
            for index, part in enumerate(parts):
                current = f"{current}/{part}"
                try:
                    info = os.lstat(current)
                except OSError:
                    break  # the full resolution below gives the answer
                if stat.S_ISLNK(info.st_mode) or (index < len(parts) - 1 and not stat.S_ISDIR(info.st_mode)):
                    break
            else:
                mode, real_parts = info.st_mode, tuple(parts)
        if mode is None:  # a link, or something missing: resolve all the way, links followed
            try:
                real = self.root.joinpath(*parts).resolve()  # follows every link, dangling ones too
            except RuntimeError:  # its text would name the real path
                raise ToolFailure("INVALID_INPUT", f"{shown}: cannot be resolved (symbolic link loop)") from None
            except OSError as exc:  # a link removed or replaced while being followed (realpath's readlink)
                raise _os_failure(exc, shown) from None
            # is_relative_to compares components, so <root>_evil is not inside <root>.
            if not real.is_relative_to(self.root):
                raise ToolFailure("FORBIDDEN", f"{shown}: leads outside {self.logical_root} through a symbolic link")
            try:
                mode = real.stat().st_mode
            except OSError as exc:
                raise _os_failure(exc, shown) from None
            real_parts = real.relative_to(self.root).parts
        if stat.S_ISDIR(mode):
            raise ToolFailure("INVALID_INPUT", f"{shown}: is a directory")
        if not stat.S_ISREG(mode):
            raise ToolFailure("INVALID_INPUT", f"{shown}: not a regular file")
        if path.endswith(("/", "/.")):  # PurePosixPath dropped it, but POSIX says "a directory"
            raise ToolFailure("INVALID_INPUT", f"{shown}: is a file, but the path ends with '/'")
        return real_parts

    def _logical_text(self, parts: tuple[str, ...] | list[str]) -> str:
        """The logical path of components below the root, as `logical()` gives it."""
        return self._logical_prefix + "/".join(parts) if parts else str(self.logical_root)

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
            ToolFailure: from resolve(); INVALID_INPUT if what was opened is not a regular file,
                is not UTF-8, or is over MAX_WHOLE_FILE_BYTES (or the lines over MAX_LINES_BYTES);
                FORBIDDEN if it has more than one hard link.
        """
        return self.read(args)[1]

    def read(self, args: ReadTextFileArgs) -> tuple[str, str]:
        """Like read_text_file, but return `(logical path of the file read, text)`.

        Raises:
            ToolFailure: as read_text_file.
        """
        real_parts = self._real_parts(args.path)
        shown = self._logical_text(real_parts)
        named = quote(shown)
        with os.fdopen(self._open_parts(real_parts, named), "rb") as file:
            info = os.fstat(file.fileno())  # what was opened, not what was checked
            if not stat.S_ISREG(info.st_mode):
                raise ToolFailure("INVALID_INPUT", f"{named}: not a regular file")
            if info.st_nlink > 1:  # another name for the same file may be anywhere on the disk
                raise ToolFailure("FORBIDDEN", f"{named}: has {info.st_nlink} hard links, so it may be a file from "
                                               f"outside {self.logical_root}; not read")
            with self._lock:
                self.reads += 1
            if args.head is None and args.tail is None:
                limit, problem = MAX_WHOLE_FILE_BYTES, "file is too large to read whole; use head or tail"
                # Too big: refused unread. Otherwise one byte past the limit shows if it has grown.
                data = file.read(limit + 1) if info.st_size <= limit else None
            else:
                limit, problem = MAX_LINES_BYTES, "the lines asked for are too large; ask for fewer"
                data = _head(file, args.head, limit) if args.head is not None else _tail(file, args.tail, limit)
        if data is None or len(data) > limit:
            raise ToolFailure("INVALID_INPUT", f"{named}: {problem} (limit {limit} bytes)")
        try:
            return shown, data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailure("INVALID_INPUT", f"{named}: not a UTF-8 text file") from None


    def _open_checked(self, real: Path, named: str) -> int:
        """Open the file resolve() checked, refusing anything swapped in since the check.

        Raises:
            ToolFailure: as _open_parts.
        """
        return self._open_parts(real.relative_to(self.root).parts, named)

    def _open_parts(self, parts: tuple[str, ...], named: str) -> int:
        """Open the file at `parts` below the root (as _real_parts gave them), refusing anything
        swapped in since the check.

        `parts` have every link resolved, so no component below the root may be a link now. The
        path is opened one component at a time from the root with O_NOFOLLOW: a folder on the
        way replaced by a symbolic link (to outside the root, say) between the check and the open
        fails the open instead of being followed. O_NONBLOCK keeps a FIFO swapped in for the file
        from hanging the open (read() then refuses it by fstat). Where `os.open` takes no
        `dir_fd` (Windows) only the last component is guarded.

        Raises:
            ToolFailure: FORBIDDEN (a link appeared on the way, or permission denied), NOT_FOUND
                (a component disappeared).
        """
        nofollow, flags = getattr(os, "O_NOFOLLOW", 0), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
        try:
            if os.open not in os.supports_dir_fd:
                return os.open(self.root.joinpath(*parts), flags | nofollow)
            folder = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | nofollow)
            try:
                for part in parts[:-1]:
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=folder)
                    os.close(folder)
                    folder = inner
                return os.open(parts[-1], flags | nofollow, dir_fd=folder)
            finally:
                os.close(folder)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise _os_failure(error, named) from None
            raise ToolFailure("FORBIDDEN", f"{named}: changed while being opened (a symbolic link appeared "
                                           "on the way); not followed") from None


def _os_failure(error: OSError, shown: str) -> ToolFailure | OSError:
    """The ToolFailure for an OSError met while finding or opening `shown`; any other error unchanged.

    A file or link removed or replaced under the read (ENOENT, ENOTDIR, or EINVAL from readlink
    on what is no longer a link; ESTALE on NFS) is NOT_FOUND: it is not there to read.
    """
    if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.EINVAL, getattr(errno, "ESTALE", errno.ENOENT)):
        return ToolFailure("NOT_FOUND", f"{shown}: no such file")
    if error.errno in (errno.EACCES, errno.EPERM):
        return ToolFailure("FORBIDDEN", f"{shown}: permission denied")
    if error.errno == errno.ENAMETOOLONG:
        return ToolFailure("INVALID_INPUT", f"{shown}: name too long")
    if error.errno == errno.ENXIO:  # opening a socket
        return ToolFailure("INVALID_INPUT", f"{shown}: not a regular file")
    return error


def check_path_text(path: Any) -> None:
    """Refuse a path by its text alone, before anything looks at where it points.

    Raises:
        ToolFailure: INVALID_INPUT (empty, NUL, too long, an invisible character, a name too long).
    """
    if not isinstance(path, str) or path == "":
        raise ToolFailure("INVALID_INPUT", "path is empty")
    if "\x00" in path:
        raise ToolFailure("INVALID_INPUT", "path contains a NUL byte")
    if len(path) > MAX_PATH_CHARS:
        raise ToolFailure("INVALID_INPUT", f"path is too long: {len(path)} characters (limit {MAX_PATH_CHARS})")
    for char in "" if path.isascii() and path.isprintable() else path:  # printable ASCII has none
        if unicodedata.category(char) in _INVISIBLE:  # named by code point: echoing it would hide it
            raise ToolFailure("INVALID_INPUT", f"path contains a control or invisible character (U+{ord(char):04X})")
    for name in path.split("/"):
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:  # no surrogates left, so this cannot fail
            raise ToolFailure("INVALID_INPUT", f"{quote(name)}: name too long")


def hidden_character(text: str, *, lines: bool = False) -> str | None:
    """Why `text` cannot be shown as it is, or None: it holds a character a reader cannot see, or
    one that changes how the rest is displayed — NUL and the other controls, bidi controls
    (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C), other invisible format characters
    (U+200B, U+2060, U+FEFF, tag characters), line and paragraph separators, lone surrogates.
    Such text can make an approval panel or an audit table show something other than what is
    stored. `lines`: a multi-line text, so tab, newline and CRLF are allowed; ZWNJ and ZWJ
    (which scripts and emoji need) always are. The character is named by its code point:
    echoing it would hide it again.
    """
    if text.isascii() and text.isprintable():
        return None  # the usual case, in one C-speed pass
    for index, char in enumerate(text):
        if unicodedata.category(char) not in _INVISIBLE or char in _JOINERS:
            continue
        if lines and (char in "\t\n" or (char == "\r" and text[index + 1 : index + 2] == "\n")):
            continue
        kind = "a NUL" if char == "\x00" else "a bidi control" if char in _BIDI_CONTROLS else "a control or invisible character"
        return f"contains {kind} (U+{ord(char):04X}), which a reader would not see"
    return None


_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The characters that reorder or embed text (ALM, LRM, RLM, the embeddings, overrides and isolates)."""


def _head(file: BinaryIO, count: int, limit: int) -> bytes:
    """The first `count` lines, reading no further than needed nor past `limit` + 1 bytes."""
    lines: list[bytes] = []
    size = 0
    while len(lines) < count and size <= limit:
        line = file.readline(limit + 1 - size)  # splits after b"\n", as _split_lines does
        if not line:
            break
        lines.append(line)
        size += len(line)
    return b"".join(lines)  # over `limit` bytes: the caller refuses


def _tail(file: BinaryIO, count: int, limit: int) -> bytes | None:
    """The last `count` lines, reading backwards in blocks; None once they must be over `limit` bytes."""
    position = file.seek(0, os.SEEK_END)
    blocks: list[bytes] = []
    size = starts = 0  # starts: newlines that begin another line (the file's final one does not)
    while position > 0 and starts < count:
        if size > limit:
            return None  # fewer than `count` lines start in what was read: the answer holds all of it
        step = min(_BLOCK, position)
        position -= step
        file.seek(position)
        block = file.read(step)
        starts += block.count(b"\n") - (1 if not blocks and block.endswith(b"\n") else 0)
        blocks.append(block)
        size += len(block)
    lines = _split_lines(b"".join(reversed(blocks)))
    if position > 0:
        lines = lines[1:]  # may start mid-line
    return b"".join(lines[-count:])  # may be over `limit` too: the caller refuses


def _split_lines(data: bytes) -> list[bytes]:
    """Lines ending at b"\\n" (kept), as in _head; a final newline makes no empty last line."""
    # Not bytes.splitlines: it also breaks at a lone b"\r", which _head does not.
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    return lines + [pieces[-1]] if pieces[-1] else lines


def count_lines(text: str) -> int:
    """Number of lines in `text`, where a final newline does not start a new line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def error_result(code: str, message: str) -> types.CallToolResult:
    """A tool failure as the course's servers return it: `isError` and the text "CODE: message"
    (what a model reads), with no structured content: the output schema describes successes only
    (see OUTPUT_SCHEMA). `results.tool_error_code` reads the code back from the text."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{code}: {message}")], is_error=True)


def build_server(workspace: Workspace, name: str = "files") -> Server:
    """A low-level MCP server exposing `read_text_file` over `workspace`."""
    tool = types.Tool(
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION.format(root=workspace.logical_root),
        input_schema=input_schema(),
        output_schema=OUTPUT_SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),  # reads its root only: a closed world
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
            # Inline, not in a worker thread: every read is capped (MAX_WHOLE_FILE_BYTES, and head
            # and tail stop past MAX_LINES_BYTES), so the longest is about a millisecond from the
            # page cache, while the thread hop cost twice a typical read (benchmarks/README.md).
            shown, text = workspace.read(args)
        except (ArgumentsError, ToolFailure) as failure:
            return error_result(failure.code, failure.message)
        except Exception:
            logger.exception("read_text_file failed unexpectedly")  # detail to stderr, not the client
            return error_result("UPSTREAM_ERROR", "the file could not be read (internal error)")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content={"path": shown, "text": text, "lines": count_lines(text)},
        )

    return without_tracing(Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool))


def without_tracing(server: Server) -> Server:
    """Drop the SDK's per-message OpenTelemetry span from `server`, unless `COURSE_OTEL=1`.

    mcp 2.x puts an `OpenTelemetryMiddleware` in every low-level `Server.middleware` ("a no-op until
    an OTel exporter is installed. Drop it from this list to opt out", `mcp/server/lowlevel/server.py`).
    The course exports no traces, yet the span, its attributes and the trace-context extraction
    run for every message: about a sixth of the server's CPU per `tools/call` (benchmarks/README.md,
    benchmark 1). A learner who installs an exporter to watch the spans sets `COURSE_OTEL=1`.
    """
    if os.environ.get("COURSE_OTEL") != "1":
        server.middleware = [m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"]
    return server


def main(argv: list[str] | None = None) -> None:
    """Serve the workspace over stdio until stdin closes; stdout carries only the protocol.

    Raises:
        SystemExit: with status 2 if the arguments are wrong or --root is not a directory.
    """
    parser = argparse.ArgumentParser(prog="python -m course_lib.fs_server", description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=Path, help="real folder shown as /workspace")
    parser.add_argument("--name", default="files", help="server name reported to clients")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    from course_lib import http_transport  # here, so stdio never imports uvicorn

    http_transport.add_http_arguments(parser)
    options = parser.parse_args(argv)
    if not options.root.is_dir():
        parser.error(f"--root must be an existing directory: {options.root}")  # exits 2, on stderr
    logging.basicConfig(level=options.log_level, stream=sys.stderr)  # stdout belongs to the protocol
    if options.http is not None:  # Streamable HTTP instead of stdio (see http_transport.py)
        return http_transport.run_from_arguments(build_server(Workspace(options.root), options.name), parser, options)
    anyio.run(serve_stdio, build_server(Workspace(options.root), options.name))


if __name__ == "__main__":
    main()
