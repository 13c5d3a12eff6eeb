"""Serve a low-level MCP server over stdin/stdout, with the pipes read and written by the event loop.

The course's two servers (`fs_server`, `notes_server`) run over stdio for outside hosts. The MCP
SDK's `stdio_server()` wraps stdin and stdout in `anyio.wrap_file`, so every message costs
worker-thread hops for `readline`, `write` and `flush`: measured in `benchmarks/` (benchmark 1),
that transport alone made our files server 1.6x slower per call than the Node reference server.

`serve_stdio` hands `stdio_server` its own two streams instead (an explicit-streams call, part of
the SDK's public signature), reading fd 0 and writing fd 1 through asyncio pipe transports. It
first does what the SDK does for its own streams: the protocol gets private duplicates of fd 0
and fd 1, and while serving fd 0 reads the null device and fd 1 goes to stderr, so a stray
`print()` or `input()` in a handler cannot corrupt or steal the protocol. Both are restored on
exit.

The fast path needs asyncio on POSIX with stdin and stdout both pipes or sockets, which is how
every MCP host starts a server. Anything else (Windows, trio, a terminal, a file redirect) gets the
portable path: the same private duplicates, read and written by worker threads as the SDK's own
transport does (`anyio.wrap_file`), with the same check of every line. `COURSE_STDIO=threads`
forces the portable path (tests run the frame table through both).

Every frame is answered as JSON-RPC 2.0 and MCP say (`course_lib.frames.check_frame`): the SDK
drops a line it cannot parse (it logs it at DEBUG and the sender waits forever), so on both paths
each line is checked first as bytes, and a malformed one is answered here (-32700, -32600 or
-32602, as a `JSONRPCError`) and never forwarded. A malformed notification or response gets no
answer, as the spec says, but a line on stderr. `_Answering` answers from the SDK's own parse
error should the two ever disagree. tests/frame_table.py holds the table of cases (run over stdio
by tests/test_stdio_frames.py, over HTTP by tests/test_http_frames.py).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import stat
import sys
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pydantic
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR

from course_lib.frames import Verdict, check_frame, check_value, error, valid_id

logger = logging.getLogger(__name__)

_LINE_LIMIT = 64 * 1024 * 1024  # longest message line accepted (a 1 MiB file is ~1.1 MiB of JSON)


async def serve_stdio(server: Server) -> None:
    """Run `server` on this process's stdin/stdout until stdin closes."""
    async with _pipe_streams() as streams, stdio_server(*streams) as (read_stream, write_stream):
        await server.run(_Answering(read_stream, write_stream), write_stream, server.create_initialization_options())


def fast_path_available() -> bool:
    """True when `serve_stdio` would use the event-loop pipes rather than worker threads."""
    if sys.platform == "win32" or os.environ.get("COURSE_STDIO") == "threads":
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio), or not in a loop at all
        return False
    return all(_is_pipe_or_socket(fd) for fd in (0, 1))


def _is_pipe_or_socket(fd: int) -> bool:
    # A terminal or a regular file is left to the SDK: asyncio's pipe transports refuse files, and
    # making a shared terminal non-blocking would outlive this process in the user's shell.
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


# --- Every frame answered -------------------------------------------------------------------
# The SDK's stdio transport hands a line it cannot validate to the session as an exception, and
# the session only logs it at DEBUG level (mcp/shared/jsonrpc_dispatcher.py, `_dispatch`): the
# sender of a malformed request never hears back. So each line is judged first by
# `course_lib.frames.check_frame`, the same check the HTTP transport makes of each POST body.


def _log_refusal(verdict: Verdict) -> None:
    """A malformed notification or response gets no answer (JSON-RPC): a line on stderr instead."""
    if verdict.refusal is not None:
        logger.warning("stdio: not answered (JSON-RPC answers no notification or response): %s",
                       verdict.refusal.error.message[:300])


