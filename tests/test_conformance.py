"""The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in tests/node)
against both course servers over Streamable HTTP, and against the course's host as a client.

The suite needs Node >= 22; it runs on the project-local Node from the npm package `node`
(tests/node), never the system's. Which scenarios apply is decided here, with the reason for
every one that does not, and the suite's own list is compared with ours so that a suite upgrade
with new scenarios fails until someone decides about them.
"""

import json
import re
import subprocess
import sys

import pytest

from course_lib.fs_server import Workspace, build_server
from course_lib.http_transport import serving
from course_lib.node_tools import conformance_command
from course_lib.notes_server import build_notes_server
from course_lib.paths import workspace_dir

SERVER_SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection", "server-sse-multiple-streams"]
CLIENT_SCENARIOS = ["initialize", "tools_call"]

_SUITE_FIXTURE = "needs the suite's own fixture server: tools, resources or prompts our servers do not have"
NOT_APPLICABLE_SERVER = {
    **{name: _SUITE_FIXTURE for name in [
        "tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
        "tools-call-mixed-content", "tools-call-with-logging", "tools-call-error", "tools-call-with-progress",
        "tools-call-sampling", "tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums", "resources-list", "resources-read-text", "resources-read-binary",
        "resources-templates-read", "resources-subscribe", "resources-unsubscribe", "prompts-list",
        "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image"]},
    "logging-set-level": "our servers declare no logging capability (logging is deprecated in 2026-07-28)",
    "completion-complete": "our servers declare no completions capability (no prompts or resource templates)",
    "server-sse-polling": "needs a tool that closes its SSE stream mid-call and an event store for resumption; "
                          "our tools answer at once and the servers keep no event store",
}
NOT_APPLICABLE_CLIENT = {
    "elicitation-sep1034-client-defaults": "the course's host declares no elicitation capability",
}
# auth/* client scenarios: the full OAuth flow (discovery, registration, PKCE) belongs to the SDK's
# OAuthClientProvider; the course's host takes an operator-issued bearer token and runs no flow.


def run_suite(*args: str) -> tuple[int, list[dict], str]:
    done = subprocess.run([*conformance_command(), *args, "--verbose"], capture_output=True, text=True, timeout=180)
    output = done.stdout
    start = re.search(r"^\[$", output, re.M)  # the checks, as a JSON array (--verbose)
    checks, _ = json.JSONDecoder().raw_decode(output[start.start():]) if start else ([], 0)
    return done.returncode, checks, output + done.stderr


@pytest.fixture(scope="module", params=["files", "notes"])
def server_url(request, node_tools):
    server = build_server(Workspace(workspace_dir())) if request.param == "files" else build_notes_server()
    with serving(server) as srv:
        yield srv.url


@pytest.mark.parametrize("scenario", SERVER_SCENARIOS)
def test_server_scenario_passes(server_url, scenario):
    code, checks, output = run_suite("server", "--url", server_url, "--scenario", scenario)
    assert checks, output
    failed = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    assert code == 0 and not failed, output


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
def test_client_scenario_passes_for_the_course_host(scenario, node_tools):
    command = f"{sys.executable} -m course_lib.conformance_client"
    code, checks, output = run_suite("client", "--command", command, "--scenario", scenario)
    assert any(c["status"] == "SUCCESS" for c in checks), output
    failed = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    assert code == 0 and not failed, output


def test_the_host_reconnects_when_a_server_closes_a_tools_sse_stream(node_tools):
    """sse-retry (SEP-1699): the SDK's client under the host resumes with Last-Event-ID after `retry` ms.

    Its timing check says WARNING when the reconnect is a little late, which a loaded CI machine
    can cause; anything FAILURE fails here.
    """
    command = f"{sys.executable} -m course_lib.conformance_client"
    _, checks, output = run_suite("client", "--command", command, "--scenario", "sse-retry")
    statuses = {c["id"]: c["status"] for c in checks}
    assert statuses.get("client-sse-graceful-reconnect") == "SUCCESS", output
    assert statuses.get("client-sse-last-event-id") == "SUCCESS", output
    assert statuses.get("client-sse-retry-timing") in ("SUCCESS", "WARNING"), output


def test_every_scenario_of_the_pinned_suite_is_either_run_or_explained(node_tools):
    done = subprocess.run([*conformance_command(), "list"], capture_output=True, text=True, timeout=60)
    server_part, _, client_part = done.stdout.partition("Client scenarios")
    listed = lambda part: {line.split()[1] for line in part.splitlines() if line.strip().startswith("- ")}  # noqa: E731
    assert listed(server_part) == set(SERVER_SCENARIOS) | set(NOT_APPLICABLE_SERVER)
    client = {name for name in listed(client_part) if not name.startswith("auth/")}
    assert client == set(CLIENT_SCENARIOS) | {"sse-retry"} | set(NOT_APPLICABLE_CLIENT)


def test_a_scenario_our_server_cannot_pass_really_fails(server_url):
    """The harness above can tell a failure from a pass (the suite's tool is not ours)."""
    code, checks, _ = run_suite("server", "--url", server_url, "--scenario", "tools-call-simple-text")
    assert code != 0 and checks[0]["status"] == "FAILURE"
