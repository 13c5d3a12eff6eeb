"""The bench the frameworks run on: the offline model and the files server, each behind a tap.

    with Bench() as bench:
        bench.model_url                      # http://127.0.0.1:PORT/v1: the offline model over real HTTP
        files = bench.files_stdio()          # how to start the files server over stdio (command, args)
        url = bench.files_http()             # or its Streamable HTTP endpoint
        with bench.run("Agents SDK") as run:
            ...                              # the framework's own code, pointed at those
        run.model, run.mcp                   # what crossed: HTTP bodies, JSON-RPC messages

Nothing here drives a framework: each framework makes its own clients, in its own way, as a learner
would write it. The bench only starts the parts and records the wire between them:

- the offline model is the real local server (`python -m course_lib.offline_model --port 0`): one
  process for the bench's life, so its ids are fresh for every request and the same in every run
  of the same requests (it counts them); an `HttpTap` in front of it keeps every request and response;
- the files server (`python -m course_lib.fs_server`) is started by the framework itself over
  stdio, through `stdio_tap` (each line it exchanges logged), or by the bench over Streamable HTTP
  (`--http 127.0.0.1:0`) with a tap in front.

`run(label)` collects what crossed while its block ran into a `Run`. No key, no network: every
address is 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import openai

from course_lib.connection import McpConnection, WireMessage
from course_lib.frameworks.http_tap import HttpTap
from course_lib.paths import workspace_dir
from course_lib.wire import HttpExchange

if TYPE_CHECKING:
    from course_lib.host import McpHost

_START_TIMEOUT = 30.0  # seconds a server may take to say where it listens (a busy machine)


class BenchError(RuntimeError):
    """A part of the bench did not start; the message says which and what it printed."""


@dataclass
class Run:
    """What crossed while one framework ran: the model's HTTP exchanges and the MCP messages
    (`connection.WireMessage`: a direction, `app→server` or `server→app`, and the JSON)."""

    label: str
    model: list[HttpExchange] = field(default_factory=list)
    mcp: list[WireMessage] = field(default_factory=list)
    http: list[HttpExchange] = field(default_factory=list)  # MCP over Streamable HTTP, as the exchanges crossed
    # When each crossed (wall clock, seconds), where the taps know it: (request, response end) per model
    # exchange, one time per MCP message; empty when not known (the course host's in-process messages).
    model_times: list[tuple[float, float]] = field(default_factory=list)
    mcp_times: list[float | None] = field(default_factory=list)


@dataclass(frozen=True)
class StdioServer:
    """How a framework starts the files server over stdio (through the tap): command, args, cwd;
    `log` gets the JSON-RPC lines, `errors` is a file for the server's stderr (give it to the
    framework when it takes one: fastmcp's `log_file`, `agents_sdk.LoggedMCPServerStdio`'s `errlog`)."""

    command: str
    args: list[str]
    cwd: str
    log: Path
    errors: Path

    def params(self) -> dict[str, Any]:
        """The dict the Agents SDK's `MCPServerStdio(params=…)` takes."""
        return {"command": self.command, "args": self.args, "cwd": self.cwd}


