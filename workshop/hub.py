"""The workshop hub on this machine: `make hub` for an instructor to try, and the same hub for the
tests and the benchmark (`LocalHub`).

    python -m workshop.hub [--port 8000] [--state build/workshop]

starts JupyterHub with workshop/local_config.py (the one workshop config + a local spawner) on
http://127.0.0.1:PORT, prints where the passwords are and one line per learner who logs in, and
stops the hub and every learner's server on Ctrl-C. The passwords are made on the first run and
kept in STATE/passwords.env (mode 0600, never in git: build/ is ignored); the learners' homes are
STATE/homes/<name>.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROXY = REPO / "tests" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
LOGGED_IN = re.compile(r"User logged in: (\S+)")


class HubError(RuntimeError):
    """The hub could not start (the message has the end of its log)."""


def write_passwords(path: Path, *, admin: str = "instructor") -> dict[str, str]:
    """Make the passwords file if it is not there; return its settings. A learner password is short
    enough to write on a board; the admin one is long (JupyterHub asks 32 characters or more)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        words = {"WORKSHOP_PASSWORD": "-".join(secrets.token_hex(2) for _ in range(3)),
                 "WORKSHOP_ADMIN_PASSWORD": secrets.token_urlsafe(30), "WORKSHOP_ADMINS": admin}  # fmt: skip
        path.touch(mode=0o600)
        path.write_text("".join(f"{k}={v}\n" for k, v in words.items()), encoding="utf-8")
    settings = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep:
            settings[name.strip()] = value.strip()
    return settings


class LocalHub:
    """JupyterHub with the workshop config on 127.0.0.1, as a context manager.

    `env` adds to the hub's environment (WORKSHOP_* settings: WORKSHOP_COURSE_REPO for a local
    clone, WORKSHOP_EDITION, ...). The hub's output goes to STATE/hub.log; `logins` are the names
    JupyterHub logged in so far, in order.
    """

    def __init__(self, state: Path, *, port: int = 8000, ports: tuple[int, int, int] | None = None,
                 env: dict[str, str] | None = None, on_login=None) -> None:  # fmt: skip
        self.state = Path(state).resolve()
        self.port = port
        hub_port, api_port, room_port = ports or (port + 1, port + 2, port + 3)
        self.passwords_file = self.state / "passwords.env"
        self.passwords = write_passwords(self.passwords_file)
        self.env = {**os.environ, **(env or {}), "WORKSHOP_STATE": str(self.state), "WORKSHOP_PORT": str(port),
                    "WORKSHOP_HUB_PORT": str(hub_port), "WORKSHOP_PROXY_API_PORT": str(api_port),
                    "WORKSHOP_ROOM_PORT": str(room_port), "WORKSHOP_PASSWORD_FILE": str(self.passwords_file),
                    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
        for name in ("WORKSHOP_PASSWORD", "WORKSHOP_ADMIN_PASSWORD", "WORKSHOP_ADMINS"):
            self.env.pop(name, None)  # the passwords file is the one source here
        self.url = f"http://127.0.0.1:{port}"
        self.log = self.state / "hub.log"
        self.logins: list[str] = []
        self._on_login = on_login
        self._process: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None

    @property
    def password(self) -> str:
        return self.passwords["WORKSHOP_PASSWORD"]

    @property
    def admin(self) -> tuple[str, str]:
        return self.passwords["WORKSHOP_ADMINS"].split(",")[0].strip(), self.passwords["WORKSHOP_ADMIN_PASSWORD"]

    def start(self, timeout: float = 90) -> LocalHub:
        """Start the hub and wait until it answers.

        Raises:
            HubError: the proxy is not installed, or the hub exited or did not answer in `timeout` s.
        """
        if not PROXY.exists():
            raise HubError(f"configurable-http-proxy is not installed in tests/node: run `make node-tools` ({PROXY})")
        (self.state / "homes").mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "jupyterhub", "-f", str(HERE / "local_config.py")]
        self._process = subprocess.Popen(command, cwd=self.state, env=self.env, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                self._reader.join(5)
                raise HubError(f"the hub exited with {self._process.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/api/", timeout=5) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise HubError(f"the hub did not answer within {timeout:.0f} s:\n{self.tail()}")
            time.sleep(0.3)

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        with self.log.open("a", encoding="utf-8") as log:
            for line in self._process.stdout:
                log.write(line)
                log.flush()
                if found := LOGGED_IN.search(line):
                    self.logins.append(found[1])
                    if self._on_login:
                        self._on_login(found[1])

    def tail(self, characters: int = 4000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-characters:] if self.log.exists() else ""

    def stop(self, timeout: float = 30) -> None:
        """Stop the hub; it stops the proxy, the services and every learner's server (cleanup_servers)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the hub's own process group: its proxy and servers
            process.wait(timeout=10)
        if self._reader:
            self._reader.join(5)

    def __enter__(self) -> LocalHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workshop.hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--state", type=Path, default=REPO / "build" / "workshop")
    options = parser.parse_args(argv)
    hub = LocalHub(options.state, port=options.port,
                   on_login=lambda name: print(f"logged in: {name}", flush=True))  # fmt: skip
    try:
        hub.start()
    except HubError as error:
        print(error, file=sys.stderr)
        return 1
    name, _ = hub.admin
    print(f"Workshop hub: {hub.url}  (any name + the learners' password)")
    print(f"Passwords: {hub.passwords_file}  (learners: WORKSHOP_PASSWORD; you log in as {name!r} with "
          "WORKSHOP_ADMIN_PASSWORD)")  # fmt: skip
    print(f"Room view: {hub.url}/services/room/  ·  the hub's log: {hub.log}")
    print("Ctrl-C stops the hub and every learner's server.", flush=True)
    try:
        while hub._process is not None and hub._process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        hub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
