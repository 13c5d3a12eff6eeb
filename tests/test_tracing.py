"""course_lib.tracing: off unless asked, kept on this machine, named as the OpenTelemetry conventions say,
and the call_id ⇄ JSON-RPC id link read from the span tree.

The frameworks' traces are in tests/test_frameworks_traced.py; the viewer in tests/test_tracing_viewer.py.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from course_lib import tracing
from course_lib.course import start_course
from course_lib.loop import run_loop
from course_lib.paths import workspace_dir
from course_lib.tracing.collector import Collector, decode
from course_lib.tracing.otlp import post, to_otlp_json, to_otlp_proto
from course_lib.tracing.records import SpanRecord, from_otlp_json
from tests.conftest import reset_connections

READ = "Show the first 5 lines of /workspace/notes.txt"
REFUSED = "Show the first 5 lines of /etc/passwd"
TWO = "Show the first 3 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"


@pytest.fixture(scope="module")
def course():
    started = start_course(quiet=True)
    yield started
    started.close()


@pytest.fixture(scope="module")
def traced(course):
    """The course's loop on a read, a refused read and two reads in one response, traced."""
    with tracing.recording() as trace:
        results = [run_loop(course.client, course.host, task) for task in (READ, REFUSED, TWO)]
    return trace.spans, results


def test_tracing_is_off_until_asked_and_off_again_after(course):
    from opentelemetry import trace

    span = trace.get_tracer("a library").start_span("made outside a recording")
    assert not span.is_recording() and not span.get_span_context().is_valid  # the API's no-op span
    with tracing.recording() as kept:
        run_loop(course.client, course.host, READ)
    run_loop(course.client, course.host, READ)  # after the block: nothing recorded, nothing sent
    after = [m.json for m in course.mcp.messages if m.json.get("method") == "tools/call"][-1]
    assert "_meta" not in after["params"]  # no traceparent put into the request
    inside = [m.json for m in course.mcp.messages if m.json.get("method") == "tools/call"][-2]
    assert "traceparent" in inside["params"]["_meta"]  # while recording, the mcp client sent its context
    assert len([s for s in kept.spans if s.name.startswith("execute_tool")]) == 1


def test_the_host_s_spans_are_named_and_filled_as_the_genai_conventions_say(traced):
    spans, _ = traced
    agents = [s for s in spans if s.name == "invoke_agent run_loop"]
    assert len(agents) == 3 and all(s.kind == "INTERNAL" and s.get("gen_ai.operation.name") == "invoke_agent" for s in agents)
    chat = next(s for s in spans if s.name == "chat gpt-4.1")
    assert chat.kind == "CLIENT" and chat.get("gen_ai.provider.name") == "openai" and chat.get("openai.api.type") == "responses"
    assert chat.get("gen_ai.request.model") == "gpt-4.1" and chat.get("gen_ai.response.id").startswith("resp_")
    assert chat.parent_id in {s.span_id for s in agents}
    tools = [s for s in spans if s.name == "execute_tool fs__read_text_file"]
    assert len(tools) == 4 and all(s.kind == "INTERNAL" and s.get("gen_ai.tool.type") == "function" for s in tools)
    refused = [s for s in tools if s.status == "ERROR"]
    assert [s.get("error.type") for s in refused] == ["FORBIDDEN"]  # the code the host fed back


def test_the_tree_links_each_call_id_to_the_json_rpc_id_the_host_kept(traced):
    spans, results = traced
    kept = {link.call_id: str(link.mcp_id) for result in results for link in result.trace}
    assert tracing.links(spans) == kept and len(kept) == 4
    for link in tracing.call_links(spans):  # the mcp SDK's own client span, the tool span's child
        assert link.mcp_span.kind == "CLIENT" and link.mcp_span.parent_id == link.tool_span.span_id
        assert link.mcp_span.name == "MCP send tools/call read_text_file"


def test_a_tree_without_its_mcp_spans_links_nothing_and_says_so(traced, capsys, en):
    spans, _ = traced
    cut = [s for s in spans if s.get("mcp.method.name") != "tools/call"]
    assert tracing.links(cut) == {}
    tracing.show_links(cut)
    assert "→ no tools/call span under it" in capsys.readouterr().out
    tracing.show_tree([])
    assert "(no spans: was tracing on?)" in capsys.readouterr().out


def test_the_tree_prints_no_random_id(traced):
    spans, _ = traced
    printed = "\n".join(tracing.tree_lines(spans))
    assert all(s.span_id not in printed and s.trace_id not in printed for s in spans)
    assert "  execute_tool fs__read_text_file (INTERNAL, course) · gen_ai.tool.call.id call_" in printed


# ---- OTLP: records out and back, the receiver ------------------------------------------------------


