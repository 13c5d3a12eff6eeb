"""A trace viewer learners use, on this machine: Arize Phoenix, started by the project.

    with Phoenix() as phoenix:             # `phoenix serve` from build/phoenix-venv, on 127.0.0.1
        phoenix.send(trace.spans)          # the recording's spans, as OTLP, into project "course"
        phoenix.url                        # open it in a browser: Projects → course → the traces

Phoenix (PyPI `arize-phoenix`) runs in a venv of its own (`frameworks.venvs`: it brings its own web
server, database layer and data stack); the course's venv only sends it spans, over OTLP/HTTP, the
protocol any OpenTelemetry backend reads. Where things go, all on this machine:

- the server listens on 127.0.0.1 only (`PHOENIX_HOST`), on free ports (HTTP and gRPC);
- it stores what it receives in a SQLite file under its working folder (`PHOENIX_WORKING_DIR`,
  `build/phoenix/` by default, or the folder you pass): delete the folder to forget every trace;
- its own outside traffic is off: no usage pixels (`PHOENIX_TELEMETRY_ENABLED=false`) and no web fonts
  or downloads (`PHOENIX_ALLOW_EXTERNAL_RESOURCES=false`).

`python -m course_lib.tracing.viewer` (or `make traces`) starts it on port 6006 and keeps it running.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from course_lib.frameworks import venvs
from course_lib.lang import say
from course_lib.tracing.otlp import post
from course_lib.tracing.records import SpanRecord

PROJECT = "course"
_START_TIMEOUT = 180.0  # seconds: Phoenix's first start creates its database (migrations) on a busy machine


class ViewerFailed(RuntimeError):
    """Phoenix did not start; the message holds what it printed."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Phoenix:
    """Phoenix's server, started from its venv on 127.0.0.1 (see the module docstring)."""

    def __init__(self, working_dir: Path | None = None, *, port: int | None = None) -> None:
        self.working_dir = Path(working_dir or venvs.repo_dir() / "build" / "phoenix").resolve()
        self.port = port or _free_port()
        self._process: subprocess.Popen | None = None
        self._log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = _START_TIMEOUT) -> Phoenix:
        """Build the venv if needed, start `phoenix serve`, and wait until it answers.

        Raises:
            venvs.VenvFailed: the venv could not be built.
            ViewerFailed: the server did not answer in time, or exited.
        """
        phoenix = venvs.ensure("phoenix") / "bin" / "phoenix"
        self.working_dir.mkdir(parents=True, exist_ok=True)
        env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if key in os.environ} | {
            "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(self.port), "PHOENIX_GRPC_PORT": str(_free_port()),
            "PHOENIX_WORKING_DIR": str(self.working_dir), "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false"}  # fmt: skip
        self._log = Path(tempfile.mkstemp(prefix="phoenix-", suffix=".log")[1])
        with self._log.open("wb") as sink:
            self._process = subprocess.Popen([str(phoenix), "serve"], env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                             stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=5) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        printed = self._log.read_text(encoding="utf-8", errors="replace")[-3000:]
        self.close()
        raise ViewerFailed(say("Phoenix did not start (exit status {code}); it printed:", "Phoenix 没有启动（退出状态 {code}）；它输出了：",
                               code=None if self._process is None else self._process.poll()) + "\n" + printed)

    def send(self, spans: Sequence[SpanRecord], *, project: str = PROJECT) -> int:
        """Send `spans` to Phoenix (OTLP/HTTP protobuf) under `project`; the HTTP status (200: taken).

        Raises:
            OSError: Phoenix did not answer.
        """
        return post(spans, self.url, protobuf=True, resource={"openinference.project.name": project})

    def span_names(self, *, project: str = PROJECT, limit: int = 1000) -> list[str]:
        """The names of the spans Phoenix holds in `project` (its REST API), [] if it holds none yet.

        Raises:
            OSError: Phoenix did not answer.
        """
        import json

        try:
            with urllib.request.urlopen(f"{self.url}/v1/projects/{project}/spans?limit={limit}", timeout=10) as answer:
                return [span.get("name", "") for span in json.loads(answer.read()).get("data", [])]
        except urllib.error.HTTPError as error:
            error.close()
            if error.code == 404:  # no such project yet: Phoenix files spans as it reads them
                return []
            raise

    def wait_for(self, count: int, *, project: str = PROJECT, timeout: float = 60.0) -> bool:
        """Wait until Phoenix holds at least `count` spans in `project` (it ingests in the background)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.span_names(project=project)) >= count:
                return True
            time.sleep(0.5)
        return False

    def close(self) -> None:
        """Stop the server (its data stays in `working_dir`)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._log is not None:
            self._log.unlink(missing_ok=True)
            self._log = None

    def __enter__(self) -> Phoenix:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> int:
    """`python -m course_lib.tracing.viewer [--port N] [--dir FOLDER]`: run Phoenix until Ctrl-C."""
    args = list(sys.argv[1:] if argv is None else argv)
    port = int(args[args.index("--port") + 1]) if "--port" in args else 6006
    folder = Path(args[args.index("--dir") + 1]) if "--dir" in args else None
    phoenix = Phoenix(folder, port=port)
    try:
        phoenix.start()
    except (venvs.VenvFailed, ViewerFailed) as error:
        print(error, file=sys.stderr)
        return 1
    print(say("Phoenix on {url} (this machine only); traces are kept in {dir}. Ctrl-C stops it.",
              "Phoenix 运行在 {url}（只在本机）；轨迹保存在 {dir}。按 Ctrl-C 停止。", url=phoenix.url, dir=phoenix.working_dir))
    try:
        while phoenix._process is not None and phoenix._process.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        phoenix.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