async def _report(verdict: Verdict, writer: _Writer | _ThreadWriter) -> None:
    _log_refusal(verdict)
    for answer in verdict.answers:
        logger.info("stdio: answered a malformed message: %s", answer.error.message)
        await writer.write(answer.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
        await writer.flush()


class _Answering:
    """The session's read stream, answering what the SDK's transport could not parse.

    The SDK's `stdio_server` puts a line it cannot validate on the stream as its pydantic
    `ValidationError`, whose errors carry the frame (or, for broken JSON, the text). `check_frame`
    has answered those already on both paths, so this only catches a disagreement between the
    two parsers (a later SDK that is stricter than `check_frame`).
    """

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the dispatcher restores the sender's context from it
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            verdict = _verdict_for(item)
            _log_refusal(verdict)
            for answer in verdict.answers:
                logger.info("stdio: answered a malformed message: %s", answer.error.message)
                try:
                    await self._write.send(SessionMessage(answer))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the session is closing
                    logger.warning("stdio: could not answer a malformed message (%s): closing", answer.error.message)

    def __aiter__(self) -> _Answering:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Answering:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


_UNKNOWN = object()


def _verdict_for(refused: Exception) -> Verdict:
    """What to answer for a line the SDK's transport refused, from its `ValidationError`."""
    errors = refused.errors() if isinstance(refused, pydantic.ValidationError) else []
    frame: Any = _UNKNOWN
    for problem in errors:
        if problem["type"] == "json_invalid":
            return Verdict(answers=(error(None, PARSE_ERROR, f"Parse error: {problem['msg']}"),))
        if len(problem["loc"]) == 1 or problem["type"] == "missing":  # these carry the whole frame
            frame = problem["input"]
            break
    if frame is _UNKNOWN:
        return Verdict(refusal=error(None, INVALID_REQUEST, f"the transport refused a message: {refused!r}"[:500]))
    verdict = check_value(frame)
    if not verdict.forward:
        return verdict
    # Valid by check_value's rules, yet the SDK refused it: answer a request, log anything else.
    reason = f"Invalid Request: {errors[0]['msg'] if errors else refused}"[:200]
    if isinstance(frame, dict) and "method" in frame and valid_id(frame.get("id")):
        return Verdict(answers=(error(frame["id"], INVALID_REQUEST, reason),))
    return Verdict(refusal=error(None, INVALID_REQUEST, reason))


class _Lines:
    """`async for line in ...` over the protocol's stdin, as `stdio_server` reads its own, but every
    line is checked first (`check_frame`): a malformed one is answered here and never forwarded.
    Subclasses say how the next line is read."""

    def __init__(self, writer: _Writer | _ThreadWriter) -> None:
        self._writer = writer

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._readline()
            if line is None:
                verdict = Verdict(answers=(error(None, PARSE_ERROR, f"Parse error: a message line over "
                                                                   f"{_LINE_LIMIT} bytes was not read"),))
            else:
                verdict = check_frame(line)
            if verdict.forward:
                return line.decode("utf-8")  # check_frame parsed it, so it is UTF-8
            await _report(verdict, self._writer)

    async def _readline(self) -> bytes | None:
        """The next line; None for one over _LINE_LIMIT (skipped through its newline).

        Raises:
            StopAsyncIteration: at the end of stdin.
        """
        raise NotImplementedError


class _PipeLines(_Lines):
    """Lines from an asyncio pipe transport (the fast path)."""

    def __init__(self, reader: asyncio.StreamReader, writer: _Writer) -> None:
        super().__init__(writer)
        self._reader = reader

    async def _readline(self) -> bytes | None:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:  # the end of stdin; maybe a last line without "\n"
            if not end.partial:
                raise StopAsyncIteration from None
            return end.partial
        except asyncio.LimitOverrunError as over:
            while True:  # drop what is buffered of the line, then the rest of it as it comes
                await self._reader.readexactly(over.consumed)
                try:
                    await self._reader.readuntil(b"\n")
                    return None
                except asyncio.IncompleteReadError:
                    return None
                except asyncio.LimitOverrunError as more:
                    over = more
        return line


class _ThreadLines(_Lines):
    """Lines from a binary file read by worker threads (the portable path)."""

    def __init__(self, stdin: typing.BinaryIO, writer: _ThreadWriter) -> None:
        super().__init__(writer)
        self._stdin = stdin

    async def _readline(self) -> bytes | None:
        # abandon_on_cancel: a stop (Ctrl-C, the host cancelling) does not wait for the next line;
        # the thread may stay blocked on the descriptor, which is why it is never closed (closefd=False).
        line = await anyio.to_thread.run_sync(self._stdin.readline, _LINE_LIMIT + 1, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        if len(line) <= _LINE_LIMIT or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):  # drop the rest of the overlong line, a piece at a time
            line = await anyio.to_thread.run_sync(self._stdin.readline, 1024 * 1024, abandon_on_cancel=True)
        return None


class _Writer(asyncio.Protocol):
    """`await write(text)` / `await flush()` on the protocol's stdout; `flush` returns once every
    byte is in the pipe (the transport's write-buffer limits are 0, so any backlog pauses us)."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._drained = asyncio.Event()
        self._drained.set()
        self._lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._transport.set_write_buffer_limits(high=0)

    def pause_writing(self) -> None:
        self._drained.clear()

    def resume_writing(self) -> None:
        self._drained.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = exc or BrokenPipeError("stdout closed")
        self._drained.set()

    async def write(self, text: str) -> None:
        if self._lost is not None:
            raise self._lost
        self._transport.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._drained.wait()
        if self._lost is not None:
            raise self._lost


class _ThreadWriter:
    """`await write(text)` / `await flush()` on a text file by worker threads, one at a time: the
    session's writer and the checker's answers never interleave inside a line."""

    def __init__(self, stdout: anyio.AsyncFile[str]) -> None:
        self._stdout = stdout
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._stdout.write(text)

    async def flush(self) -> None:
        async with self._lock:
            await self._stdout.flush()


@asynccontextmanager
async def _pipe_streams() -> AsyncIterator[tuple[Any, Any]]:
    """Yield `(stdin, stdout)` for `stdio_server`: event-loop pipes, or worker threads on the same
    private duplicates where pipes cannot be used.

    Raises:
        OSError: fd 0 or fd 1 is not open (there is no stdio to serve).
    """
    fast = fast_path_available()  # asked before the claim moves fd 0 and fd 1
    sys.stdout.flush()  # anything printed before serving belongs before the protocol
    wire_in, wire_out = _claim(0, os.O_RDONLY), _claim(1, os.O_WRONLY)
    try:
        if fast:
            logger.debug("stdio: event-loop pipes")
            async with _event_loop_streams(wire_in, wire_out) as streams:
                yield streams
        else:
            logger.debug("stdio: worker-thread stdin/stdout, every line checked")
            stdin = os.fdopen(wire_in, "rb", closefd=False)
            stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire_out, "wb", closefd=False), encoding="utf-8"))
            writer = _ThreadWriter(stdout)
            yield _ThreadLines(stdin, writer), writer
    finally:
        sys.stdout.flush()  # a stray print still in Python's buffer goes to stderr, with the others
        _release(0, wire_in)
        _release(1, wire_out)


@asynccontextmanager
async def _event_loop_streams(wire_in: int, wire_out: int) -> AsyncIterator[tuple[Any, Any]]:
    loop = asyncio.get_running_loop()
    read_transport = write_transport = None
    try:
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0, closefd=False))
        write_transport, writer = await loop.connect_write_pipe(
            _Writer, os.fdopen(wire_out, "wb", buffering=0, closefd=False))
        yield _PipeLines(reader, writer), writer
    finally:
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.close()


def _claim(fd: int, mode: int) -> int:
    """Move the protocol off `fd` to a private duplicate; point `fd` at stderr (1) or /dev/null (0)."""
    if sys.platform == "win32":  # no fcntl; a duplicate there is not inherited by children anyway
        private = os.dup(fd)
    else:
        import fcntl

        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    diversion = os.dup(2) if fd == 1 else os.open(os.devnull, mode)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


def _release(fd: int, private: int) -> None:
    """Put the protocol's descriptor back on `fd`, blocking again as it was."""
    if sys.platform != "win32":  # only the POSIX fast path makes it non-blocking
        os.set_blocking(private, True)
    os.dup2(private, fd)
    os.close(private)