class Bench:
    """The offline model behind a tap, and the files servers the frameworks call (see the module docstring)."""

    def __init__(self, workspace: Path | None = None) -> None:
        self.workspace = Path(workspace or workspace_dir()).resolve()
        self._dir = Path(tempfile.mkdtemp(prefix="course-bench-"))
        self._processes: list[subprocess.Popen] = []
        self._taps: list[HttpTap] = []
        self._logs: list[Path] = []
        self._mcp_taps: list[HttpTap] = []
        self._connections: list[McpConnection] = []
        self._closing: list[Any] = []
        self.model_tap: HttpTap | None = None

    # -- starting and stopping ------------------------------------------------------------------------

    def start(self) -> Bench:
        """Start the offline model server and its tap.

        Raises:
            BenchError: the offline model did not start.
        """
        try:
            port = self._serve([sys.executable, "-m", "course_lib.offline_model", "--port", "0"], "offline-model",
                               r"http://127\.0\.0\.1:(\d+)/v1")  # fmt: skip
            self.model_tap = self._tap(f"http://127.0.0.1:{port}")
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop every process and tap the bench started, and remove its logs (idempotent)."""
        for thing in reversed(self._closing):
            thing.close()
        self._closing.clear()
        for tap in self._taps:
            tap.close()
        for process in self._processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self._taps.clear()
        self._processes.clear()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Bench:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the parts ------------------------------------------------------------------------------------

    @property
    def model_url(self) -> str:
        """The offline model's base URL, through the tap (`OPENAI_BASE_URL` for any client).

        Raises:
            BenchError: the bench is not started.
        """
        if self.model_tap is None:
            raise BenchError("the bench is not started: use `with Bench() as bench:`")
        return self.model_tap.url + "/v1"

    def server_command(self, name: str = "files", *, traced_to: str | None = None) -> list[str]:
        """The files server's own command line (stdio), over the bench's workspace; with `traced_to`
        (a recording's OTLP endpoint), run through `course_lib.tracing.serve`, its spans sent there."""
        server = ["course_lib.fs_server", "--root", str(self.workspace), "--name", name]
        if traced_to is not None:
            return [sys.executable, "-m", "course_lib.tracing.serve", traced_to, f"{name}-server", *server]
        return [sys.executable, "-m", *server]

    def files_stdio(self, name: str = "files", *, traced_to: str | None = None) -> StdioServer:
        """How to start the files server over stdio with its lines logged: give it to a framework.
        `traced_to`: a recording's endpoint (`tracing.recording().endpoint`) for the server's spans."""
        log = self._dir / f"stdio-{len(self._logs)}.jsonl"
        log.touch()
        self._logs.append(log)
        command = self.server_command(name, traced_to=traced_to)
        tap = [sys.executable, "-m", "course_lib.frameworks.stdio_tap", str(log), "--", *command]
        return StdioServer(tap[0], tap[1:], str(self.workspace), log, log.with_suffix(".stderr"))

    def files_http(self, name: str = "files") -> str:
        """Start the files server over Streamable HTTP, behind a tap; its MCP endpoint URL.

        Raises:
            BenchError: the server did not start.
        """
        port = self._serve([*self.server_command(name), "--http", "127.0.0.1:0"], f"files-http-{len(self._mcp_taps)}",
                           r"http://127\.0\.0\.1:(\d+)/mcp")  # fmt: skip
        tap = self._tap(f"http://127.0.0.1:{port}")
        self._mcp_taps.append(tap)
        return tap.url + "/mcp"

    def openai_client(self) -> openai.OpenAI:
        """An openai client on the bench's offline model (through the tap): no key, no retries."""
        client = openai.OpenAI(base_url=self.model_url, api_key="offline", max_retries=0,
                               http_client=httpx.Client(timeout=60))  # fmt: skip
        self._closing.append(client)
        return client

    def course_host(self) -> McpHost:
        """The course's own host (`host.McpHost`) with the files server in-process under `fs`, its
        JSON-RPC messages recorded into the runs like a framework's."""
        from course_lib.fs_server import Workspace, build_server
        from course_lib.host import McpHost

        host = McpHost()
        self._closing.append(host)
        host.add_server("fs", build_server(Workspace(self.workspace)))
        self._connections.append(host.connections["fs"])
        return host

    # -- recording ----------------------------------------------------------------------------------

    @contextmanager
    def run(self, label: str) -> Iterator[Run]:
        """Collect what crosses while the block runs into the `Run` it yields (filled in at the end).

        Raises:
            BenchError: the bench is not started.
        """
        if self.model_tap is None:
            raise BenchError("the bench is not started: use `with Bench() as bench:`")
        model_from = len(self.model_tap.exchanges)
        logs_from = {log: _line_count(log) for log in self._logs}
        taps_from = {id(tap): len(tap.exchanges) for tap in self._mcp_taps}
        connections_from = {id(c): len(c.messages) for c in self._connections}
        run = Run(label)
        try:
            yield run
        finally:
            run.model = list(self.model_tap.exchanges[model_from:])
            run.model_times = list(self.model_tap.times[model_from:])
            timed = [entry for log in self._logs for entry in _stdio_messages(log, logs_from.get(log, 0))]
            run.mcp = [message for message, _ in timed]
            run.mcp_times = [when for _, when in timed]
            for tap in self._mcp_taps:
                run.http += tap.exchanges[taps_from.get(id(tap), 0):]
                messages = _http_messages(tap.exchanges[taps_from.get(id(tap), 0):])
                run.mcp += messages
                run.mcp_times += [None] * len(messages)
            for connection in self._connections:
                messages = connection.messages[connections_from.get(id(connection), 0):]
                run.mcp += messages
                run.mcp_times += [None] * len(messages)

    # -- internals ---------------------------------------------------------------------------------

    def _tap(self, upstream: str) -> HttpTap:
        tap = HttpTap(upstream).start()
        self._taps.append(tap)
        return tap

    def _serve(self, command: list[str], label: str, listening: str) -> int:
        """Start `command` (its stderr to a log), wait for the line that says where it listens; the port."""
        errors = self._dir / f"{label}.stderr"
        with errors.open("wb") as sink:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
                                       cwd=self.workspace)  # fmt: skip
        self._processes.append(process)
        deadline, text = time.monotonic() + _START_TIMEOUT, ""
        while time.monotonic() < deadline:
            text = errors.read_text(encoding="utf-8", errors="replace")
            if found := re.search(listening, text):
                return int(found.group(1))
            if process.poll() is not None:
                break
            time.sleep(0.05)
        raise BenchError(f"{label} did not start (exit status {process.poll()}); it printed:\n{text[-2000:]}")


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _stdio_messages(log: Path, skip: int) -> list[tuple[WireMessage, float | None]]:
    """The JSON-RPC messages of a stdio tap's log, each with when it crossed."""
    messages = []
    for line in log.read_text(encoding="utf-8").splitlines()[skip:]:
        entry = json.loads(line)
        try:
            value = json.loads(entry["line"])
        except ValueError:
            continue  # not JSON: not a message (a server that prints on stdout by mistake)
        if isinstance(value, dict):
            messages.append((WireMessage("app→server" if entry["from"] == "app" else "server→app", value), entry.get("t")))
    return messages


def _http_messages(exchanges: list[HttpExchange]) -> list[WireMessage]:
    """JSON-RPC messages of Streamable HTTP exchanges: each POST body, then what came back (JSON or events)."""
    messages = []
    for exchange in exchanges:
        if isinstance(exchange.request, dict):
            messages.append(WireMessage("app→server", exchange.request))
        for value in _sse_or_json(exchange.response):
            if isinstance(value, dict) and "jsonrpc" in value:
                messages.append(WireMessage("server→app", value))
    return messages


def _sse_or_json(body: Any) -> list[Any]:
    if isinstance(body, str):  # an event stream: the JSON of each `data:` line
        values = []
        for line in body.splitlines():
            if line.startswith("data:"):
                try:
                    values.append(json.loads(line[5:]))
                except ValueError:
                    pass
        return values
    return [body] if body is not None else []
