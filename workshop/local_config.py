# The workshop hub on this machine (tests/test_hub.py, benchmarks/workshop.py, `make hub`): the one
# config, jupyterhub_config.py, plus what only a run here needs. Like TLJH and z2jh, this file
# brings the spawner and the hub's own plumbing; it changes nothing a learner meets.
#
# Learners are not Unix users here: SimpleLocalProcessSpawner runs each learner's server as this
# user, with a home of its own under WORKSHOP_STATE/homes/<name>. That gives no isolation between
# learners (JupyterHub says: testing only), which is why TLJH (systemd units per Unix user) and
# Kubernetes (a pod per learner) are what a real room runs.
#
#   WORKSHOP_STATE  a folder for the homes, the hub's database, cookie secret and proxy pid (required)
#   WORKSHOP_PORT   the public port, on 127.0.0.1 (default 8000); the hub and the proxy's API use the
#                   next two ports unless WORKSHOP_HUB_PORT / WORKSHOP_PROXY_API_PORT say otherwise
import os
import sys

here = os.path.dirname(os.path.realpath(__file__))
state = os.path.abspath(os.environ["WORKSHOP_STATE"])
port = int(os.environ.get("WORKSHOP_PORT", "8000"))
homes = os.path.join(state, "homes")
os.environ.setdefault("WORKSHOP_ROOM_DB", os.path.join(state, "room.sqlite3"))
# TLJH and the Kubernetes chart run their own idle culler (tljh.sh and config.yaml give it the one
# config's figures); this machine has none: the one config adds it.
os.environ.setdefault("WORKSHOP_CULLER", "on")

load_subconfig(os.path.join(here, "jupyterhub_config.py"))  # noqa: F821 — given by traitlets' loader

c.JupyterHub.bind_url = f"http://127.0.0.1:{port}"  # noqa: F821
c.JupyterHub.hub_ip = "127.0.0.1"  # noqa: F821
c.JupyterHub.hub_port = int(os.environ.get("WORKSHOP_HUB_PORT", port + 1))  # noqa: F821
c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")  # noqa: F821
c.JupyterHub.cookie_secret_file = os.path.join(state, "jupyterhub_cookie_secret")  # noqa: F821
# The proxy is the pinned configurable-http-proxy from tests/node (`make node-tools`).
c.ConfigurableHTTPProxy.command = [os.path.join(here, "..", "tests", "node", "node_modules", ".bin",  # noqa: F821
                                                "configurable-http-proxy")]  # fmt: skip
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('WORKSHOP_PROXY_API_PORT', port + 2)}"  # noqa: F821
c.ConfigurableHTTPProxy.pid_file = os.path.join(state, "proxy.pid")  # noqa: F821

c.JupyterHub.spawner_class = "simple"  # noqa: F821 — SimpleLocalProcessSpawner
c.SimpleLocalProcessSpawner.home_dir_template = os.path.join(homes, "{username}")  # noqa: F821
# This Python's single-user server: the course is installed in this environment (`make hub`).
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]  # noqa: F821
c.Spawner.ip = "127.0.0.1"  # noqa: F821
# Jupyter refuses to start as root (a CI container, a VM's root shell) unless told it is meant.
c.Spawner.args = list(c.Spawner.args) + (["--allow-root"] if os.geteuid() == 0 else [])  # noqa: F821