def test_records_survive_otlp_json_and_protobuf(traced):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from course_lib.tracing.records import from_otlp_proto

    spans, _ = traced
    assert from_otlp_json(json.loads(json.dumps(to_otlp_json(spans)))) == list(spans)
    request = ExportTraceServiceRequest()
    request.ParseFromString(to_otlp_proto(spans))
    assert from_otlp_proto(request) == list(spans)


def test_the_receiver_takes_json_protobuf_and_gzip_and_refuses_the_rest(traced):
    spans, _ = traced
    got: list[SpanRecord] = []
    with_collector = Collector(got.extend).start()
    try:
        assert post(spans[:3], with_collector.url) == 200
        assert post(spans[3:6], with_collector.url, protobuf=True) == 200
        body = gzip.compress(json.dumps(to_otlp_json(spans[6:7])).encode())
        request = urllib.request.Request(with_collector.url + "/v1/traces", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        assert got == list(spans[:7])
        for content_type, data, status in (("text/plain", b"x", 415), ("application/x-protobuf", b"\xff\xff", 400),
                                           ("application/json", b"[1]", 400)):  # fmt: skip
            refused = urllib.request.Request(with_collector.url + "/v1/traces", data=data, method="POST",
                                             headers={"Content-Type": content_type})
            with pytest.raises(urllib.error.HTTPError) as error:
                urllib.request.urlopen(refused, timeout=10)
            error.value.close()
            assert error.value.code == status
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(urllib.request.Request(with_collector.url + "/v1/logs", data=b"{}", method="POST"), timeout=10)
        error.value.close()
        assert error.value.code == 404
    finally:
        with_collector.close()
    with pytest.raises(LookupError):
        decode(b"", "text/html")


def test_the_receiver_stays_quiet_when_a_sender_vanishes_and_keeps_receiving(traced, capfd):
    spans, _ = traced
    got: list[SpanRecord] = []
    with_collector = Collector(got.extend).start()
    try:
        reset_connections(with_collector.url, "/v1/traces")  # a killed process's exporter, mid-body or idle
        assert post(spans[:2], with_collector.url) == 200
    finally:
        with_collector.close()
    assert got == list(spans[:2])  # the vanished senders left nothing half-read behind
    assert capfd.readouterr().err == ""  # no socketserver traceback in a learner's cell


# ---- a traced server in a process of its own -----------------------------------------------------


def test_a_traced_server_sends_its_spans_and_records_a_call_id_its_client_names(tmp_path):
    """Over stdio, through `tracing.serve`: the server's `tools/call` span arrives over OTLP, a child of
    the client's span through `_meta.traceparent`; a `_meta` that names the call id (Claude Code's
    `claudecode/toolUseId`) lands on that span as `gen_ai.tool.call.id`."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    with tracing.recording() as trace:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "course_lib.tracing.serve", trace.endpoint, "files-server", "course_lib.fs_server",
            "--root", str(workspace_dir())])  # fmt: skip

        async def main() -> None:
            with (tmp_path / "stderr").open("w") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    await client.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 2},
                                           meta={"claudecode/toolUseId": "toolu_named_in_meta"})

        anyio.run(main)
        assert trace.wait_for(2, service="files-server")
    server = next(s for s in trace.spans if s.service == "files-server" and s.get("mcp.method.name") == "tools/call")
    client = next(s for s in trace.spans if s.service == "course" and s.get("mcp.method.name") == "tools/call")
    assert server.kind == "SERVER" and server.name == "tools/call read_text_file"
    assert server.parent_id == client.span_id and server.trace_id == client.trace_id  # joined through _meta
    assert server.get("jsonrpc.request.id") == client.get("jsonrpc.request.id")
    assert server.get("gen_ai.tool.call.id") == "toolu_named_in_meta"
    assert tracing.links(trace.spans) == {"toolu_named_in_meta": server.get("jsonrpc.request.id")}


def test_the_server_wrapper_refuses_an_endpoint_off_this_machine_and_says_how_to_use_it():
    usage = subprocess.run([sys.executable, "-m", "course_lib.tracing.serve"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage:" in usage.stderr
    away = subprocess.run([sys.executable, "-m", "course_lib.tracing.serve", "http://example.com:4318", "x",
                           "course_lib.fs_server"], capture_output=True, text=True)  # fmt: skip
    assert away.returncode == 2 and "spans stay on this machine" in away.stderr and "Traceback" not in away.stderr


def test_the_mcp_sdk_surfaces_the_course_relies_on_are_there():
    """What tracing.serve and the course's servers lean on: mcp 2.x servers carry their OpenTelemetry
    middleware in `Server.middleware` (public, documented), and the client injects `traceparent`."""
    from mcp.server import Server
    from mcp.server._otel import OpenTelemetryMiddleware  # noqa: F401 - fails loudly if it moves
    from mcp.shared import jsonrpc_dispatcher

    assert any(type(m).__name__ == "OpenTelemetryMiddleware" for m in Server("x").middleware)
    assert "inject_trace_context" in jsonrpc_dispatcher.__dict__
