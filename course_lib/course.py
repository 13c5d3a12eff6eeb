"""One call that wires the course together: the model client, the wire capture and the MCP host.

    from course_lib.course import start_course
    course = start_course()                 # prints which backend answers
    result = course.run("Show the first 20 lines of /workspace/notes.txt")
    course.wire.last.request                # the JSON body the openai SDK sent
    course.mcp.exchanges("tools/call")[-1]  # the JSON-RPC request and response that crossed

Every notebook starts here, so each one talks to the same offline model (or the configured real
endpoint) and the same files server. A demo that needs the offline model whatever the keys say
(its gullible persona, a platform that reaches this machine) takes `course.offline_on_purpose(...)`,
which says so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openai import OpenAI

from course_lib.backend import describe_backend, http_transport, make_client, offline_on_purpose_line
from course_lib.connection import McpConnection
from course_lib.fs_server import Workspace, build_server
from course_lib.host import McpHost
from course_lib.loop import LoopResult, run_loop
from course_lib.paths import workspace_dir
from course_lib.wire import HttpCapture


@dataclass
class Course:
    """The pieces a notebook works with."""

    client: OpenAI
    wire: HttpCapture
    host: McpHost
    workspace: Workspace  # the files server's sandbox; `workspace.reads` counts real file reads
    owns_host: bool = True  # False for a view on another course's host (`offline_on_purpose`)

    @property
    def mcp(self) -> McpConnection:
        """The connection to the files server (prefix `fs`)."""
        return self.host.connections["fs"]

    def run(self, task: str | list[dict[str, Any]], **options: Any) -> LoopResult:
        """Run the whole loop for `task`; options go to `loop.run_loop` (max_steps, tool_choice, strict...)."""
        return run_loop(self.client, self.host, task, **options)

    def offline_on_purpose(self, why_en: str, why_zh: str) -> Course:
        """This course with the offline model answering, for a demo that needs a behaviour only the
        offline model has (the gullible persona, a platform that reaches a server on this machine, …),
        even when a key is set. Prints one line that says so and why (`backend.offline_on_purpose_line`).
        The same host and workspace; a client and a wire of its own (`demo.wire` records only the
        demo's requests). Closing it closes only its client.

            demo = course.offline_on_purpose("only the offline model has a gullible mode.",
                                             "只有离线模型才有“轻信”模式。")
            demo.client.responses.create(...)    # or demo.run(task), run_guarded_loop(demo.client, ...)
        """
        from course_lib.offline_model import offline_transport

        print(offline_on_purpose_line(why_en, why_zh))
        wire = HttpCapture(offline_transport())
        return Course(client=make_client(wire, offline=True), wire=wire, host=self.host, workspace=self.workspace,
                      owns_host=False)

    def close(self) -> None:
        if self.owns_host:
            self.host.close()
        self.client.close()


def start_course(workspace: Path | None = None, *, quiet: bool = False) -> Course:
    """Connect everything: a client on the configured backend with its wire captured, and a host
    with the files server over `workspace` (default: the course's `fixtures/workspace`)."""
    if not quiet:
        print(describe_backend())
    wire = HttpCapture(http_transport())
    sandbox = Workspace(workspace or workspace_dir())
    host = McpHost()
    host.add_server("fs", build_server(sandbox))
    return Course(client=make_client(transport=wire), wire=wire, host=host, workspace=sandbox)
