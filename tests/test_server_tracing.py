"""The course's servers drop the SDK's per-message OpenTelemetry span unless asked to keep it."""

from __future__ import annotations

import pytest
from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware  # the SDK's own default, to pin what we drop

from course_lib.fs_server import Workspace, build_server
from course_lib.notes_server import build_notes_server
from course_lib.paths import workspace_dir


def test_the_sdk_still_traces_every_message_by_default():
    """If this fails, mcp changed its default: `without_tracing` and benchmarks/README.md are stale."""
    assert [type(m) for m in Server("x").middleware] == [OpenTelemetryMiddleware]


@pytest.mark.parametrize("build", [lambda: build_server(Workspace(workspace_dir())), lambda: build_notes_server()])
def test_our_servers_export_nothing_and_skip_the_span(build, monkeypatch):
    monkeypatch.delenv("COURSE_OTEL", raising=False)
    assert build().middleware == []
    monkeypatch.setenv("COURSE_OTEL", "1")
    assert [type(m) for m in build().middleware] == [OpenTelemetryMiddleware]
