"""Tracing on for one block, off everywhere else; every span kept on this machine.

    from course_lib import tracing

    with tracing.recording() as trace:        # spans are made only inside the block
        run_loop(client, host, task)
    trace.spans                               # [SpanRecord, …]: this process's and other processes'
    trace.endpoint                            # http://127.0.0.1:PORT: where other processes send theirs

OpenTelemetry has one global tracer provider per process, set once; libraries ask it for their
tracer when they import (`mcp` does: its client makes a span for every request it sends and puts
the trace context in the request's `_meta`). The course installs its provider the first time a
recording starts, and that provider is a switch: while no recording runs, every tracer it hands out
makes the API's invalid no-op span, exactly what an uninstrumented process makes, so nothing is
recorded and no `traceparent` is put in any `_meta`; while one runs, the OpenTelemetry SDK makes real
spans and each one, when it ends, is kept in the recording's list. Tracing is therefore off until a
learner asks for it, and off again after the block.

Where the spans go: into `trace.spans`, a list in this Python process's memory. Spans of other
processes (a files server over stdio, a framework in Node or in a venv of its own) reach the same
list over OTLP/HTTP, sent to `trace.endpoint`, a receiver on 127.0.0.1 inside this process
(`collector`). Nothing is written to disk and nothing leaves the machine unless the learner sends the
spans to a viewer (`viewer.Phoenix`, also on 127.0.0.1, storing them in a folder of the project).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

from course_lib.tracing.records import SpanRecord, from_sdk

SERVICE = "course"  # this process's `service.name`: spans of other processes carry their own

_LOCK = threading.Lock()
_ACTIVE: list[Recording] = []
_INSTALLED: SdkTracerProvider | None = None


class Recording:
    """The spans of one `recording()` block, in the order they ended (`spans`), and the OTLP endpoint
    other processes send theirs to (`endpoint`, started on first use)."""

    def __init__(self) -> None:
        self.spans: list[SpanRecord] = []
        self._lock = threading.Lock()
        self._collector: Any = None

    def add(self, records: Sequence[SpanRecord]) -> None:
        with self._lock:
            self.spans.extend(records)

    @property
    def endpoint(self) -> str:
        """The base URL of this recording's OTLP/HTTP receiver (`…/v1/traces` takes the spans)."""
        if self._collector is None:
            from course_lib.tracing.collector import Collector

            self._collector = Collector(self.add).start()
        return self._collector.url

    def wait_for(self, count: int = 1, *, service: str | None = None, timeout: float = 10.0) -> bool:
        """Wait until at least `count` spans (of `service`, if given) are in; True if they came.

        Another process sends its spans when they end or when it exits; a test or a cell that reads
        them at once may wait for them here.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                found = sum(1 for s in self.spans if service is None or s.service == service)
            if found >= count:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        if self._collector is not None:
            self._collector.close()
            self._collector = None


@contextmanager
def recording() -> Iterator[Recording]:
    """Record every span this process and the processes it points at `endpoint` make inside the block.

    Recordings may nest; each keeps every span that ends while it is open.
    """
    install()
    kept = Recording()
    with _LOCK:
        _ACTIVE.append(kept)
    try:
        yield kept
    finally:
        with _LOCK:
            _ACTIVE.remove(kept)
        kept.close()


def active() -> bool:
    """True while a recording runs (spans are being made)."""
    return bool(_ACTIVE)


class _Keep(SpanProcessor):
    """Hands each ended span, as a `SpanRecord`, to every recording open at that moment."""

    def on_end(self, span: ReadableSpan) -> None:
        with _LOCK:
            open_now = list(_ACTIVE)
        if open_now:
            record = from_sdk(span)
            for kept in open_now:
                kept.add([record])


class _SwitchTracer(trace_api.Tracer):
    """The SDK's tracer while a recording runs, the API's no-op tracer otherwise."""

    def __init__(self, real: trace_api.Tracer) -> None:
        self._real = real
        self._off = trace_api.NoOpTracer()

    def _now(self) -> trace_api.Tracer:
        return self._real if _ACTIVE else self._off

    def start_span(self, *args: Any, **kwargs: Any) -> trace_api.Span:
        return self._now().start_span(*args, **kwargs)

    @contextmanager
    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Iterator[trace_api.Span]:
        with self._now().start_as_current_span(*args, **kwargs) as span:
            yield span


class _SwitchProvider(trace_api.TracerProvider):
    """The global provider the course installs: its tracers make spans only while a recording runs."""

    def __init__(self, sdk: SdkTracerProvider) -> None:
        self.sdk = sdk

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace_api.Tracer:
        return _SwitchTracer(self.sdk.get_tracer(*args, **kwargs))


def install() -> SdkTracerProvider:
    """Install the course's switch as the global tracer provider (once); the SDK provider behind it.

    If the program already set a global SDK provider of its own, the course adds its span keeper to
    that one instead: spans are then made as that program decided, and recordings keep them too.
    """
    global _INSTALLED
    with _LOCK:
        if _INSTALLED is not None:
            return _INSTALLED
        current = trace_api.get_tracer_provider()
        if isinstance(current, SdkTracerProvider):
            current.add_span_processor(_Keep())
            _INSTALLED = current
            return current
        if isinstance(current, _SwitchProvider):
            _INSTALLED = current.sdk
            return current.sdk
        sdk = SdkTracerProvider(resource=Resource.create({"service.name": SERVICE}))
        sdk.add_span_processor(_Keep())
        trace_api.set_tracer_provider(_SwitchProvider(sdk))
        _INSTALLED = sdk
        return sdk
