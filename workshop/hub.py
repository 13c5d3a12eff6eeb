"""The workshop hub on this machine: `make hub` for an instructor to try, and the same hub for the
tests and the benchmark (`LocalHub`).

    python -m workshop.hub [--port 8000] [--state build/workshop]

starts JupyterHub with workshop/local_config.py (the one workshop config + a local spawner) on
http://127.0.0.1:PORT, prints where the passwords are and one line per learner who logs in. The
passwords are made on the first run and kept in STATE/passwords.env (mode 0600, never in git:
build/ is ignored); a file without both passwords (8+ and 32+ characters) is refused in one line
before anything starts. The learners' homes are STATE/homes/<name>.

It never leaves anything running: Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) stop
the hub, which stops its proxy, services and every learner's server; whatever of those is still
there after that (a hub that hung, a process it lost) is stopped by the launcher itself, which is
their subreaper on Linux (orphans come back to it) and asks the kernel to stop the hub if the
launcher itself is killed (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import argparse
import ctypes
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
    """The hub could not start (the message says why: a password missing, or the end of its log)."""


PASSWORD_RULES = (("WORKSHOP_PASSWORD", 8, "the learners' password"), ("WORKSHOP_ADMIN_PASSWORD", 32, "the admin password"))


def password_problem(settings: dict[str, str], file: Path) -> str | None:
    """One line saying what is wrong with the passwords file's settings, or None."""
    for name, least, what in PASSWORD_RULES:
        if len(settings.get(name, "")) < least:
            return (f"workshop hub not started: {file} has no {name} ({what}, {least}+ characters); add it, or "
                    f"delete the file to have both made")  # fmt: skip
    if settings["WORKSHOP_PASSWORD"] == settings["WORKSHOP_ADMIN_PASSWORD"]:
        return f"workshop hub not started: {file}: the admin password must differ from the learners'"
    return None


_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36


def _prctl(option: int, value: int) -> bool:
    """Linux's prctl(2); False where there is none."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _die_with_parent() -> None:  # in the hub's process, between fork and exec
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _started(pid: int) -> str | None:
    """A process's start time (field 22 of /proc/PID/stat): with its pid, it names one process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def descendants(root: int) -> list[tuple[int, str]]:
    """Every process under `root` (children, their children...), as (pid, start time); [] without /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*") if Path("/proc/self/stat").exists() else ():
        try:
            parent = int(entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        started = _started(pid)
        if started is not None:
            found.append((pid, started))
            todo += parents.get(pid, [])
    return found


def _alive(processes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(pid, started) for pid, started in processes if _started(pid) == started and not _zombie(pid)]


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _reap() -> None:
    """Collect the exit status of any child that ended (orphans adopted as subreaper included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


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
                 env: dict[str, str] | None = None, on_login=None, die_with_parent: bool = False) -> None:  # fmt: skip
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
        self._die_with_parent = die_with_parent  # only where the starting thread lives as long as the hub
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
            HubError: a password is missing from the passwords file, the proxy is not installed, or
                the hub exited or did not answer in `timeout` s.
        """
        problem = password_problem(self.passwords, self.passwords_file)
        if problem:
            raise HubError(problem)
        if not PROXY.exists():
            raise HubError(f"configurable-http-proxy is not installed in tests/node: run `make node-tools` ({PROXY})")
        (self.state / "homes").mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "jupyterhub", "-f", str(HERE / "local_config.py")]
        self._process = subprocess.Popen(command, cwd=self.state, env=self.env, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                         preexec_fn=_die_with_parent if self._die_with_parent else None)  # fmt: skip
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
        """Stop the hub: it stops the proxy, the services and every learner's server (cleanup_servers).
        Whatever of them is still running `timeout` s later, or after the hub ended, is stopped here:
        SIGTERM, then SIGKILL 5 s later."""
        process, self._process = self._process, None
        if process is None:
            return
        family = descendants(process.pid)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                family += descendants(process.pid)
                process.kill()
                process.wait(timeout=10)
        family += descendants(os.getpid())  # orphans, where this process is their subreaper
        left = [p for p in _alive(family) if p[0] != os.getpid()]
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            for pid, _ in left:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + grace
            while (left := _alive(left)) and time.monotonic() < deadline:
                _reap()
                time.sleep(0.1)
            if not left:
                break
        _reap()
        if self._reader:
            self._reader.join(5)

    def __enter__(self) -> LocalHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Stop(Exception):
    """A signal that means: stop everything and exit."""


def _stop_on(signum: int, frame: object) -> None:
    raise _Stop(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workshop.hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--state", type=Path, default=REPO / "build" / "workshop")
    options = parser.parse_args(argv)
    hub = LocalHub(options.state, port=options.port, die_with_parent=True,
                   on_login=lambda name: print(f"logged in: {name}", flush=True))  # fmt: skip
    problem = password_problem(hub.passwords, hub.passwords_file)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # what the hub leaves behind comes back to this process
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop_on)
    why = "Ctrl-C"
    try:
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
        while hub._process is not None and hub._process.poll() is None:
            time.sleep(0.5)
        why = "the hub exited"
    except KeyboardInterrupt:
        pass
    except _Stop as stop:
        why = str(stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a second signal must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        hub.stop()
    try:
        print(f"Stopped ({why}): the hub, its proxy, services and learners' servers.", flush=True)
    except OSError:  # the terminal is gone (SIGHUP): nobody to tell
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
