"""Streamed vs non-streamed turns: what `stream: true` costs (`python -m benchmarks streaming`).

The same requests to the offline model, sent whole and streamed, interleaved round by round in a
random order, each figure a median:

- *one request, in-process* (the course's own client: `offline_transport`, strict response
  validation): the call request (one `function_call`, ~19 events) and the answer request after
  its `function_call_output` (a 20-line answer, ~400 events); streamed three ways — the SDK's
  events iterated bare, assembled by `course_lib.streaming.StreamAssembler`, and through the SDK's
  own `responses.stream()` helper;
- *one request over HTTP* (`OfflineModelServer` on 127.0.0.1, port 0, kept-alive): the whole
  turn, and for the stream the time to its first event;
- *the whole loop* (`run_loop` vs `streaming.run_streamed`): two model requests and one MCP call
  through the course's host, as notebook 04b runs it.

Nothing leaves the machine: the in-process transport's base URL is `*.invalid`, and the HTTP
server listens on 127.0.0.1 in this process.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import httpx
import openai

from benchmarks import Row, median, progress
from course_lib.course import start_course
from course_lib.loop import execute_call, run_loop
from course_lib.offline_model import offline_transport
from course_lib.offline_model.server import OfflineModelServer
from course_lib.streaming import StreamAssembler, run_streamed

BENCH = "streaming"
TASK = "Show the first 20 lines of /workspace/notes.txt"


def _client(**options) -> openai.OpenAI:  # type: ignore[no-untyped-def]
    return openai.OpenAI(api_key="offline", max_retries=0, _strict_response_validation=True, **options)


def _requests(course) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """The call request and the answer request (after the call's real result), as run_loop sends them."""
    tools = course.host.responses_tools()
    call_request = {"model": "gpt-4.1", "input": [{"role": "user", "content": TASK}], "tools": tools}
    first = course.client.responses.create(**call_request)
    context = [*call_request["input"], *(item.to_dict() for item in first.output),
               execute_call(first.output[0], course.host)[0]]  # fmt: skip
    return call_request, {**call_request, "input": context}


def _variants(client: openai.OpenAI, request: dict) -> dict[str, Callable[[], object]]:
    def whole():
        return client.responses.create(**request)

    def bare():
        return list(client.responses.create(**request, stream=True))

    def assembled():
        assembler = StreamAssembler()
        for event in client.responses.create(**request, stream=True):
            assembler.feed(event)
        return assembler.final()

    def sdk_helper():
        with client.responses.stream(**request) as stream:
            for _ in stream:
                pass
            return stream.get_final_response()

    return {"whole": whole, "bare": bare, "assembled": assembled, "helper": sdk_helper}


def _interleaved(variants: dict[str, Callable[[], object]], rounds: int, per_round: int) -> dict[str, float]:
    """Median ms per call of each variant, rounds interleaved in random order."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for fn in variants.values():
        fn()  # warm-up
    for _ in range(rounds):
        order = list(variants)
        random.shuffle(order)
        for name in order:
            for _ in range(per_round):
                start = time.perf_counter()
                variants[name]()
                times[name].append(time.perf_counter() - start)
    return {name: median(values) * 1e3 for name, values in times.items()}


def _first_event_ms(url: str, request: dict, rounds: int) -> float:
    """Median time from sending a streamed request to holding its first parsed event."""
    with _client(base_url=url) as client:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            with client.responses.create(**request, stream=True) as stream:
                next(iter(stream))
                times.append(time.perf_counter() - start)
                for _ in stream:
                    pass
    return median(times) * 1e3


def run(quick: bool = False) -> list[Row]:
    rounds, per_round = (3, 2) if quick else (15, 5)
    course = start_course(quiet=True)
    rows: list[Row] = []
    try:
        call_request, answer_request = _requests(course)
        inproc = _client(base_url="http://offline-model.invalid/v1", http_client=httpx.Client(transport=offline_transport()))
        events = {label: len(list(inproc.responses.create(**request, stream=True)))
                  for label, request in (("call", call_request), ("answer", answer_request))}  # fmt: skip
        for label, request in (("call", call_request), ("answer", answer_request)):
            ms = _interleaved(_variants(inproc, request), rounds, per_round)
            what = f"{label} request ({events[label]} events), in-process"
            note = f"{rounds} interleaved rounds × {per_round} per variant, median"
            rows += [
                Row(BENCH, f"{what}: whole", ms["whole"], "ms", note=note),
                Row(BENCH, f"{what}: streamed, SDK events iterated", ms["bare"], "ms", note=note),
                Row(BENCH, f"{what}: streamed, StreamAssembler", ms["assembled"], "ms", note=note),
                Row(BENCH, f"{what}: streamed, SDK responses.stream()", ms["helper"], "ms", note=note),
                Row(BENCH, f"{what}: streamed (assembled) ÷ whole", ms["assembled"] / ms["whole"], "×",
                    note="what stream: true costs a turn"),
                Row(BENCH, f"{what}: StreamAssembler ÷ SDK events iterated", ms["assembled"] / ms["bare"], "×",
                    note="the course's assembly on top of the SDK's parsing of each event"),
                Row(BENCH, f"{what}: StreamAssembler ÷ SDK responses.stream()", ms["assembled"] / ms["helper"], "×",
                    "≤ 1.00×", ms["assembled"] / ms["helper"] <= 1.00, "the course's accumulator vs the SDK's own"),
            ]
            progress(f"{BENCH}: {label} request in-process done")
        server = OfflineModelServer(("127.0.0.1", 0))
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        try:
            with _client(base_url=url) as http:
                variants = _variants(http, answer_request)
                ms = _interleaved({"whole": variants["whole"], "assembled": variants["assembled"]}, rounds, per_round)
            first = _first_event_ms(url, answer_request, rounds * per_round)
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
        what = f"answer request ({events['answer']} events) over HTTP"
        rows += [
            Row(BENCH, f"{what}: whole", ms["whole"], "ms"),
            Row(BENCH, f"{what}: streamed, assembled", ms["assembled"], "ms"),
            Row(BENCH, f"{what}: streamed, first event", first, "ms", note="the first piece a chat UI can show"),
        ]
        progress(f"{BENCH}: HTTP done")
        loops = {"whole": lambda: run_loop(course.client, course.host, TASK),
                 "streamed": lambda: run_streamed(course.client, course.host, TASK)}  # fmt: skip
        ms = _interleaved(loops, rounds, max(1, per_round // 2))
        rows += [
            Row(BENCH, "whole loop (2 requests, 1 MCP call): run_loop", ms["whole"], "ms"),
            Row(BENCH, "whole loop: run_streamed", ms["streamed"], "ms"),
            Row(BENCH, "whole loop: run_streamed ÷ run_loop", ms["streamed"] / ms["whole"], "×",
                note="what streaming every request costs a task"),
        ]
    finally:
        course.close()
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import print_table

    print_table(run())
