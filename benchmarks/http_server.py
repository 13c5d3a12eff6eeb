"""The offline model's HTTP server: latency of one request on a kept-alive connection, before and
after the reply went out in one write (`python -m benchmarks http_server`, or run this module).

Three ways to send the same request (`POST /v1/responses`, a one-line input), interleaved round by
round in a random order, each figure a median:

- *before*: a what-if handler (used only here) that writes the status line and headers, then the
  body, in two writes with Nagle's algorithm on, as the server did before. On a kept-alive
  connection the body waits for the ACK of the headers, and the client delays that ACK (~40 ms);
- *now*: the server as it ships: status line, headers and body in one write, TCP_NODELAY;
- *fresh connection*: a new connection for every request to the server as it ships (the client
  then sends nothing the server waits on), the reference a kept-alive request must beat.

Every server runs in this process on 127.0.0.1, port 0; nothing else is contacted.
"""

from __future__ import annotations

import random
import threading
import time
from contextlib import contextmanager
from typing import Iterator

import httpx

from benchmarks import Row, median, progress
from course_lib.offline_model.server import OfflineModelServer, _Handler

BENCH = "offline HTTP server"
BODY = {"model": "gpt-4.1", "input": "hello"}


class _TwoWrites(_Handler):
    """What-if: the reply as the server sent it before — headers, then body, Nagle on."""

    disable_nagle_algorithm = False

    def _send(self, status, payload, headers=None):  # type: ignore[no-untyped-def]
        import json

        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            if key.lower() not in ("content-length", "connection"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()  # first write: status line and headers
        self.wfile.write(body)  # second write: the body
        self._answered = True


@contextmanager
def _serving(handler: type[_Handler]) -> Iterator[str]:
    server = OfflineModelServer(("127.0.0.1", 0))
    server.RequestHandlerClass = handler
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _timed(send) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    response = send()
    assert response.status_code == 200, response.text
    return time.perf_counter() - start


def run(quick: bool = False) -> list[Row]:
    rounds, per_round = (5, 4) if quick else (30, 10)
    with _serving(_TwoWrites) as before_url, _serving(_Handler) as now_url:
        before = httpx.Client(base_url=before_url)
        now = httpx.Client(base_url=now_url)
        fresh_limits = httpx.Limits(max_keepalive_connections=0)  # a new connection every request
        fresh = httpx.Client(base_url=now_url, limits=fresh_limits)
        sides = {"before": before, "now": now, "fresh": fresh}
        times: dict[str, list[float]] = {name: [] for name in sides}
        try:
            for client in sides.values():  # warm-up: connect, first request
                client.post("/v1/responses", json=BODY)
            for i in range(rounds):
                order = list(sides)
                random.shuffle(order)
                for name in order:
                    times[name] += [_timed(lambda: sides[name].post("/v1/responses", json=BODY)) for _ in range(per_round)]
                if i % 10 == 9:
                    progress(f"{BENCH}: round {i + 1}/{rounds}")
        finally:
            for client in sides.values():
                client.close()
    ms = {name: median(values) * 1e3 for name, values in times.items()}
    note = f"{rounds} interleaved rounds × {per_round} requests per variant, median"
    ratio = ms["now"] / ms["fresh"]
    return [
        Row(BENCH, "kept-alive request, before (headers and body in two writes, Nagle on)", ms["before"], "ms", note=note),
        Row(BENCH, "kept-alive request, now (one write, TCP_NODELAY)", ms["now"], "ms", note=note),
        Row(BENCH, "fresh connection per request, now", ms["fresh"], "ms", note=note),
        Row(BENCH, "kept-alive now ÷ fresh connection", ratio, "×", "≤ 1.00×", ratio <= 1.0,
            "a kept-alive connection should never be slower than opening a new one"),
        Row(BENCH, "before ÷ now, kept-alive", ms["before"] / ms["now"], "×", note="what one write per reply saved"),
    ]


if __name__ == "__main__":
    from benchmarks.__main__ import print_table

    print_table(run())
