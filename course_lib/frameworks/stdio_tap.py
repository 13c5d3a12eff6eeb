"""A stdio MCP server with every JSON-RPC line it exchanges written to a log, for hosts we do not own.

    python -m course_lib.frameworks.stdio_tap LOG -- python -m course_lib.fs_server --root fixtures/workspace

A framework (the Agents SDK's `MCPServerStdio`, pydantic-ai's `MCPToolset`, Mastra's `MCPClient`)
starts this command in place of the server. It starts the server itself on pipes and passes every
line through unchanged, byte for byte, in both directions; each line is also appended to LOG as
one JSON object, `{"from": "app" | "server", "line": "<the line as it crossed>", "t": <when>}`, flushed at once,
so the log holds the JSON-RPC messages in the order they crossed. The server's stderr is the tap's
stderr; when the app closes stdin the server's stdin is closed too, and the tap exits with the
server's exit status.

Only the standard library is imported: the tap adds a few milliseconds to a server's start.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import IO


def _relay(source: IO[bytes], sink: IO[bytes], side: str, log: IO[str], lock: threading.Lock) -> None:
    """Copy `source` to `sink` line by line, logging each line; close `sink` at the end of `source`."""
    try:
        for line in iter(source.readline, b""):
            with lock:  # one log line per message, never two interleaved
                log.write(json.dumps({"from": side, "line": line.decode("utf-8", "replace").rstrip("\r\n"), "t": time.time()}) + "\n")
                log.flush()
            try:
                sink.write(line)
                sink.flush()
            except (BrokenPipeError, ValueError):  # the other side went away: nothing more to deliver
                break
    finally:
        try:
            sink.close()
        except (BrokenPipeError, OSError):
            pass


def main(argv: list[str] | None = None) -> int:
    """`python -m course_lib.frameworks.stdio_tap LOG -- COMMAND…`: run COMMAND, logging its stdio lines to LOG."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m course_lib.frameworks.stdio_tap LOG -- COMMAND [ARG…]", file=sys.stderr)
        return 2
    log_path, command = args[0], args[2:]
    with open(log_path, "a", encoding="utf-8") as log:
        try:
            server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as error:
            print(f"stdio_tap: cannot start {command[0]!r}: {error}", file=sys.stderr)
            return 127
        lock = threading.Lock()
        to_server = threading.Thread(target=_relay, args=(sys.stdin.buffer, server.stdin, "app", log, lock), daemon=True)
        to_server.start()
        _relay(server.stdout, sys.stdout.buffer, "server", log, lock)  # until the server closes its stdout
        return server.wait()


if __name__ == "__main__":
    sys.exit(main())
