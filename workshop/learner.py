"""One learner driven through a workshop hub, as a browser would: the hub's login form, the spawn,
nbgitpuller's pull into their home, a kernel started over REST and every cell run over the kernel
websocket, all through the hub's proxy. Used by tests/test_hub.py and benchmarks/workshop.py.

    learner = Learner("http://127.0.0.1:8000", "ana", password)
    repo = checkout_repo(tmp)  # or the course's public git URL
    learner.log_in(); learner.spawn(); learner.pull(repo)
    cells = learner.run_notebook("tool-calling-course/notebooks/00_map_and_first_run.ipynb")

Authentication is the learner's own cookies (hub, then their server through the hub's OAuth),
with the XSRF token and Referer a JupyterLab page sends; no API token is involved.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

import requests
import websocket


_CHECKOUT = Path(__file__).resolve().parents[1]


def checkout_repo(where: Path) -> str:
    """A git repository at where/course of this checkout's tracked files, as they are in the worktree
    (uncommitted edits included): what nbgitpuller pulls in the tests and the benchmark. Its file:// URL."""
    repo = where / "course"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=_CHECKOUT, capture_output=True, text=True, check=True).stdout
    for name in filter(None, tracked.split("\0")):
        if (_CHECKOUT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(_CHECKOUT / name, repo / name)
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                    ["git", "-c", "user.name=course", "-c", "user.email=course@example.invalid", "commit", "-qm",
                     "the course"]):  # fmt: skip
        subprocess.run(command, cwd=repo, check=True, capture_output=True)
    return repo.as_uri()


class LearnerError(RuntimeError):
    """A step through the hub failed; the message says which and what the hub answered."""


@dataclass
class CellRun:
    """One code cell as it ran in the learner's kernel: nbformat outputs, and when they came."""

    index: int
    outputs: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0  # execute_request sent → kernel idle
    first_output: float | None = None  # execute_request sent → first output message


