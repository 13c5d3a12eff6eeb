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
every MCP host starts a server. Anything else (Windows, trio, a terminal, a file redirect) gets
the SDK's own transport unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import Server
from mcp.server.stdio import stdio_server

logger = logging.getLogger(__name__)

_LINE_LIMIT = 64 * 1024 * 1024  # longest message line accepted (a 1 MiB file is ~1.1 MiB of JSON)


async def serve_stdio(server: Server) -> None:
    """Run `server` on this process's stdin/stdout until stdin closes."""
    async with _pipe_streams() as streams, stdio_server(*streams) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def fast_path_available() -> bool:
    """True when `serve_stdio` would use the event-loop pipes rather than the SDK's threads."""
    if sys.platform == "win32":
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


class _Lines:
    """`async for line in ...` over the protocol's stdin, as `stdio_server` reads its own."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readline()
        except ValueError:  # over _LINE_LIMIT: dropped, and reported like any line that is not JSON
            return "(a message line over the size limit was dropped)\n"
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


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


@asynccontextmanager
async def _pipe_streams() -> AsyncIterator[tuple[Any, Any]]:
    """Yield `(stdin, stdout)` for `stdio_server`: event-loop pipes, or `(None, None)` for the SDK's."""
    if not fast_path_available():
        logger.debug("stdio: the SDK's thread-wrapped stdin/stdout")
        yield None, None
        return
    logger.debug("stdio: event-loop pipes")
    loop = asyncio.get_running_loop()
    sys.stdout.flush()  # anything printed before serving belongs before the protocol
    wire_in, wire_out = _claim(0, os.O_RDONLY), _claim(1, os.O_WRONLY)
    read_transport = write_transport = None
    try:
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0, closefd=False))
        write_transport, writer = await loop.connect_write_pipe(
            _Writer, os.fdopen(wire_out, "wb", buffering=0, closefd=False))
        yield _Lines(reader), writer
    finally:
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.close()
        sys.stdout.flush()  # a stray print still in Python's buffer goes to stderr, with the others
        _release(0, wire_in)
        _release(1, wire_out)


def _claim(fd: int, mode: int) -> int:
    """Move the protocol off `fd` to a private duplicate; point `fd` at stderr (1) or /dev/null (0)."""
    import fcntl  # POSIX only, like this whole path

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    diversion = os.dup(2) if fd == 1 else os.open(os.devnull, mode)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


def _release(fd: int, private: int) -> None:
    """Put the protocol's descriptor back on `fd`, blocking again as it was."""
    os.set_blocking(private, True)  # the pipe transports made it non-blocking
    os.dup2(private, fd)
    os.close(private)