class Learner:
    def __init__(self, hub: str, name: str, password: str, *, timeout: float = 120) -> None:
        self.hub, self.name, self.password, self.timeout = hub.rstrip("/"), name, password, timeout
        self.server = f"{self.hub}/user/{quote(name)}"
        self.session = requests.Session()
        self.session.headers["Referer"] = f"{self.server}/lab"

    # ---- the hub --------------------------------------------------------------------------------

    def _check(self, response: requests.Response, step: str) -> requests.Response:
        if response.status_code >= 400:
            raise LearnerError(f"{self.name}: {step}: HTTP {response.status_code} {response.text[:300]}")
        return response

    def log_in(self, password: str | None = None) -> requests.Response:
        """The hub's login form, with its XSRF cookie.

        Raises:
            LearnerError: the hub refused the name or the password (its page's message is in it).
        """
        self._check(self.session.get(f"{self.hub}/hub/login", timeout=self.timeout), "login page")
        xsrf = self.session.cookies.get("_xsrf", path="/hub/")
        done = self.session.post(f"{self.hub}/hub/login", allow_redirects=False, timeout=self.timeout,
                                 data={"username": self.name, "password": password or self.password, "_xsrf": xsrf})  # fmt: skip
        if done.status_code != 302:
            raise LearnerError(f"{self.name}: login refused: HTTP {done.status_code} "
                               f"{_login_error(done.text) or done.text[:200]}")  # fmt: skip
        return done

    def _hub_api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"X-XSRFToken": self.session.cookies.get("_xsrf", path="/hub/") or "", "Referer": f"{self.hub}/hub/"}
        return self.session.request(method, f"{self.hub}/hub/api{path}", headers=headers, timeout=self.timeout, **kwargs)

    def spawn(self) -> float:
        """Ask the hub for this learner's server and wait until it is ready; returns the seconds it took.

        Raises:
            LearnerError: the hub refused, or the server was not ready within the timeout.
        """
        started = time.perf_counter()
        answer = self._hub_api("POST", f"/users/{quote(self.name)}/server")
        if answer.status_code not in (201, 202, 400):  # 400: already running
            self._check(answer, "spawn")
        while time.perf_counter() - started < self.timeout:
            model = self._check(self._hub_api("GET", f"/users/{quote(self.name)}"), "server status").json()
            server = (model.get("servers") or {}).get("")
            if server and server.get("ready"):
                return time.perf_counter() - started
            time.sleep(0.2)
        raise LearnerError(f"{self.name}: the server was not ready after {self.timeout:.0f} s")

    def open_server(self, path: str = "/lab") -> requests.Response:
        """A first request to the learner's server: the hub's OAuth sets the server's cookies."""
        return self._check(self.session.get(f"{self.server}{path}", timeout=self.timeout), f"GET {path}")

    # ---- the learner's server -------------------------------------------------------------------

    def _server_headers(self) -> dict[str, str]:
        xsrf = self.session.cookies.get("_xsrf", path=f"/user/{self.name}/") or self.session.cookies.get("_xsrf") or ""
        return {"X-XSRFToken": xsrf}

    def pull(self, repo: str, target: str = "tool-calling-course") -> list[str]:
        """nbgitpuller's API: clone (or update) `repo` into ~/target; returns its progress lines.

        Raises:
            LearnerError: nbgitpuller reported an error (its message is in it).
        """
        self.open_server()
        lines = []
        with self.session.get(f"{self.server}/git-pull/api", params={"repo": repo, "targetpath": target},
                              stream=True, timeout=self.timeout) as answer:  # fmt: skip
            self._check(answer, "git-pull")
            for raw in answer.iter_lines(decode_unicode=True):
                if not raw or not raw.startswith("data:"):
                    continue
                event = json.loads(raw[5:])
                if event.get("phase") == "error":
                    raise LearnerError(f"{self.name}: nbgitpuller: {event.get('message')}\n{event.get('output', '')}")
                lines.append(str(event.get("output", "")).rstrip())
                if event.get("phase") == "finished":
                    return lines
        raise LearnerError(f"{self.name}: nbgitpuller's stream ended before 'finished'")

    def start_kernel(self, notebook: str) -> dict[str, Any]:
        """A session for `notebook` (path under the home) as JupyterLab opens one: the kernel starts
        in the notebook's folder. Returns the session model (with its kernel)."""
        body = {"path": notebook, "name": Path(notebook).name, "type": "notebook", "kernel": {"name": "python3"}}
        answer = self.session.post(f"{self.server}/api/sessions", json=body, headers=self._server_headers(),
                                   timeout=self.timeout)  # fmt: skip
        return self._check(answer, "start a kernel").json()

    def contents(self, path: str) -> dict[str, Any]:
        """A file of the learner's home, through the contents API."""
        return self._check(self.session.get(f"{self.server}/api/contents/{quote(path)}", timeout=self.timeout),
                           f"read {path}").json()  # fmt: skip

    def stop_kernel(self, session: dict[str, Any]) -> None:
        self.session.delete(f"{self.server}/api/sessions/{session['id']}", headers=self._server_headers(),
                            timeout=self.timeout)  # fmt: skip

    def kernel(self, session: dict[str, Any]) -> Kernel:
        """The kernel's websocket, through the hub's proxy, with this learner's cookies."""
        url = urlparse(self.server)
        address = f"ws://{url.netloc}{url.path}/api/kernels/{session['kernel']['id']}/channels?session_id={session['id']}"
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.session.cookies)
        connection = websocket.create_connection(address, timeout=self.timeout, cookie=cookies,
                                                 header=[f"Referer: {self.server}/lab"],
                                                 origin=f"{url.scheme}://{url.netloc}")  # fmt: skip
        return Kernel(connection, session["id"], self.timeout)

    def run_notebook(self, notebook: str, extra: list[str] = ()) -> list[CellRun]:
        """Start a kernel for `notebook` (in the learner's home), run each of its code cells in
        order — then each source in `extra` — and stop the kernel. Returns every cell's outputs."""
        model = self.session.get(f"{self.server}/api/contents/{quote(notebook)}", params={"content": 1},
                                 timeout=self.timeout)  # fmt: skip
        sources = [(i, "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
                   for i, cell in enumerate(self._check(model, f"read {notebook}").json()["content"]["cells"])
                   if cell["cell_type"] == "code"]  # fmt: skip
        sources += [(-1 - n, source) for n, source in enumerate(extra)]
        session = self.start_kernel(notebook)
        try:
            with self.kernel(session) as kernel:
                return [kernel.execute(source, index) for index, source in sources]
        finally:
            self.stop_kernel(session)


class Kernel:
    """A kernel's websocket (Jupyter's JSON messages on one socket, `channel` in each)."""

    def __init__(self, connection: websocket.WebSocket, session_id: str, timeout: float) -> None:
        self.connection, self.session_id, self.timeout = connection, session_id, timeout

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    def execute(self, source: str, index: int = 0) -> CellRun:
        """Run one cell; its outputs in nbformat's shape (what a stored notebook holds).

        Raises:
            LearnerError: no reply within the timeout.
        """
        msg_id = uuid.uuid4().hex
        self.connection.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session_id,
                       "username": "", "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": source, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True},
        }))  # fmt: skip
        run, started = CellRun(index), time.perf_counter()
        idle = replied = False
        while not (idle and replied):
            if time.perf_counter() - started > self.timeout:
                raise LearnerError(f"cell {index}: no reply within {self.timeout:.0f} s")
            message = json.loads(self.connection.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if message["channel"] == "shell" and kind == "execute_reply":
                replied = True
            elif kind == "status":
                idle = content["execution_state"] == "idle"
            elif kind in ("stream", "display_data", "execute_result", "error"):
                if run.first_output is None:
                    run.first_output = time.perf_counter() - started
                run.outputs.append(_output(kind, content))
            elif kind == "clear_output":
                run.outputs.clear()
        run.seconds = time.perf_counter() - started
        return run


def _output(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    if kind == "stream":
        return {"output_type": "stream", "name": content["name"], "text": content["text"]}
    if kind == "error":
        return {"output_type": "error", "ename": content["ename"], "evalue": content["evalue"],
                "traceback": content["traceback"]}  # fmt: skip
    out = {"output_type": kind, "data": content["data"], "metadata": content.get("metadata", {})}
    if kind == "execute_result":
        out["execution_count"] = content.get("execution_count")
    return out


def _login_error(page: str) -> str:
    """The message of the hub's login page (all a learner sees of a refusal)."""
    start = page.find('class="login_error">')
    return page[start + 20: page.find("</p>", start)].strip() if start >= 0 else ""
